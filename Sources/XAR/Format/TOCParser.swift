import SystemIO
import TextCoding
import XML

/// Turns TOC XML into entries, refusing anything ambiguous. See ``XARReader``.
///
/// The XML arrives as libxml2's SAX events (``XMLEventParser``), with element names matched as
/// bytes; ``finish()`` checks paths and ids and resolves hard links.
struct TOCParser {
  struct ChecksumLocation {
    var algorithm: XARChecksumAlgorithm
    var offset: UInt64
    var size: UInt64
  }

  struct Result {
    var entries = XAREntryTable()
    var checksum: ChecksumLocation?
    /// The heap regions of the TOC's `<signature>` and `<x-signature>` (offset, size), in order.
    var signatures: [(offset: UInt64, size: UInt64)] = []
    /// The heap regions of the entries' extended attributes (`<ea>`: offset, length).
    var attributeRegions: [(offset: UInt64, size: UInt64)] = []
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
    var fields = FieldValues<FileField>()
    var seen: UInt32 = 0
    var data: DataBuilder?
    var inData = false
    /// The `seen` bits at its first child `<file>` (nil while it has none). A field after that
    /// is refused (``XARError/fieldAfterChildren(path:)``): streamed, the entry is stored then.
    var seenAtFirstChild: UInt32?
    /// Streaming: stored (at its first child `<file>`, or at its end).
    var stored = false
  }

  /// Streaming stopped at something it does not handle as it goes (a hard link, whose target
  /// is known only at the end). Whoever streams then reads the archive again the ordinary way,
  /// which judges it; the entries handed out before are the ordinary reading's first ones.
  struct CannotStream: Error, CustomStringConvertible {
    var reason: String
    var description: String { "the TOC cannot be read as it streams: \(reason)" }
  }

  /// Streaming: called on the parsing thread with the table so far and how many entries of it,
  /// from the first, are whole (named, their paths and fields final). It may throw to stop.
  typealias Publish = (XAREntryTable, Int) throws -> Void

  private struct DataBuilder {
    var fields = FieldValues<DataField>()
    var styles = FieldValues<DataField>()
    var seen: UInt32 = 0
  }

  private let limits: XARReader.Limits
  private var result = Result()
  /// One compact record per `<file>` (a placeholder until its `</file>`), which becomes the
  /// result in place: a TOC of many entries is never held twice, nor as Swift values.
  private var entries = XAREntryTable()
  /// Hard links and the ids they name, resolved once every id is known.
  private var hardLinks: [(index: Int32, id: String)] = []
  /// `<file>`s opened and not yet closed.
  private var openFiles = 0
  /// The `<file>`s open now, outermost first.
  private var stack: [FileBuilder] = []
  /// Element path outside `<file>`s, e.g. `[.xar, .toc, .checksum]`.
  private var outer: [TOCElement] = []
  /// The element whose text is being gathered: where it started and whether it is base64.
  private var textTarget: (element: TOCElement, base64: Bool, line: Int)?
  /// The top `<file>`'s `<data>` while it is read (kept out of the stack, so it is changed in
  /// place); it joins its file at `</data>`.
  private var openData: DataBuilder?
  /// Its text so far, as bytes (a string is made once, at its end).
  private var text: [UInt8] = []
  private var checksumStyle: String?
  private var checksumFields: [TOCElement: String] = [:]
  /// The `<offset>` and `<size>` of the signature being read.
  private var signatureFields: [TOCElement: String] = [:]
  private var sawSignature = false
  private var sawXSignature = false
  /// The depth of the `<ea>` being read, and its `<offset>` and `<length>`.
  private var attributeDepth: Int?
  private var attributeFields: [TOCElement: String] = [:]
  private var sawRoot = false
  /// Streaming: where whole entries go, and how many have gone.
  private let publish: Publish?
  private var published = 0
  /// Entries whose path lengths are known (all of them before this index).
  private var stored = 0

  private init(limits: XARReader.Limits, publish: Publish?) {
    self.limits = limits
    self.publish = publish
  }

  /// Passes libxml2's events to the parser.
  private final class Events: XMLEventHandler {
    // Exclusive access is not checked at run time (it was 4% of a large TOC's parse, one check
    // per event): libxml2 calls these one at a time, and none of them calls back into another.
    @exclusivity(unchecked) var parser: TOCParser
    init(_ parser: TOCParser) { self.parser = parser }

    func start(name: UnsafeRawBufferPointer, attributes: XMLAttributes, line: Int, depth: Int) throws -> Bool {
      try parser.start(TOCElement(name), name: name, attributes: attributes, line: line, depth: depth)
      return parser.textTarget != nil
    }
    func text(_ bytes: UnsafeRawBufferPointer) {
      // Text matters only inside the elements whose values are read (the event parser skips
      // the rest, most of a TOC's text being indentation).
      if parser.textTarget != nil { parser.text.append(contentsOf: bytes) }
    }
    func end(name: UnsafeRawBufferPointer, line: Int, depth: Int) throws {
      try parser.end(TOCElement(name), line: line, depth: depth)
    }
  }

  /// Parses the XML `pull` gives. With `publish`, entries are stored as soon as they are whole
  /// (a folder at its first child `<file>`, not at its end) and handed out as they come; the
  /// result is the same as without, or the parse throws ``CannotStream``.
  static func parse(
    pulling pull: @escaping (UnsafeMutableRawBufferPointer) throws -> Int, limits: XARReader.Limits,
    publish: Publish? = nil
  ) throws -> Result {
    let events = Events(TOCParser(limits: limits, publish: publish))
    do {
      try XMLEventParser.parse(pulling: pull, into: events)
    } catch let error as XMLReadError {
      throw translate(error)
    }
    return try events.parser.finish()
  }

  // MARK: Events

  private mutating func start(
    _ element: TOCElement, name: UnsafeRawBufferPointer, attributes: XMLAttributes, line: Int, depth: Int
  ) throws {
    if !sawRoot {
      guard element == .xar else {
        throw XARError.malformedTOC(
          line: line, message: "the root element is <\(String(decoding: name, as: UTF8.self))>, not <xar>")
      }
      sawRoot = true
    }
    if element == .file && textTarget == nil
      && (stack.isEmpty ? outer == [.xar, .toc] : !stack[stack.count - 1].inData)
    {
      try openFile(id: attributes.value("id") ?? "", line: line, depth: depth)
    } else if !stack.isEmpty {
      try startInsideFile(element, attributes: attributes, line: line, depth: depth)
    } else {
      try startOutsideFiles(element, attributes: attributes, line: line)
    }
  }

  private mutating func end(_ element: TOCElement, line: Int, depth: Int) throws {
    if let target = textTarget, target.element == element {
      textTarget = nil
      try closeText(element, base64: target.base64, line: target.line)
      return
    }
    if !stack.isEmpty, element == .ea, let depth0 = attributeDepth, depth0 == depth {
      attributeDepth = nil
      // An attribute's bytes lie in the heap: they count as heap bytes the TOC references.
      if let offset = UInt64(attributeFields[.offset]?.trimmingASCIIWhitespace() ?? ""),
        let length = UInt64(attributeFields[.length]?.trimmingASCIIWhitespace() ?? "")
      {
        result.attributeRegions.append((offset, length))
      }
      return
    }
    if !stack.isEmpty {
      let top = stack.count - 1
      if element == .data && stack[top].inData && depth - stack[top].depth == 1 {
        stack[top].inData = false
        stack[top].data = openData
        openData = nil
      } else if element == .file && depth == stack[top].depth {
        if publish != nil {
          try storeWhole(top, line: line)
          stack.removeLast()
          openFiles -= 1
          return
        }
        let top = stack.removeLast()
        let entry = try TOCParser.finishEntry(top, line: line)
        if let seen = top.seenAtFirstChild, seen != top.seen { throw XARError.fieldAfterChildren(path: entry.path) }
        if let id = entry.hardLinkTarget { hardLinks.append((Int32(top.index), id)) }
        entries.store(entry, at: top.index)
        openFiles -= 1
      }
      return  // other elements inside a file are ignored
    }
    if outer.count == 3 && (element == .signature || element == .xSignature) && outer[2] == element {
      // A signature's bytes lie in the heap, where the TOC says: they count as heap bytes read.
      guard let offset = UInt64(signatureFields[.offset]?.trimmingASCIIWhitespace() ?? ""),
        let size = UInt64(signatureFields[.size]?.trimmingASCIIWhitespace() ?? "")
      else {
        throw XARError.malformedTOC(line: line, message: "<\(element.name)> needs a numeric <offset> and <size>")
      }
      // xar writes one of each; a second would be a region for nothing to check.
      guard !(element == .signature ? sawSignature : sawXSignature) else {
        throw XARError.duplicateElement(line: line, element: element.name, path: "toc")
      }
      if element == .signature { sawSignature = true } else { sawXSignature = true }
      result.signatures.append((offset, size))
    }
    if !outer.isEmpty { outer.removeLast() }
  }

  // MARK: Elements

  private mutating func openFile(id: String, line: Int, depth: Int) throws {
    guard entries.count < limits.maxEntries else { throw XARError.tooManyEntries(limit: limits.maxEntries) }
    guard stack.count < limits.maxDepth else { throw XARError.tooDeep(line: line, limit: limits.maxDepth) }
    if !stack.isEmpty {
      if stack[stack.count - 1].seenAtFirstChild == nil {
        stack[stack.count - 1].seenAtFirstChild = stack[stack.count - 1].seen
      }
      if publish != nil { try storeWhole(stack.count - 1, line: line) }
    }
    let parent = stack.isEmpty ? -1 : stack[stack.count - 1].index  // not `last`: that copies the builder
    let index = entries.open(parent: parent, line: line)
    stack.append(FileBuilder(index: index, parent: parent, depth: depth, line: line, id: id))
    openFiles += 1
  }

  private mutating func gatherText(of element: TOCElement, attributes: XMLAttributes, line: Int) {
    textTarget = (element, attributes.value("enctype") == "base64", line)
    text.removeAll(keepingCapacity: true)
  }

  private mutating func startInsideFile(_ element: TOCElement, attributes: XMLAttributes, line: Int, depth: Int)
    throws
  {
    let top = stack.count - 1
    let relative = depth - stack[top].depth
    if relative == 1 && element == .ea && !stack[top].inData {
      attributeDepth = depth
      attributeFields = [:]
      return
    }
    if let attributeDepth, depth == attributeDepth + 1, element == .offset || element == .length {
      gatherText(of: element, attributes: attributes, line: line)
      return
    }
    if relative == 1 && !stack[top].inData {
      let field = FileField(element)
      if let field {
        guard stack[top].seen & field.bit == 0 else {
          throw XARError.duplicateElement(line: line, element: field.element, path: stack[top].name ?? "(unnamed)")
        }
        stack[top].seen |= field.bit
      }
      switch field {
      case .data:
        openData = DataBuilder()
        stack[top].inData = true
      case .some(let field):
        if field == .type { stack[top].typeLinkAttribute = attributes.value("link") }
        gatherText(of: element, attributes: attributes, line: line)
      case nil:
        break
      }
    } else if relative == 2 && stack[top].inData, let field = DataField(element), openData != nil {
      guard ((openData?.seen ?? 0) & field.bit) == 0 else {
        throw XARError.duplicateElement(line: line, element: field.element, path: stack[top].name ?? "(unnamed)")
      }
      openData?.seen |= field.bit
      if let style = attributes.value("style") { openData?.styles[field] = style }
      gatherText(of: element, attributes: attributes, line: line)
    }
    // Other elements inside a file are ignored.
  }

  private mutating func startOutsideFiles(_ element: TOCElement, attributes: XMLAttributes, line: Int) throws {
    outer.append(element)
    if outer == [.xar, .toc, .checksum] {
      guard checksumStyle == nil else { throw XARError.duplicateElement(line: line, element: "checksum", path: "toc") }
      checksumStyle = attributes.value("style") ?? ""
    }
    if outer == [.xar, .toc, .signature] || outer == [.xar, .toc, .xSignature] {
      signatureFields = [:]
    }
    if outer == [.xar, .toc, .checksum, .offset] || outer == [.xar, .toc, .checksum, .size]
      || outer == [.xar, .toc, .creationTime]
      || (outer.count == 4 && (outer[2] == .signature || outer[2] == .xSignature)
        && (element == .offset || element == .size))
    {
      gatherText(of: element, attributes: attributes, line: line)
    }
  }

  /// The end of an element whose text was gathered.
  private mutating func closeText(_ element: TOCElement, base64: Bool, line: Int) throws {
    let text = String(decoding: self.text, as: UTF8.self)
    if !stack.isEmpty, attributeDepth != nil {
      guard attributeFields[element] == nil else {
        throw XARError.duplicateElement(
          line: line, element: element.name, path: "\(stack[stack.count - 1].name ?? "(unnamed)") ea")
      }
      attributeFields[element] = text
      return
    }
    if !stack.isEmpty {
      if stack[stack.count - 1].inData {
        if let field = DataField(element) { openData?.fields[field] = text }
      } else {
        try closeFileField(element, base64: base64, text: text, line: line)
      }
      return
    }
    if outer.count == 4 && outer[2] == .checksum {
      guard checksumFields[element] == nil else {
        throw XARError.duplicateElement(line: line, element: element.name, path: "toc checksum")
      }
      checksumFields[element] = text
    } else if outer.count == 4 && (outer[2] == .signature || outer[2] == .xSignature) {
      guard signatureFields[element] == nil else {
        throw XARError.duplicateElement(line: line, element: element.name, path: "toc \(outer[2].name)")
      }
      signatureFields[element] = text
    } else if element == .creationTime {
      result.creationTime = XARTimestamp(iso8601: text.trimmingASCIIWhitespace())
    }
    outer.removeLast()
  }

  /// Stores the text of a `<file>` child (decoding `enctype="base64"`).
  private mutating func closeFileField(_ element: TOCElement, base64: Bool, text: String, line: Int) throws {
    var value = text
    if base64 {
      guard let bytes = Base64.decode(text), let decoded = String(validating: bytes, as: UTF8.self) else {
        throw XARError.invalidValue(line: line, element: element.name, value: text)
      }
      value = decoded
    }
    switch FileField(element) {
    case .name: stack[stack.count - 1].name = value
    case .type: stack[stack.count - 1].type = value.trimmingASCIIWhitespace()
    case .some(let field) where field.isAttribute: stack[stack.count - 1].fields[field] = value
    default: break
    }
  }

  // MARK: Streaming

  /// Stores the open `<file>` at `position` in the stack, if it is not stored yet, and hands out
  /// the entries now whole; checks that a file stored before has gained no field since.
  private mutating func storeWhole(_ position: Int, line: Int) throws {
    if stack[position].stored {
      guard stack[position].seenAtFirstChild.map({ $0 == stack[position].seen }) ?? true else {
        throw XARError.fieldAfterChildren(path: entries.path(at: stack[position].index))
      }
      return
    }
    let entry = try TOCParser.finishEntry(stack[position], line: line)
    guard entry.hardLinkTarget == nil else { throw CannotStream(reason: "a hard link") }
    let index = stack[position].index
    // Entries are stored in document order: each before the next one opens. (Never otherwise;
    // if it were, the stream would stop, not the program.)
    guard index == stored else { throw CannotStream(reason: "an entry was whole out of order") }
    entries.store(entry, at: index)
    stack[position].stored = true
    try checkPath(at: index)
    stored = index + 1
    if stored - published >= (published == 0 ? 256 : 2048) {
      published = stored
      try publish?(entries, stored)
    }
  }

  /// Sets the entry's full path length (its parent's is set) and checks the path limits.
  private mutating func checkPath(at i: Int) throws {
    let pathBytes = entries.computePathLength(at: i)
    guard pathBytes <= limits.maxPathBytes else {
      throw XARError.pathTooLong(line: entries.tocLine(at: i), limit: limits.maxPathBytes)
    }
    guard entries.totalPathBytes <= limits.maxTotalPathBytes else {
      throw XARError.tooManyPathBytes(limit: limits.maxTotalPathBytes)
    }
  }

  // MARK: The end of the document

  /// The TOC checksum, full paths, and hard-link targets by id.
  private mutating func finish() throws -> Result {
    guard sawRoot else { throw XARError.malformedTOC(line: 0, message: "the TOC is empty") }
    if let style = checksumStyle {
      guard let algorithm = XARChecksumAlgorithm(styleName: style) else {
        throw XARError.unsupportedChecksum(style.isEmpty ? "(no style)" : style)
      }
      guard let offset = UInt64(checksumFields[.offset]?.trimmingASCIIWhitespace() ?? ""),
        let size = UInt64(checksumFields[.size]?.trimmingASCIIWhitespace() ?? "")
      else {
        throw XARError.malformedTOC(line: 0, message: "<checksum> needs a numeric <offset> and <size>")
      }
      result.checksum = ChecksumLocation(algorithm: algorithm, offset: offset, size: size)
    }

    guard openFiles == 0 else { throw XARError.malformedTOC(line: 0, message: "a <file> is not closed") }
    // (Streaming checked each path as its entry was stored.)
    for i in stored..<entries.count { try checkPath(at: i) }
    // Ids are unique: of equal ids, the second in document order is the one reported.
    let byID = entries.indicesByID()
    var duplicate: Int?
    for (a, b) in zip(byID, byID.dropFirst()) where entries.sameID(Int(a), Int(b)) {
      duplicate = min(duplicate ?? Int.max, Int(b))
    }
    if let duplicate {
      throw XARError.invalidValue(
        line: entries.tocLine(at: duplicate), element: "file id", value: entries.id(at: duplicate))
    }
    for (index, id) in hardLinks {
      let i = Int(index)
      guard let target = entries.index(ofID: id, in: byID), entries.kind(at: target) == .file, target != i else {
        throw XARError.unresolvedHardLink(path: entries.path(at: i), id: id)
      }
      entries.resolveHardLink(at: i, to: target)
    }
    hardLinks = []
    entries.finishBuilding()
    result.entries = entries
    entries = XAREntryTable()
    return result
  }

  /// The entry a closed `<file>` describes; its path is the name alone, and a hard link's
  /// target is the id it names (``finish()`` resolves both).
  private static func finishEntry(_ b: FileBuilder, line: Int) throws -> XAREntry {
    guard let name = b.name else { throw XARError.missingName(line: b.line) }
    guard !name.isEmpty else { throw XARError.emptyName(line: b.line) }
    if name.utf8.contains(UInt8(ascii: "/")) {
      throw XARError.invalidName(line: b.line, name: name, reason: "a name cannot hold '/'")
    }
    if name.utf8.contains(0) {
      throw XARError.invalidName(line: b.line, name: name, reason: "a name cannot hold NUL")
    }
    let typeName = b.type ?? "file"
    var kind = EntryKind(xarTypeName: typeName)
    var hardLinkTarget: String? = nil
    if kind == .hardLink {
      let link = b.typeLinkAttribute ?? ""
      if link == "original" {
        kind = .file
      } else {
        hardLinkTarget = link
      }
    }
    func number(_ field: FileField, radix: Int = 10) throws -> UInt64? {
      let element = field.element
      guard let text = b.fields[field] else { return nil }
      guard let value = UInt64(text.trimmingASCIIWhitespace(), radix: radix) else {
        throw XARError.invalidValue(line: b.line, element: element, value: text)
      }
      return value
    }
    var parsedMode: UInt32? = nil
    if let m = try number(.mode, radix: 8) {
      guard m <= 0o7777 else {
        throw XARError.invalidValue(line: b.line, element: "mode", value: b.fields[.mode] ?? "")
      }
      parsedMode = UInt32(m)
    }
    var parsedMtime: XARTimestamp? = nil
    if let text = b.fields[.mtime] {
      guard let t = XARTimestamp(iso8601: text.trimmingASCIIWhitespace()) else {
        throw XARError.invalidValue(line: b.line, element: "mtime", value: text)
      }
      parsedMtime = t
    }
    var data: XARData? = nil
    if let d = b.data {
      func number(_ field: DataField) throws -> UInt64 {
        guard let text = d.fields[field], let value = UInt64(text.trimmingASCIIWhitespace()) else {
          throw XARError.invalidValue(line: b.line, element: field.element, value: d.fields[field] ?? "(missing)")
        }
        return value
      }
      func checksum(_ field: DataField) throws -> XARChecksum? {
        guard let text = d.fields[field] else { return nil }
        let style = d.styles[field] ?? ""
        guard let algorithm = XARChecksumAlgorithm(styleName: style), algorithm != .none else {
          throw XARError.invalidValue(line: b.line, element: field.element + " style", value: style)
        }
        guard let value = XARChecksum(algorithm: algorithm, hex: text) else {
          throw XARError.invalidValue(line: b.line, element: field.element, value: text)
        }
        return value
      }
      let encoding = XAREncoding(style: d.styles[.encoding] ?? "application/octet-stream")
      data = XARData(
        offset: try number(.offset), length: try number(.length), size: try number(.size),
        encoding: encoding, archivedChecksum: try checksum(.archivedChecksum),
        extractedChecksum: try checksum(.extractedChecksum))
      if encoding == .none, let data, data.length != data.size {
        throw XARError.invalidValue(
          line: b.line, element: "length",
          value: "\(data.length) (stored without encoding, but size is \(data.size))")
      }
    }
    // What other readers would make of a contradiction differs, so it is never guessed at.
    if kind == .file && b.fields[.link] != nil {
      throw XARError.contradictoryEntry(
        line: b.line, name: name, reason: "is typed 'file' but carries a <link> (libarchive makes it a symlink)")
    }
    if data != nil && kind != .file {
      throw XARError.contradictoryEntry(
        line: b.line, name: name,
        reason:
          "is a \(b.type ?? "file") but carries <data> (extractors may write those bytes; a \(b.type ?? "file") has none)"
      )
    }
    return XAREntry(
      id: b.id, path: name, kind: kind, otherTypeName: typeName, mode: parsedMode, uid: try number(.uid),
      gid: try number(.gid),
      user: b.fields[.user], group: b.fields[.group], mtime: parsedMtime, linkTarget: b.fields[.link],
      hardLinkTarget: hardLinkTarget, data: data, tocLine: b.line)
  }

  private static func translate(_ error: XMLReadError) -> XARError {
    switch error {
    case .malformed(let line, let message): return .malformedTOC(line: line, message: message)
    case .forbidden(let line, let what): return .forbiddenMarkup(line: line, what: what)
    }
  }
}
