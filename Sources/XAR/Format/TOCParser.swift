/// Turns TOC XML into entries, refusing anything ambiguous. See ``XARReader``.
struct TOCParser {
  struct ChecksumLocation {
    var algorithm: XARChecksumAlgorithm
    var offset: UInt64
    var size: UInt64
  }

  struct Result {
    var entries: [XAREntry] = []
    var checksum: ChecksumLocation?
    var creationTime: XARTimestamp?
  }

  /// A `<file>` being read.
  private struct FileBuilder {
    var index: Int
    var parent: Int
    var depth: Int
    var line: Int
    var id: String
    var name: String?
    var type: String?
    var typeLinkAttribute: String?
    var fields = FieldSet(count: 8)
    var seen: UInt32 = 0
    var data: DataBuilder?
    var inData = false
  }

  private struct DataBuilder {
    var fields = FieldSet(count: 6)
    var styles = FieldSet(count: 6)
    var seen: UInt32 = 0
  }

  /// Text values by field number, without a dictionary per entry.
  struct FieldSet {
    private var values: [String?]
    init(count: Int) { values = Array(repeating: nil, count: count) }
    subscript(_ index: Int) -> String? {
      get { values[index] }
      set { values[index] = newValue }
    }
  }

  // Field numbers. A file's: name 8, type 9, data 10 are handled apart.
  static let mode = 0, uid = 1, gid = 2, user = 3, group = 4, mtime = 5, link = 6
  static let offset = 0, length = 1, size = 2, encoding = 3, archivedChecksum = 4, extractedChecksum = 5

  /// The number of a `<file>` child element we read, or nil.
  static func fileField(_ name: String) -> Int? {
    switch name {
    case "mode": return mode
    case "uid": return uid
    case "gid": return gid
    case "user": return user
    case "group": return group
    case "mtime": return mtime
    case "link": return link
    case "name": return 8
    case "type": return 9
    case "data": return 10
    default: return nil
    }
  }

  /// The number of a `<data>` child element we read, or nil.
  static func dataField(_ name: String) -> Int? {
    switch name {
    case "offset": return offset
    case "length": return length
    case "size": return size
    case "encoding": return encoding
    case "archived-checksum": return archivedChecksum
    case "extracted-checksum": return extractedChecksum
    default: return nil
    }
  }

  static func parse(pulling pull: @escaping (UnsafeMutableRawBufferPointer) throws -> Int, limits: XARReader.Limits) throws -> Result {
    let reader: XMLStreamReader
    do {
      reader = try XMLStreamReader(pulling: pull)
    } catch let error as XMLReadError {
      throw translate(error)
    }
    var result = Result()
    var parents: [Int] = []  // parent index of each entry, by index
    var names: [String] = []
    var kinds: [XAREntryKind] = []
    var stack: [FileBuilder] = []
    var builders: [XAREntry?] = []
    // Element path outside <file>s, e.g. ["xar", "toc", "checksum"].
    var outer: [String] = []
    var text = ""
    var textTarget: (element: String, attributes: [(name: String, value: String)])? = nil
    var checksumStyle: String?
    var checksumFields: [String: String] = [:]
    var sawRoot = false

    func fail(_ line: Int, _ element: String, _ value: String) -> XARError {
      .invalidValue(line: line, element: element, value: value)
    }

    do {
      while let event = try reader.next() {
        switch event.kind {
        case .start(let name, let attributes, let isEmpty):
          if !sawRoot {
            guard name == "xar" else {
              throw XARError.malformedTOC(line: event.line, message: "the root element is <\(name)>, not <xar>")
            }
            sawRoot = true
          }
          if name == "file" && (outer == ["xar", "toc"] || stack.last.map { !$0.inData } == true)
            && textTarget == nil
          {
            guard builders.count < limits.maxEntries else {
              throw XARError.tooManyEntries(limit: limits.maxEntries)
            }
            guard stack.count < limits.maxDepth else {
              throw XARError.tooDeep(line: event.line, limit: limits.maxDepth)
            }
            let id = attributes.first { $0.name == "id" }?.value ?? ""
            let builder = FileBuilder(
              index: builders.count, parent: stack.last?.index ?? -1, depth: event.depth,
              line: event.line, id: id)
            builders.append(nil)
            parents.append(builder.parent)
            names.append("")
            kinds.append(.file)
            stack.append(builder)
            if isEmpty {
              throw XARError.missingName(line: event.line)
            }
            continue
          }
          if var top = stack.last {
            let relative = event.depth - top.depth
            if relative == 1 && !top.inData {
              let field = fileField(name)
              if let field {
                let bit: UInt32 = 1 << field
                guard stack[stack.count - 1].seen & bit == 0 else {
                  throw XARError.duplicateElement(
                    line: event.line, element: name, path: top.name ?? "(unnamed)")
                }
                stack[stack.count - 1].seen |= bit
              }
              if name == "data" {
                top.inData = true
                top.data = DataBuilder()
                stack[stack.count - 1] = top
                if isEmpty { stack[stack.count - 1].inData = false }
                continue
              }
              if field != nil {
                if name == "type" {
                  stack[stack.count - 1].typeLinkAttribute = attributes.first { $0.name == "link" }?.value
                }
                textTarget = (name, attributes)
                text = ""
                if isEmpty { try closeField(&stack, name: name, attributes: attributes, text: "", line: event.line) ; textTarget = nil }
              }
              continue
            }
            if relative == 2 && top.inData {
              if let field = dataField(name) {
                let bit: UInt32 = 1 << field
                guard stack[stack.count - 1].data!.seen & bit == 0 else {
                  throw XARError.duplicateElement(
                    line: event.line, element: name, path: top.name ?? "(unnamed)")
                }
                stack[stack.count - 1].data!.seen |= bit
                if let style = attributes.first(where: { $0.name == "style" })?.value {
                  stack[stack.count - 1].data!.styles[field] = style
                }
                textTarget = (name, attributes)
                text = ""
                if isEmpty {
                  stack[stack.count - 1].data!.fields[field] = ""
                  textTarget = nil
                }
              }
              continue
            }
            continue  // other elements inside a file are ignored
          }
          if isEmpty {
            if outer == ["xar", "toc"] && name == "checksum" {
              checksumStyle = attributes.first { $0.name == "style" }?.value
            }
            continue
          }
          outer.append(name)
          if outer == ["xar", "toc", "checksum"] {
            guard checksumStyle == nil else {
              throw XARError.duplicateElement(line: event.line, element: "checksum", path: "toc")
            }
            checksumStyle = attributes.first { $0.name == "style" }?.value ?? ""
          }
          if outer == ["xar", "toc", "checksum", "offset"] || outer == ["xar", "toc", "checksum", "size"]
            || outer == ["xar", "toc", "creation-time"]
          {
            textTarget = (name, attributes)
            text = ""
          }
        case .text(let content):
          if textTarget != nil { text += content }
        case .end(let name):
          if let target = textTarget, target.element == name {
            textTarget = nil
            if !stack.isEmpty {
              if stack[stack.count - 1].inData {
                if let field = dataField(name) { stack[stack.count - 1].data!.fields[field] = text }
              } else {
                try closeField(&stack, name: name, attributes: target.attributes, text: text, line: event.line)
              }
              continue
            }
            if outer.count == 4 && outer[2] == "checksum" {
              guard checksumFields[name] == nil else {
                throw XARError.duplicateElement(line: event.line, element: name, path: "toc checksum")
              }
              checksumFields[name] = text
            } else if name == "creation-time" {
              result.creationTime = XARTimestamp(iso8601: text.trimmingASCIIWhitespace())
            }
            outer.removeLast()
            continue
          }
          if var top = stack.last {
            if name == "data" && top.inData && event.depth - top.depth == 1 {
              top.inData = false
              stack[stack.count - 1] = top
              continue
            }
            if name == "file" && event.depth == top.depth {
              stack.removeLast()
              let entry = try finishEntry(top, line: event.line)
              names[top.index] = entry.name
              kinds[top.index] = entry.entry.kind
              builders[top.index] = entry.entry
              continue
            }
            continue
          }
          if !outer.isEmpty { outer.removeLast() }
        }
      }
    } catch let error as XMLReadError {
      throw translate(error)
    }
    guard sawRoot else { throw XARError.malformedTOC(line: 0, message: "the TOC is empty") }

    if let style = checksumStyle {
      guard let algorithm = XARChecksumAlgorithm(styleName: style) else {
        throw XARError.unsupportedChecksum(style.isEmpty ? "(no style)" : style)
      }
      guard let offset = UInt64(checksumFields["offset"]?.trimmingASCIIWhitespace() ?? ""),
        let size = UInt64(checksumFields["size"]?.trimmingASCIIWhitespace() ?? "")
      else {
        throw XARError.malformedTOC(line: 0, message: "<checksum> needs a numeric <offset> and <size>")
      }
      result.checksum = ChecksumLocation(algorithm: algorithm, offset: offset, size: size)
    }

    // Full paths, then hard-link targets by id.
    var paths = [String](repeating: "", count: builders.count)
    var idIndex: [String: Int] = [:]
    var totalPathBytes: UInt64 = 0
    for i in 0..<builders.count {
      let parent = parents[i]
      paths[i] = parent < 0 ? names[i] : paths[parent] + "/" + names[i]
      let pathBytes = paths[i].utf8.count
      guard pathBytes <= limits.maxPathBytes else {
        throw XARError.pathTooLong(line: builders[i]?.tocLine ?? 0, limit: limits.maxPathBytes)
      }
      totalPathBytes += UInt64(pathBytes)
      guard totalPathBytes <= limits.maxTotalPathBytes else {
        throw XARError.tooManyPathBytes(limit: limits.maxTotalPathBytes)
      }
      if let id = builders[i]?.id, !id.isEmpty {
        guard idIndex[id] == nil else {
          throw XARError.invalidValue(line: builders[i]?.tocLine ?? 0, element: "file id", value: id)
        }
        idIndex[id] = i
      }
    }
    result.entries.reserveCapacity(builders.count)
    for i in 0..<builders.count {
      var entry = builders[i]!
      entry.path = paths[i]
      if entry.kind == .hardLink {
        let id = entry.hardLinkTarget ?? ""
        guard let target = idIndex[id], builders[target]?.kind == .file, target != i else {
          throw XARError.unresolvedHardLink(path: entry.path, id: id)
        }
        entry.hardLinkTarget = paths[target]
      }
      result.entries.append(entry)
    }
    return result
  }

  private static func closeField(
    _ stack: inout [FileBuilder], name: String, attributes: [(name: String, value: String)],
    text: String, line: Int
  ) throws {
    var value = text
    if attributes.contains(where: { $0.name == "enctype" && $0.value == "base64" }) {
      guard let bytes = Base64.decode(text), let decoded = String(validating: bytes, as: UTF8.self) else {
        throw XARError.invalidValue(line: line, element: name, value: text)
      }
      value = decoded
    }
    switch name {
    case "name": stack[stack.count - 1].name = value
    case "type": stack[stack.count - 1].type = value.trimmingASCIIWhitespace()
    default: if let field = fileField(name), field < 8 { stack[stack.count - 1].fields[field] = value }
    }
  }

  private static func finishEntry(_ b: FileBuilder, line: Int) throws -> (name: String, entry: XAREntry) {
    guard let name = b.name else { throw XARError.missingName(line: b.line) }
    guard !name.isEmpty else { throw XARError.emptyName(line: b.line) }
    if name.utf8.contains(UInt8(ascii: "/")) {
      throw XARError.invalidName(line: b.line, name: name, reason: "a name cannot hold '/'")
    }
    if name.utf8.contains(0) {
      throw XARError.invalidName(line: b.line, name: name, reason: "a name cannot hold NUL")
    }
    var kind = XAREntryKind(typeName: b.type ?? "file")
    var hardLinkTarget: String? = nil
    if kind == .hardLink {
      let link = b.typeLinkAttribute ?? ""
      if link == "original" {
        kind = .file
      } else {
        hardLinkTarget = link
      }
    }
    func number(_ element: String, radix: Int = 10) throws -> UInt64? {
      guard let text = b.fields[fileField(element)!] else { return nil }
      guard let value = UInt64(text.trimmingASCIIWhitespace(), radix: radix) else {
        throw XARError.invalidValue(line: b.line, element: element, value: text)
      }
      return value
    }
    var parsedMode: UInt32? = nil
    if let m = try number("mode", radix: 8) {
      guard m <= 0o7777 else { throw XARError.invalidValue(line: b.line, element: "mode", value: b.fields[mode]!) }
      parsedMode = UInt32(m)
    }
    var parsedMtime: XARTimestamp? = nil
    if let text = b.fields[mtime] {
      guard let t = XARTimestamp(iso8601: text.trimmingASCIIWhitespace()) else {
        throw XARError.invalidValue(line: b.line, element: "mtime", value: text)
      }
      parsedMtime = t
    }
    var data: XARData? = nil
    if let d = b.data {
      func field(_ element: String) throws -> UInt64 {
        let index = dataField(element)!
        guard let text = d.fields[index], let value = UInt64(text.trimmingASCIIWhitespace()) else {
          throw XARError.invalidValue(line: b.line, element: element, value: d.fields[index] ?? "(missing)")
        }
        return value
      }
      func checksum(_ element: String) throws -> XARChecksum? {
        let index = dataField(element)!
        guard let text = d.fields[index] else { return nil }
        let style = d.styles[index] ?? ""
        guard let algorithm = XARChecksumAlgorithm(styleName: style), algorithm != .none else {
          throw XARError.invalidValue(line: b.line, element: element + " style", value: style)
        }
        guard let value = XARChecksum(algorithm: algorithm, hex: text) else {
          throw XARError.invalidValue(line: b.line, element: element, value: text)
        }
        return value
      }
      let encoding = XAREncoding(style: d.styles[TOCParser.encoding] ?? "application/octet-stream")
      data = XARData(
        offset: try field("offset"), length: try field("length"), size: try field("size"),
        encoding: encoding, archivedChecksum: try checksum("archived-checksum"),
        extractedChecksum: try checksum("extracted-checksum"))
      if encoding == .none, let data, data.length != data.size {
        throw XARError.invalidValue(
          line: b.line, element: "length",
          value: "\(data.length) (stored without encoding, but size is \(data.size))")
      }
    }
    // What other readers would make of a contradiction differs, so it is never guessed at.
    if kind == .file && b.fields[link] != nil {
      throw XARError.contradictoryEntry(
        line: b.line, name: name, reason: "is typed 'file' but carries a <link> (libarchive makes it a symlink)")
    }
    if data != nil && kind != .file {
      throw XARError.contradictoryEntry(
        line: b.line, name: name,
        reason: "is a \(b.type ?? "file") but carries <data> (extractors may write those bytes; a \(b.type ?? "file") has none)")
    }
    let entry = XAREntry(
      id: b.id, path: name, kind: kind, mode: parsedMode, uid: try number("uid"), gid: try number("gid"),
      user: b.fields[user], group: b.fields[group], mtime: parsedMtime, linkTarget: b.fields[link],
      hardLinkTarget: hardLinkTarget, data: data, tocLine: b.line)
    return (name, entry)
  }

  private static func translate(_ error: XMLReadError) -> XARError {
    switch error {
    case .malformed(let line, let message): return .malformedTOC(line: line, message: message)
    case .forbidden(let line, let what): return .forbiddenMarkup(line: line, what: what)
    }
  }
}
