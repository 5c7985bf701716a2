/// A property-list value. Dictionaries keep their key order, so a rewrite changes nothing but
/// what was asked.
public indirect enum PropertyList: Equatable, Sendable {
  /// A `<string>`.
  case string(String)
  /// An `<integer>` that fits a signed 64-bit integer.
  case integer(Int64)
  /// An `<integer>` above `Int64.max` (up to `UInt64.max`): what Apple writes for unsigned
  /// 64-bit values, kept exactly (a binary plist stores it in 16 bytes).
  case unsignedInteger(UInt64)
  /// A `<real>`.
  case real(Double)
  /// `<true/>` or `<false/>`.
  case boolean(Bool)
  /// Seconds since 2001-01-01T00:00:00Z, as Apple stores dates.
  case date(Double)
  /// A `<data>` block.
  case data([UInt8])
  /// An `<array>`.
  case array([PropertyList])
  /// A `<dict>`, its keys in document order.
  case dictionary([(key: String, value: PropertyList)])

  /// Equal values; dictionaries compared in order, and NaN equal to NaN.
  public static func == (a: PropertyList, b: PropertyList) -> Bool {
    switch (a, b) {
    case (.string(let x), .string(let y)): return x == y
    case (.integer(let x), .integer(let y)): return x == y
    case (.unsignedInteger(let x), .unsignedInteger(let y)): return x == y
    case (.real(let x), .real(let y)): return x == y || (x.isNaN && y.isNaN)
    case (.boolean(let x), .boolean(let y)): return x == y
    case (.date(let x), .date(let y)): return x == y
    case (.data(let x), .data(let y)): return x == y
    case (.array(let x), .array(let y)): return x == y
    case (.dictionary(let x), .dictionary(let y)):
      return x.count == y.count && zip(x, y).allSatisfy { $0.key == $1.key && $0.value == $1.value }
    default: return false
    }
  }

  /// The value for `key` in a dictionary; nil for other values or a missing key.
  public subscript(key: String) -> PropertyList? {
    guard case .dictionary(let pairs) = self else { return nil }
    return pairs.first { $0.key == key }?.value
  }

  /// Sets `key` in a dictionary, in place if present, else at the end.
  public mutating func set(_ key: String, _ value: PropertyList) {
    guard case .dictionary(var pairs) = self else { return }
    if let i = pairs.firstIndex(where: { $0.key == key }) {
      pairs[i].value = value
    } else {
      pairs.append((key, value))
    }
    self = .dictionary(pairs)
  }

  /// The name of the value's type as plists spell it, for messages.
  public var typeName: String {
    switch self {
    case .string: return "string"
    case .integer, .unsignedInteger: return "integer"
    case .real: return "real"
    case .boolean: return "boolean"
    case .date: return "date"
    case .data: return "data"
    case .array: return "array"
    case .dictionary: return "dictionary"
    }
  }
}

/// The two encodings of a property list.
public enum PropertyListFormat: String, Sendable, Codable {
  /// The XML form (`<?xml … <plist>`).
  case xml
  /// The binary form (`bplist00`).
  case binary
}

/// Why bytes are not a property list. Carries the line for XML.
public struct PropertyListError: Error, Equatable, CustomStringConvertible, Sendable {
  /// The line of an XML plist where the problem is, when known.
  public var line: Int?
  /// What is wrong.
  public var message: String

  /// A problem at `line`.
  public init(line: Int? = nil, _ message: String) {
    self.line = line
    self.message = message
  }

  /// The message, with the line when known.
  public var description: String {
    if let line { return "line \(line): \(message)" }
    return message
  }
}

extension PropertyList {
  /// Largest plist accepted, in bytes. A `ContentInfo.plist` is a few hundred bytes.
  public static let maxEncodedSize = 1 << 20

  /// Decodes XML or binary (`bplist00`) bytes.
  public static func decode(_ bytes: [UInt8]) throws -> (PropertyList, PropertyListFormat) {
    guard bytes.count <= maxEncodedSize else {
      throw PropertyListError("the property list is larger than \(maxEncodedSize) bytes")
    }
    if bytes.starts(with: Array("bplist".utf8)) {
      return (try BinaryPropertyListReader.decode(bytes), .binary)
    }
    return (try XMLPropertyListReader.decode(bytes), .xml)
  }

  /// Encodes in `format`.
  public func encoded(as format: PropertyListFormat) -> [UInt8] {
    switch format {
    case .xml: return XMLPropertyListWriter.encode(self)
    case .binary: return BinaryPropertyListWriter.encode(self)
    }
  }
}

/// Seconds between 1970-01-01 and 2001-01-01, Apple's reference date.
let appleReferenceOffset: Double = 978_307_200
