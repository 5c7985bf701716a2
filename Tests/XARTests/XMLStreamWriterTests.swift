import Testing
import XML

@testable import XAR

/// The TOC's Swift XML writer makes exactly the bytes libxml2's text writer makes (the writer the
/// TOC was written with before), for random documents: nesting, attributes, empty elements,
/// text with every character either escapes, text before child elements, non-ASCII in text and
/// attributes, NUL (where libxml2's C strings end), and numbers and digests written without
/// strings.
@Suite struct XMLStreamWriterTests {
  @Test(arguments: 0..<20)
  func sameBytesAsLibxml2(_ round: Int) {
    var seed = UInt64(round) &* 0x9E37_79B9_7F4A_7C15 &+ 1
    func pick(_ n: Int) -> Int {
      seed = seed &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
      return Int(seed >> 33) % n
    }
    let pieces = [
      "a", "file", " ", "<", ">", "&", "\"", "'", "\r", "\n", "\t", "é", "e\u{301}", "日本", "🎉", "\u{0}", "x",
      "&amp;", "]]>", "0644", "",
    ]
    func randomText() -> String { (0..<pick(6)).map { _ in pieces[pick(pieces.count)] }.joined() }
    let names = ["xar", "toc", "file", "name", "data", "encoding", "x-y", "a.b"]

    var reference: [UInt8] = []
    let libxml2 = XMLTextWriter { reference += $0 }
    var ours: [UInt8] = []
    var swift = XMLStreamWriter { ours += $0 }
    // One root, open to the end (finishStreaming closes it), as in a TOC.
    libxml2.startElement("xar")
    swift.startElement("xar")
    var depth = 1
    var canAttribute = true
    for _ in 0..<400 {
      switch pick(9) {
      case 0, 1:
        let name = names[pick(names.count)]
        libxml2.startElement(name)
        swift.startElement(name)
        depth += 1
        canAttribute = true
      case 2 where canAttribute:
        let (name, value) = (names[pick(names.count)], randomText())
        libxml2.attribute(name, value)
        swift.attribute(name, value)
      case 3 where depth > 0:
        let text = randomText()
        libxml2.text(text)
        swift.text(text)
        canAttribute = false
      case 4 where depth > 0:
        let (name, text) = (names[pick(names.count)], randomText())
        libxml2.element(name, text)
        swift.element(name, text)
        canAttribute = false
      case 7 where depth > 0:
        // The writer's own forms for numbers and digests, against the strings libxml2 writes.
        let name = names[pick(names.count)]
        let value = [0, 7, 10, 4096, UInt64(pick(1 << 30)) * 4099, UInt64.max][pick(6)]
        libxml2.element(name, String(value))
        swift.element(name, decimal: value)
        canAttribute = false
      case 8 where depth > 0:
        let digest = (0..<pick(33)).map { _ in UInt8(pick(256)) }
        libxml2.text(
          digest.map { String($0, radix: 16).count == 1 ? "0" + String($0, radix: 16) : String($0, radix: 16) }.joined()
        )
        digest.withUnsafeBytes { swift.text(hex: $0) }
        canAttribute = false
      case 5 where depth > 1, 6 where depth > 1:
        libxml2.endElement()
        swift.endElement()
        depth -= 1
        canAttribute = false
      default:
        break
      }
    }
    libxml2.finishStreaming()
    swift.finishStreaming()
    #expect(!ours.isEmpty)
    let first =
      (0..<min(ours.count, reference.count)).first { ours[$0] != reference[$0] } ?? min(ours.count, reference.count)
    func around(_ bytes: [UInt8]) -> String {
      String(decoding: bytes[max(0, first - 80)..<min(bytes.count, first + 40)], as: UTF8.self)
    }
    #expect(ours == reference, "first difference at \(first):\n\(around(ours))\n--- libxml2:\n\(around(reference))")
  }
}
