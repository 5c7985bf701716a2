import Foundation

/// A JSON value as parsed, for signing: what is signed is the value, written in one canonical
/// form, never the bytes of a file (whitespace and key order may change on the way).
///
/// The canonical form is RFC 8785, the JSON Canonicalization Scheme (docs/catalog.md), for the
/// values a catalog holds: object keys sorted by their UTF-16 code units, no whitespace,
/// integers only (within ±(2^53 − 1), where JCS's ECMAScript number form is the plain decimal),
/// strings as UTF-8 with `"` and `\` escaped, `\b` `\f` `\n` `\r` `\t` as such, the other
/// control characters as lowercase `\u00xx`, and nothing else escaped.
package enum JSONValue: Codable, Equatable, Sendable {
  case null
  case bool(Bool)
  case integer(Int64)
  case string(String)
  case array([JSONValue])
  case object([String: JSONValue])

  package init(from decoder: Decoder) throws {
    let container = try decoder.singleValueContainer()
    if container.decodeNil() {
      self = .null
    } else if let value = try? container.decode(Bool.self) {
      self = .bool(value)
    } else if let value = try? container.decode(Int64.self) {
      // I-JSON (RFC 7493), which JCS requires: an integer a double holds exactly.
      guard abs(value) <= JSONValue.largestExactInteger else {
        throw DecodingError.dataCorruptedError(
          in: container, debugDescription: "the integer \(value) is beyond ±(2^53 - 1), which JSON numbers hold exactly"
        )
      }
      self = .integer(value)
    } else if let value = try? container.decode(String.self) {
      self = .string(value)
    } else if let value = try? container.decode([JSONValue].self) {
      self = .array(value)
    } else if let value = try? container.decode([String: JSONValue].self) {
      self = .object(value)
    } else {
      throw DecodingError.dataCorruptedError(
        in: container,
        debugDescription: "only integers, strings, booleans, null, arrays and objects are allowed (no fractions)")
    }
  }

  package func encode(to encoder: Encoder) throws {
    var container = encoder.singleValueContainer()
    switch self {
    case .null: try container.encodeNil()
    case .bool(let value): try container.encode(value)
    case .integer(let value): try container.encode(value)
    case .string(let value): try container.encode(value)
    case .array(let value): try container.encode(value)
    case .object(let value): try container.encode(value)
    }
  }

  /// 2^53 − 1: the largest integer every JSON implementation holds exactly.
  package static let largestExactInteger: Int64 = (1 << 53) - 1

  /// Parses JSON text.
  package init(parsing bytes: [UInt8]) throws {
    self = try JSONDecoder().decode(JSONValue.self, from: Data(bytes))
  }

  /// Any `Encodable` value as a JSON value.
  package init<T: Encodable>(encoding value: T) throws {
    self = try JSONDecoder().decode(JSONValue.self, from: JSONEncoder().encode(value))
  }

  /// The value's canonical bytes (see the type's documentation).
  package var canonicalBytes: [UInt8] {
    var out: [UInt8] = []
    write(into: &out)
    return out
  }

  private func write(into out: inout [UInt8]) {
    switch self {
    case .null: out += Array("null".utf8)
    case .bool(let value): out += Array((value ? "true" : "false").utf8)
    case .integer(let value): out += Array(String(value).utf8)
    case .string(let value): JSONValue.writeString(value, into: &out)
    case .array(let values):
      out.append(UInt8(ascii: "["))
      for (index, value) in values.enumerated() {
        if index > 0 { out.append(UInt8(ascii: ",")) }
        value.write(into: &out)
      }
      out.append(UInt8(ascii: "]"))
    case .object(let members):
      out.append(UInt8(ascii: "{"))
      // RFC 8785 §3.2.3: by UTF-16 code units, which differs from code points above U+FFFF
      // (U+1F600 sorts before U+FB33).
      let keys = members.keys.sorted { $0.utf16.lexicographicallyPrecedes($1.utf16) }
      for (index, key) in keys.enumerated() {
        if index > 0 { out.append(UInt8(ascii: ",")) }
        JSONValue.writeString(key, into: &out)
        out.append(UInt8(ascii: ":"))
        members[key]!.write(into: &out)
      }
      out.append(UInt8(ascii: "}"))
    }
  }

  private static func writeString(_ text: String, into out: inout [UInt8]) {
    out.append(UInt8(ascii: "\""))
    for byte in text.utf8 {
      switch byte {
      case UInt8(ascii: "\""): out += Array("\\\"".utf8)
      case UInt8(ascii: "\\"): out += Array("\\\\".utf8)
      case 0x0A: out += Array("\\n".utf8)
      case 0x0D: out += Array("\\r".utf8)
      case 0x09: out += Array("\\t".utf8)
      case 0x08: out += Array("\\b".utf8)
      case 0x0C: out += Array("\\f".utf8)
      case 0..<0x20:
        let hex = Array("0123456789abcdef".utf8)
        out += Array("\\u00".utf8) + [hex[Int(byte >> 4)], hex[Int(byte & 0xF)]]
      default: out.append(byte)
      }
    }
    out.append(UInt8(ascii: "\""))
  }

  /// The members of an object, or nil.
  package var objectValue: [String: JSONValue]? {
    if case .object(let members) = self { return members }
    return nil
  }
}
