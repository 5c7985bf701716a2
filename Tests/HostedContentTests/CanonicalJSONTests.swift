import Foundation
import TestSupport
import Testing

@testable import HostedContent

/// The canonical form signed in a catalog is RFC 8785 (JCS): checked against the RFC's own
/// examples and, for generated values with awkward keys and strings, against the independent
/// Python writer in scripts/catalog-crosscheck.py (written from the RFC's rules, no code shared).
@Suite struct CanonicalJSONTests {
  func canonical(_ json: String) throws -> String {
    String(decoding: try JSONValue(parsing: Array(json.utf8)).canonicalBytes, as: UTF8.self)
  }

  /// RFC 8785 §3.2.3: members sorted by UTF-16 code units, so U+1F600 (D83D DE00) comes before
  /// U+FB33, where sorting by code points puts it last.
  @Test func sortsKeysAsTheRFCExampleDoes() throws {
    let input = #"""
      {"\u20ac": "Euro Sign", "\r": "Carriage Return", "\ufb33": "Hebrew Letter Dalet With Dagesh",
       "1": "One", "\ud83d\ude00": "Emoji: Grinning Face", "\u0080": "Control",
       "\u00f6": "Latin Small Letter O With Diaeresis"}
      """#
    let names = [
      "Carriage Return", "One", "Control", "Latin Small Letter O With Diaeresis", "Euro Sign",
      "Emoji: Grinning Face", "Hebrew Letter Dalet With Dagesh",
    ]
    let out = try canonical(input)
    let positions = names.map { out.range(of: "\"\($0)\"")!.lowerBound }
    #expect(positions == positions.sorted(), "\(out)")
    #expect(out.hasPrefix(#"{"\r":"Carriage Return","1":"One","\#u{80}":"Control""#))
  }

  /// RFC 8785 §3.2.2.2's string example, byte for byte.
  @Test func escapesStringsAsTheRFCExampleDoes() throws {
    let input = #"["\u20ac$\u000F\u000aA'\u0042\u0022\u005c\\\"\/"]"#
    #expect(try canonical(input) == #"["€$\u000f\nA'B\"\\\\\"/"]"#)
    #expect(
      try canonical(#"{"b":[1,-2,0],"a":{"z":true,"y":null},"\u007f":"\u2028\u001f"}"#)
        == "{\"a\":{\"y\":null,\"z\":true},\"b\":[1,-2,0],\"\u{7F}\":\"\u{2028}\\u001f\"}")
  }

  @Test func refusesIntegersPast2To53AndFractions() throws {
    #expect(try canonical("[9007199254740991,-9007199254740991]") == "[9007199254740991,-9007199254740991]")
    #expect(throws: (any Error).self) { try canonical("[9007199254740992]") }
    #expect(throws: (any Error).self) { try canonical("[1.5]") }
  }

  /// A catalog saved as UTF-16 or UTF-32 (as some Windows editors do) is named as such, not as
  /// the NUL byte the reader would meet first; UTF-8 with its byte-order mark keeps its message.
  @Test func saysWhenTheTextIsNotUTF8() throws {
    let text = #"{"a": 1}"#
    var encodings: [(String, [UInt8])] = [
      ("UTF-16LE with BOM", [0xFF, 0xFE] + text.utf16.flatMap { [UInt8($0 & 0xFF), UInt8($0 >> 8)] }),
      ("UTF-16BE with BOM", [0xFE, 0xFF] + text.utf16.flatMap { [UInt8($0 >> 8), UInt8($0 & 0xFF)] }),
      ("UTF-16LE", text.utf16.flatMap { [UInt8($0 & 0xFF), UInt8($0 >> 8)] }),
      ("UTF-16BE", text.utf16.flatMap { [UInt8($0 >> 8), UInt8($0 & 0xFF)] }),
    ]
    encodings.append(("UTF-32LE", text.unicodeScalars.flatMap { [UInt8($0.value & 0xFF), 0, 0, 0] }))
    for (name, bytes) in encodings {
      #expect(throws: (any Error).self, "\(name)") { try JSONValue(parsing: bytes) }
      do {
        _ = try JSONValue(parsing: bytes)
      } catch {
        #expect("\(error)".contains("UTF-16 or UTF-32"), "\(name): \(error)")
      }
    }
    do {
      _ = try JSONValue(parsing: [0xEF, 0xBB, 0xBF] + Array(text.utf8))
    } catch {
      #expect("\(error)".contains("byte-order mark"), "\(error)")
    }
    #expect(try canonical(text) == #"{"a":1}"#)
  }

  /// 300 generated values, canonicalized by pkgtool and by the Python writer: the same bytes.
  @Test func agreesWithAnIndependentJCSWriter() throws {
    let pool: [String] = [
      "a", "B", "1", "\u{0}", "\u{1F}", "\n", "\t", "\"", "\\", "/", "\u{7F}", "\u{80}", "é", "e\u{301}", "\u{2028}",
      "€", "\u{D7FF}", "\u{E000}", "\u{FB33}", "\u{FFFD}", "\u{FFFF}", "\u{10000}", "😀", "🇫🇷", "\u{10FFFF}", " ",
    ]
    var random = SeededGenerator(seed: 8785)
    func text() -> String {
      (0..<Int.random(in: 0...4, using: &random)).map { _ in pool.randomElement(using: &random)! }.joined()
    }
    func value(_ depth: Int) -> JSONValue {
      switch Int.random(in: 0..<(depth > 2 ? 4 : 6), using: &random) {
      case 0:
        return .integer(
          Int64.random(in: -JSONValue.largestExactInteger...JSONValue.largestExactInteger, using: &random))
      case 1: return .string(text())
      case 2: return Bool.random(using: &random) ? .bool(true) : .null
      case 3: return .integer(Int64.random(in: -3...3, using: &random))
      case 4: return .array((0..<Int.random(in: 0...3, using: &random)).map { _ in value(depth + 1) })
      default:
        var members: [String: JSONValue] = [:]
        for _ in 0..<Int.random(in: 0...6, using: &random) { members[text()] = value(depth + 1) }
        return .object(members)
      }
    }
    let values = (0..<300).map { _ in value(0) }
    let dir = try TemporaryDirectory()
    for (index, item) in values.enumerated() {
      // Written by Foundation's encoder (its own escaping and order), read back by Python.
      try writeFile(dir.appending("\(index).json"), Array(try JSONEncoder().encode(item)))
    }
    let script = repositoryRoot + "/scripts/catalog-crosscheck.py"
    let batch = """
      import importlib.util, json, sys
      spec = importlib.util.spec_from_file_location("crosscheck", sys.argv[1])
      module = importlib.util.module_from_spec(spec); spec.loader.exec_module(module)
      for i in range(int(sys.argv[3])):
          with open(f"{sys.argv[2]}/{i}.json", encoding="utf-8") as f:
              out = module.canonical(json.load(f))
          with open(f"{sys.argv[2]}/{i}.jcs", "wb") as f:
              f.write(out)
      """
    let python = try runProcess("/usr/bin/env", ["python3", "-c", batch, script, dir.path, "\(values.count)"])
    try #require(python.status == 0, "\(python.stderr)")
    var differing = 0
    for (index, item) in values.enumerated() {
      let expected = try readFile(dir.appending("\(index).jcs"))
      if item.canonicalBytes != expected {
        differing += 1
        if differing <= 3 {
          Issue.record(
            "value \(index): pkgtool \(String(decoding: item.canonicalBytes, as: UTF8.self)) python \(String(decoding: expected, as: UTF8.self))"
          )
        }
      }
    }
    #expect(differing == 0)
    // The generated keys do reach the case where UTF-16 and code-point order differ.
    #expect(
      try canonical(#"{"\ufb33":1,"\ud83d\ude00":2}"#) == "{\"😀\":2,\"\u{FB33}\":1}")
  }
}
