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
      // `magnitude`: abs(Int64.min) traps.
      guard value.magnitude <= UInt64(JSONValue.largestExactInteger) else {
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

  /// Parses JSON text, strictly: an object that names a member twice, or a number that is not
  /// a plain integer (`1.0`, `1e0`, `-0`), is refused, so every reader of the same bytes reads
  /// the same value (Python's `json` keeps the last of two equal names, Foundation the first).
  package init(parsing bytes: [UInt8]) throws {
    try StrictJSON.check(bytes)
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

/// What ``JSONValue/init(parsing:)`` refuses before decoding: a member name twice in one object
/// (compared after escapes are decoded: `"a"` and `"\u0061"` are one name), and a number other
/// than a plain integer. The structure itself is left to the decoder.
package enum StrictJSON {
  /// Why the text was refused.
  package struct Refusal: Error, CustomStringConvertible {
    /// True when an object names a member twice (else a number or a string was refused).
    package var isDuplicateName = false
    package var description: String
  }

  package static func check(_ bytes: [UInt8]) throws {
    // Foundation's decoder takes these; Python's and the RFC do not: one reading for all.
    // UTF-16 and UTF-32 (with a byte-order mark, or ASCII text with a NUL beside every byte):
    // said as such, not as the NUL that would be met first.
    if bytes.starts(with: [0xFF, 0xFE]) || bytes.starts(with: [0xFE, 0xFF])
      || (bytes.count >= 2 && (bytes[0] == 0) != (bytes[1] == 0))
    {
      throw Refusal(description: "the text is UTF-16 or UTF-32; JSON files must be UTF-8 (save it as UTF-8)")
    }
    if bytes.starts(with: [0xEF, 0xBB, 0xBF]) {
      throw Refusal(description: "the text starts with a byte-order mark, which JSON does not allow")
    }
    // For each open container: is it an object, the names seen, and whether a name comes next.
    var stack: [(isObject: Bool, names: Set<[UInt16]>, expectingName: Bool)] = []
    var i = 0
    // The last byte that was not white space, for a comma before a closing bracket.
    var last: UInt8 = 0
    while i < bytes.count {
      let byte = bytes[i]
      if byte == UInt8(ascii: "}") || byte == UInt8(ascii: "]"), last == UInt8(ascii: ",") {
        throw Refusal(description: "a comma comes before a closing bracket, which JSON does not allow")
      }
      if !(byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D) { last = byte }
      switch byte {
      case UInt8(ascii: "{"):
        stack.append((true, [], true))
        i += 1
      case UInt8(ascii: "["):
        stack.append((false, [], false))
        i += 1
      case UInt8(ascii: "}"), UInt8(ascii: "]"):
        _ = stack.popLast()
        i += 1
      case UInt8(ascii: ","):
        if let top = stack.indices.last, stack[top].isObject { stack[top].expectingName = true }
        i += 1
      case UInt8(ascii: "\""):
        let (name, end) = try string(bytes, from: i)
        if let top = stack.indices.last, stack[top].isObject, stack[top].expectingName {
          guard stack[top].names.insert(name).inserted else {
            throw Refusal(
              isDuplicateName: true,
              description: "the member name \"\(String(decoding: name, as: UTF16.self))\" appears twice in one object")
          }
          stack[top].expectingName = false
        }
        i = end
      case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
        var end = i
        while end < bytes.count, !isDelimiter(bytes[end]) { end += 1 }
        let token = Array(bytes[i..<end])
        guard isPlainInteger(token) else {
          throw Refusal(description: "the number \(String(decoding: token, as: UTF8.self)) is not a plain integer")
        }
        let magnitude = token.first == UInt8(ascii: "-") ? token.dropFirst() : token[...]
        guard magnitude.count <= 16, let value = UInt64(String(decoding: magnitude, as: UTF8.self)),
          value <= UInt64(JSONValue.largestExactInteger)
        else {
          throw Refusal(
            description:
              "the integer \(String(decoding: token, as: UTF8.self)) is beyond ±(2^53 - 1), which JSON numbers hold exactly"
          )
        }
        i = end
      default:
        i += 1
      }
    }
  }

  private static func isDelimiter(_ byte: UInt8) -> Bool {
    switch byte {
    case UInt8(ascii: ","), UInt8(ascii: "]"), UInt8(ascii: "}"), UInt8(ascii: " "), 0x09, 0x0A, 0x0D: return true
    default: return false
    }
  }

  /// `-?(0|[1-9][0-9]*)`, and not `-0`.
  private static func isPlainInteger(_ token: [UInt8]) -> Bool {
    let digits = token.first == UInt8(ascii: "-") ? token.dropFirst() : token[...]
    guard let first = digits.first, digits.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }) else {
      return false
    }
    if first == UInt8(ascii: "0") { return digits.count == 1 && token.first != UInt8(ascii: "-") }
    return true
  }

  /// The string starting at `start` (its opening quote), decoded to UTF-16 code units, and the
  /// index after its closing quote.
  private static func string(_ bytes: [UInt8], from start: Int) throws -> ([UInt16], Int) {
    var units: [UInt16] = []
    var i = start + 1
    var raw: [UInt8] = []
    func flush() {
      units += Array(String(decoding: raw, as: UTF8.self).utf16)
      raw.removeAll()
    }
    while i < bytes.count {
      let byte = bytes[i]
      if byte == UInt8(ascii: "\"") {
        flush()
        return (units, i + 1)
      }
      if byte == UInt8(ascii: "\\"), i + 1 < bytes.count {
        flush()
        let escaped = bytes[i + 1]
        switch escaped {
        case UInt8(ascii: "u"):
          guard i + 6 <= bytes.count,
            let value = UInt16(String(decoding: bytes[(i + 2)..<(i + 6)], as: UTF8.self), radix: 16)
          else { throw Refusal(description: "a \\u escape is not four hexadecimal digits") }
          units.append(value)
          i += 6
          continue
        case UInt8(ascii: "b"): units.append(0x08)
        case UInt8(ascii: "f"): units.append(0x0C)
        case UInt8(ascii: "n"): units.append(0x0A)
        case UInt8(ascii: "r"): units.append(0x0D)
        case UInt8(ascii: "t"): units.append(0x09)
        default: units.append(UInt16(escaped))
        }
        i += 2
        continue
      }
      guard byte >= 0x20 else {
        throw Refusal(
          description: "a string holds a raw control character (0x\(String(byte, radix: 16))); JSON escapes it")
      }
      raw.append(byte)
      i += 1
    }
    throw Refusal(description: "a string is not closed")
  }
}

/// What a decoding error says, for people: the member path and what was wrong with it, never
/// the decoder's own types (`keyNotFound(CodingKeys(stringValue: …))`).
package func describeDecoding(_ error: any Error) -> String {
  func path(_ keys: [any CodingKey]) -> String {
    let parts = keys.map { key in key.intValue.map { "[\($0)]" } ?? key.stringValue }
    return parts.reduce("") { $0.isEmpty || $1.hasPrefix("[") ? $0 + $1 : $0 + "." + $1 }
  }
  guard let error = error as? DecodingError else { return "\(error)" }
  switch error {
  case .keyNotFound(let key, let context):
    let place = path(context.codingPath)
    return "the member '\(key.stringValue)' is missing" + (place.isEmpty ? "" : " in '\(place)'")
  case .typeMismatch(let type, let context), .valueNotFound(let type, let context):
    let place = path(context.codingPath)
    let kind =
      type == String.self
      ? "a string"
      : (type == Int.self || type == Int64.self || type == UInt64.self)
        ? "an integer" : type == Bool.self ? "true or false" : "of another kind"
    return "'\(place.isEmpty ? "the document" : place)' must be \(kind)"
  case .dataCorrupted(let context):
    let place = path(context.codingPath)
    let reason = (context.underlyingError as? StrictJSON.Refusal)?.description ?? "the text is not JSON"
    return place.isEmpty ? reason : "'\(place)': \(reason)"
  @unknown default:
    return "the document is not of the expected form"
  }
}
