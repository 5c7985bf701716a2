import Foundation

/// The project's one JSON encoder: indented, keys sorted, slashes as they are, so every JSON
/// pkgtool writes (reports, `--json`, catalogs, manifests, install records) is stable and
/// diffable.
package enum JSONText {
  private static func encoder() -> JSONEncoder {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
    return encoder
  }

  /// The document's bytes, with a final newline.
  package static func bytes<T: Encodable>(_ value: T) throws -> [UInt8] {
    escapingInvisibles(Array(try encoder().encode(value))) + [0x0A]
  }

  /// `json` with DEL and the C1 controls (U+0080–U+009F), which Foundation leaves as they are,
  /// written as `\u007f`…`\u009f`: the same JSON, with nothing a terminal acts on (a name from a
  /// package may hold them). Outside strings JSON has only ASCII, so each one is in a string.
  static func escapingInvisibles(_ json: [UInt8]) -> [UInt8] {
    guard json.contains(where: { $0 == 0x7F || $0 == 0xC2 }) else { return json }
    func escape(_ value: UInt8) -> [UInt8] {
      let digits = Array("0123456789abcdef".utf8)
      return Array("\\u00".utf8) + [digits[Int(value >> 4)], digits[Int(value & 15)]]
    }
    var out: [UInt8] = []
    out.reserveCapacity(json.count + 16)
    var i = 0
    while i < json.count {
      let byte = json[i]
      if byte == 0x7F {
        out += escape(byte)
      } else if byte == 0xC2, i + 1 < json.count, (0x80...0x9F).contains(json[i + 1]) {
        out += escape(json[i + 1])
        i += 1
      } else {
        out.append(byte)
      }
      i += 1
    }
    return out
  }

  /// The document, without a final newline (`{}` for a value that cannot be encoded, which
  /// none of pkgtool's own types is).
  package static func string<T: Encodable>(_ value: T) -> String {
    guard let data = try? encoder().encode(value) else { return "{}" }
    return String(decoding: escapingInvisibles(Array(data)), as: UTF8.self)
  }
}
