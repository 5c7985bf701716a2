import TextCoding
import XAR
import XML

/// Reads XML property lists through libxml2 (``XMLStreamReader``): no network, no DTD loading,
/// entities refused. Errors carry line numbers.
enum XMLPropertyListReader {
  static let maxDepth = 64

  static func decode(_ bytes: [UInt8]) throws -> PropertyList {
    let reader: XMLStreamReader
    do {
      reader = try XMLStreamReader(bytes: bytes, allowDoctype: true)
    } catch let error as XMLReadError {
      throw translate(error)
    }
    do {
      guard let first = try nextElement(reader) else {
        throw PropertyListError("the document is empty")
      }
      guard case .start(let name, _, let isEmpty) = first.kind, name == "plist" else {
        throw PropertyListError(line: first.line, "the root element is not <plist>")
      }
      guard !isEmpty, let valueStart = try nextElement(reader) else {
        throw PropertyListError(line: first.line, "<plist> holds no value")
      }
      let value = try parseValue(valueStart, reader, depth: 0)
      guard let end = try nextElement(reader), case .end("plist") = end.kind else {
        throw PropertyListError(line: reader.line, "<plist> holds more than one value")
      }
      while let extra = try reader.next() {
        if case .text(let t) = extra.kind, t.allSatisfy(\.isWhitespace) { continue }
        throw PropertyListError(line: extra.line, "content after </plist>")
      }
      return value
    } catch let error as XMLReadError {
      throw translate(error)
    }
  }

  /// The next start or end tag, skipping whitespace; text elsewhere is an error.
  private static func nextElement(_ reader: XMLStreamReader) throws -> XMLEvent? {
    while let event = try reader.next() {
      if case .text(let t) = event.kind {
        guard t.allSatisfy(\.isWhitespace) else {
          throw PropertyListError(line: event.line, "unexpected text '\(t.prefix(40))'")
        }
        continue
      }
      return event
    }
    return nil
  }

  private static func text(until name: String, _ reader: XMLStreamReader) throws -> String {
    var text = ""
    while let event = try reader.next() {
      switch event.kind {
      case .text(let t): text += t
      case .end(let n) where n == name: return text
      default: throw PropertyListError(line: event.line, "<\(name)> must hold only text")
      }
    }
    throw PropertyListError(line: reader.line, "unterminated <\(name)>")
  }

  private static func parseValue(_ start: XMLEvent, _ reader: XMLStreamReader, depth: Int) throws -> PropertyList {
    guard depth < maxDepth else { throw PropertyListError(line: start.line, "nested too deeply") }
    guard case .start(let name, _, let isEmpty) = start.kind else {
      throw PropertyListError(line: start.line, "expected a value")
    }
    let line = start.line
    switch name {
    case "string":
      return .string(isEmpty ? "" : try text(until: name, reader))
    case "integer":
      let t = isEmpty ? "" : try text(until: name, reader).trimmingCharacters()
      if let v = Int64(t) { return .integer(v) }
      if t.hasPrefix("0x"), let v = Int64(t.dropFirst(2), radix: 16) { return .integer(v) }
      if let v = UInt64(t) { return .unsignedInteger(v) }
      if t.hasPrefix("0x"), let v = UInt64(t.dropFirst(2), radix: 16) { return .unsignedInteger(v) }
      throw PropertyListError(line: line, "invalid <integer> '\(t)'")
    case "real":
      let t = isEmpty ? "" : try text(until: name, reader).trimmingCharacters()
      guard let v = Double(t) else { throw PropertyListError(line: line, "invalid <real> '\(t)'") }
      return .real(v)
    case "true", "false":
      if !isEmpty {
        guard try text(until: name, reader).trimmingCharacters().isEmpty else {
          throw PropertyListError(line: line, "<\(name)> must be empty")
        }
      }
      return .boolean(name == "true")
    case "date":
      let t = isEmpty ? "" : try text(until: name, reader).trimmingCharacters()
      guard let stamp = XARTimestamp(iso8601: t) else {
        throw PropertyListError(line: line, "invalid <date> '\(t)'")
      }
      return .date(Double(stamp.secondsSinceEpoch) - appleReferenceOffset)
    case "data":
      let t = isEmpty ? "" : try text(until: name, reader)
      guard let bytes = Base64.decode(t, requirePadding: false) else {
        throw PropertyListError(line: line, "invalid base64 in <data>")
      }
      return .data(bytes)
    case "array":
      var items: [PropertyList] = []
      if isEmpty { return .array(items) }
      while let event = try nextElement(reader) {
        if case .end("array") = event.kind { return .array(items) }
        items.append(try parseValue(event, reader, depth: depth + 1))
      }
      throw PropertyListError(line: reader.line, "unterminated <array>")
    case "dict":
      var pairs: [(key: String, value: PropertyList)] = []
      if isEmpty { return .dictionary(pairs) }
      var keys = Set<String>()
      while let event = try nextElement(reader) {
        if case .end("dict") = event.kind { return .dictionary(pairs) }
        guard case .start("key", _, let keyEmpty) = event.kind else {
          throw PropertyListError(line: event.line, "expected <key> in <dict>")
        }
        let key = keyEmpty ? "" : try text(until: "key", reader)
        guard keys.insert(key).inserted else {
          throw PropertyListError(line: event.line, "duplicate key '\(key)'")
        }
        guard let valueEvent = try nextElement(reader), case .start = valueEvent.kind else {
          throw PropertyListError(line: event.line, "key '\(key)' has no value")
        }
        pairs.append((key, try parseValue(valueEvent, reader, depth: depth + 1)))
      }
      throw PropertyListError(line: reader.line, "unterminated <dict>")
    default:
      throw PropertyListError(line: line, "unknown element <\(name)>")
    }
  }

  private static func translate(_ error: XMLReadError) -> PropertyListError {
    switch error {
    case .malformed(let line, let message): return PropertyListError(line: line, message)
    case .forbidden(let line, let what): return PropertyListError(line: line, "\(what) is not allowed")
    }
  }
}

extension String {
  func trimmingCharacters() -> String {
    let scalars = unicodeScalars
    guard let first = scalars.firstIndex(where: { !$0.properties.isWhitespace }) else { return "" }
    let last = scalars.lastIndex(where: { !$0.properties.isWhitespace })!
    return String(scalars[first...last])
  }
}
