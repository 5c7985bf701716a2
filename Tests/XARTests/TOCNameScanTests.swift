import Foundation
import SystemIO
import TestSupport
import Testing
import XAR

/// The TOC byte scan that lets a reader know early that no entry has a given name: it may say
/// "may" too often, never "cannot" for a TOC the parser reads into an entry of that name.
@Suite struct TOCNameScanTests {
  static let plain = Array("hello".utf8)

  /// A TOC of a folder `content.pkg` holding one file whose `<name>` element is written `name`
  /// (raw XML, so it can be spelled in any way XML allows).
  static func toc(name: String, declaration: String = #"<?xml version="1.0" encoding="UTF-8"?>"#) -> String {
    """
    \(declaration)
    <xar>
     <toc>
      <checksum style="sha1"><offset>0</offset><size>20</size></checksum>
      <file id="1"><name>content.pkg</name><type>directory</type>
       <file id="2">\(name)<type>file</type>\(CraftedXAR.dataElement(stored: plain, plain: plain, offset: 20))</file>
      </file>
     </toc>
    </xar>
    """
  }

  /// Ways to write the name `Payload` that the parser reads as `Payload`, and other TOCs the
  /// scan must not judge: each must give "may".
  static let spelled: [(String, String)] = [
    ("as it is", toc(name: "<name>Payload</name>")),
    ("a character reference", toc(name: "<name>Pay&#108;oad</name>")),
    ("a hexadecimal reference", toc(name: "<name>&#x50;ayload</name>")),
    ("a CDATA section", toc(name: "<name>Pay<![CDATA[lo]]>ad</name>")),
    ("a comment inside", toc(name: "<name>Pay<!-- x -->load</name>")),
    ("a processing instruction inside", toc(name: "<name>Pay<?x y?>load</name>")),
    ("an element inside", toc(name: "<name>Pay<i/>load</name>")),
    ("an element with text inside", toc(name: "<name>Pa<i>yl</i>oad</name>")),
    ("base64", toc(name: #"<name enctype="base64">UGF5bG9hZA==</name>"#)),
    ("an attribute on name", toc(name: #"<name a=">">Payload</name>"#)),
    ("no declaration", toc(name: "<name>Payload</name>", declaration: "")),
    (
      "ISO-8859-1 declared",
      toc(name: "<name>Payload</name>", declaration: #"<?xml version="1.0" encoding="ISO-8859-1"?>"#)
    ),
  ]

  static func scan(_ xml: String, pieces: Int? = nil) -> TOCNameScan.Verdict {
    var scan = TOCNameScan(name: "Payload")
    let bytes = Array(xml.utf8)
    let size = pieces.map { max(1, bytes.count / $0) } ?? bytes.count
    var i = 0
    while i < bytes.count {
      let piece = Array(bytes[i..<min(bytes.count, i + size)])
      if piece.withUnsafeBytes({ scan.feed($0) }) == .may { return .may }
      i += size
    }
    return scan.finish()
  }

  /// The parser's entries for a TOC (nil when it refuses the TOC).
  static func parsedNames(_ xml: String) throws -> [String]? {
    let dir = try TemporaryDirectory()
    let path = dir.appending("x.xar")
    try CraftedXAR(toc: xml, heap: plain).write(to: path)
    return (try? XARReader(path: path))?.entries.map { $0.path.split(separator: "/").last.map(String.init) ?? "" }
  }

  @Test(arguments: spelled.map(\.0))
  func everySpellingOfTheNameIsMay(label: String) throws {
    let xml = try #require(Self.spelled.first { $0.0 == label }?.1)
    #expect(Self.scan(xml) == .may)
    #expect(Self.scan(xml, pieces: 7) == .may)
    #expect(Self.scan(xml, pieces: xml.utf8.count) == .may)
  }

  /// The spellings the parser accepts do make an entry named Payload: the cases above test
  /// what they claim to.
  @Test func theParserReadsThoseSpellingsAsPayload() throws {
    for (label, xml) in Self.spelled where !["ISO-8859-1 declared", "no declaration"].contains(label) {
      guard let names = try Self.parsedNames(xml) else { continue }
      #expect(names.contains("Payload"), "\(label): \(names)")
    }
    for label in [
      "as it is", "a character reference", "a CDATA section", "a comment inside", "an element inside", "base64",
    ] {
      let xml = try #require(Self.spelled.first { $0.0 == label }?.1)
      #expect(try Self.parsedNames(xml)?.contains("Payload") == true, "\(label)")
    }
  }

  @Test func aTOCWithoutTheNameIsCannotInAnyPieces() throws {
    let xml = Self.toc(name: "<name>readme.txt</name>")
    for pieces in [nil, 2, 3, 7, 50, xml.utf8.count] {
      #expect(Self.scan(xml, pieces: pieces) == .cannot, "\(String(describing: pieces))")
    }
    // Close to the name but not it; `<names>` is another element.
    #expect(Self.scan(Self.toc(name: "<name>Payloa</name>")) == .cannot)
    #expect(Self.scan(Self.toc(name: "<name>PAYLOAD</name>")) == .cannot)
    #expect(Self.scan(Self.toc(name: "<name>x</name><names>y</names>")) == .cannot)
    #expect(Self.scan(Self.toc(name: "<name>a&amp;b</name>")) == .cannot)
    #expect(
      Self.scan(Self.toc(name: "<name>x</name>", declaration: #"<?xml version="1.0" encoding = 'utf-8' ?>"#))
        == .cannot)
  }

  /// A `<name>` cut by the end of the document, or longer than the scan holds, is "may".
  @Test func unfinishedOrHugeNamesAreMay() {
    #expect(Self.scan(#"<?xml version="1.0"?><xar><toc><file><name>abc"#) == .may)
    #expect(Self.scan(#"<?xml version="1.0"?><xar><toc><file><name"#) == .may)
    let long = String(repeating: "a", count: 200_000)
    #expect(Self.scan(Self.toc(name: "<name>\(long)</name>"), pieces: 40) == .may)
  }

  /// Over many random TOCs made of the pieces above, "cannot" never meets a TOC the parser
  /// reads into an entry named Payload.
  @Test func cannotIsNeverWrongOnRandomTOCs() throws {
    let parts = [
      "Pay", "load", "Payload", "&#108;", "<![CDATA[lo]]>", "<!--c-->", "<i/>", "a", "&amp;", "<?p?>", "x.txt",
    ]
    var generator = SystemRandomNumberGenerator()
    var cannot = 0
    for _ in 0..<300 {
      let count = Int.random(in: 1...4, using: &generator)
      let name = (0..<count).map { _ in parts.randomElement(using: &generator)! }.joined()
      let xml = Self.toc(name: "<name>\(name)</name>")
      guard Self.scan(xml, pieces: Int.random(in: 1...9, using: &generator)) == .cannot else { continue }
      cannot += 1
      if let names = try Self.parsedNames(xml) { #expect(!names.contains("Payload"), "\(name)") }
    }
    #expect(cannot > 0)
  }

  /// The reader's scan of a real archive: bsdtar's TOC (the plist last, no Payload) is
  /// "cannot"; one with an entry named Payload is "may".
  @Test func theStreamingReaderScansTheInflatedTOC() throws {
    let dir = try TemporaryDirectory()
    let tree = dir.appending("tree")
    try FileManager.default.createDirectory(atPath: tree + "/Contents/Payload.d", withIntermediateDirectories: true)
    for i in 0..<300 { try Data("file \(i)\n".utf8).write(to: URL(fileURLWithPath: tree + "/Contents/f\(i).txt")) }
    try Data("x".utf8).write(to: URL(fileURLWithPath: tree + "/ContentInfo.plist"))
    let plainPath = dir.appending("plain.xar")
    _ = try bsdtar(["--format", "xar", "-cf", plainPath, "-C", tree, "ContentInfo.plist", "Contents"])
    let plain = try XARStreamingReader(file: try FileDescriptor.open(regularFile: plainPath))
    #expect(plain.tocMayName("Payload", stopWhen: { false }) == true, "Payload.d holds the bytes")
    #expect(plain.tocMayName("Payloads", stopWhen: { false }) == false)
    #expect(plain.tocMayName("Payload.d", stopWhen: { false }) == true)
    #expect(plain.tocMayName("nothing-like-it", stopWhen: { false }) == false)
    #expect(plain.tocMayName("nothing-like-it", stopWhen: { true }) == nil)
    _ = try plain.reader()
  }
}
