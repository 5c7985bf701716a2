import CLibXML2

// The one file of this module that calls libxml2.

/// Writes XML through libxml2's text writer, indented with one space per level: into memory,
/// or streamed in chunks to a closure (so a large document is never held whole). The TOC is
/// written by ``XMLStreamWriter`` (the same bytes, faster); this one is the reference
/// `XMLStreamWriterTests` compares it against.
package final class XMLTextWriter {
  private let buffer: xmlBufferPtr?
  private var writer: xmlTextWriterPtr?
  private let output: Output?

  private final class Output {
    let consume: (UnsafeRawBufferPointer) -> Void
    init(_ consume: @escaping (UnsafeRawBufferPointer) -> Void) { self.consume = consume }
  }

  /// Writes into memory; ``finish()`` returns the document.
  package init() {
    buffer = xmlBufferCreate()!
    output = nil
    writer = xmlNewTextWriterMemory(buffer, 0)!
    start()
  }

  /// Hands the document to `consume` in chunks as it is written; ``finishStreaming()`` flushes
  /// the rest.
  package init(streamingTo consume: @escaping (UnsafeRawBufferPointer) -> Void) {
    buffer = nil
    let output = Output(consume)
    self.output = output
    let io = xmlOutputBufferCreateIO(
      { context, bytes, length in
        guard let context, let bytes, length > 0 else { return 0 }
        Unmanaged<Output>.fromOpaque(context).takeUnretainedValue().consume(
          UnsafeRawBufferPointer(start: bytes, count: Int(length)))
        return length
      }, nil, Unmanaged.passUnretained(output).toOpaque(), nil)
    writer = xmlNewTextWriter(io)!
    start()
  }

  private func start() {
    xmlTextWriterSetIndent(writer, 1)
    xmlTextWriterSetIndentString(writer, " ")
    xmlTextWriterStartDocument(writer, "1.0", "UTF-8", nil)
  }

  deinit {
    if let writer { xmlFreeTextWriter(writer) }
    if let buffer { xmlBufferFree(buffer) }
  }

  /// Ends the document and delivers what is left to the streaming closure.
  package func finishStreaming() {
    xmlTextWriterEndDocument(writer)
    xmlTextWriterFlush(writer)
    xmlFreeTextWriter(writer)  // closes the output buffer, flushing it
    writer = nil
  }

  package func startElement(_ name: String) {
    xmlTextWriterStartElement(writer, name)
  }

  package func attribute(_ name: String, _ value: String) {
    xmlTextWriterWriteAttribute(writer, name, value)
  }

  /// Writes text content, escaping what XML requires.
  package func text(_ content: String) {
    xmlTextWriterWriteString(writer, content)
  }

  package func endElement() {
    xmlTextWriterEndElement(writer)
  }

  /// `<name>content</name>`.
  package func element(_ name: String, _ content: String) {
    xmlTextWriterWriteElement(writer, name, content)
  }

  /// Ends the document and returns its bytes.
  package func finish() -> [UInt8] {
    finish { Array($0) }
  }

  /// Ends the document and lends its bytes to `body`, without copying them.
  package func finish<T>(_ body: (UnsafeRawBufferPointer) throws -> T) rethrows -> T {
    xmlTextWriterEndDocument(writer)
    xmlTextWriterFlush(writer)
    let count = buffer.map { Int(xmlBufferLength($0)) } ?? 0
    guard count > 0, let content = xmlBufferContent(buffer) else {
      return try body(UnsafeRawBufferPointer(start: nil, count: 0))
    }
    return try body(UnsafeRawBufferPointer(start: content, count: count))
  }
}

/// One step of a streaming XML parse.
package struct XMLEvent {
  package enum Kind: Equatable {
    /// A start tag; `isEmpty` for `<x/>`, which has no matching ``end``.
    case start(name: String, attributes: [(name: String, value: String)], isEmpty: Bool)
    case end(name: String)
    /// Character data, entities already resolved for the predefined five.
    case text(String)

    package static func == (a: Kind, b: Kind) -> Bool {
      switch (a, b) {
      case (.start(let n1, let a1, let e1), .start(let n2, let a2, let e2)):
        return n1 == n2 && e1 == e2 && a1.map { $0.name } == a2.map { $0.name }
          && a1.map { $0.value } == a2.map { $0.value }
      case (.end(let n1), .end(let n2)): return n1 == n2
      case (.text(let t1), .text(let t2)): return t1 == t2
      default: return false
      }
    }
  }
  package var kind: Kind
  /// The line in the document, for messages.
  package var line: Int
  /// Nesting depth; the root element is 0.
  package var depth: Int
}

/// Why an XML document was refused.
package enum XMLReadError: Error, Equatable {
  /// Not well formed; libxml2's message.
  case malformed(line: Int, message: String)
  /// Markup refused for safety: a DOCTYPE, an entity declaration or reference.
  case forbidden(line: Int, what: String)
}

extension XMLReadError {
  /// libxml2's error as `malformed`, with its line and message; nil for warnings.
  fileprivate init?(_ error: UnsafePointer<xmlError>) {
    guard error.pointee.level.rawValue >= XML_ERR_ERROR.rawValue else { return nil }
    var message = error.pointee.message.map { String(cString: $0) } ?? "parse error"
    while message.last == "\n" { message.removeLast() }
    self = .malformed(line: Int(error.pointee.line), message: message)
  }
}

/// A streaming XML reader over bytes in memory, through libxml2's `xmlTextReader`, configured so
/// that it can be trusted with hostile input: no network, no DTD loading, no entity substitution.
/// Entity references and (unless allowed) DOCTYPEs are refused.
package final class XMLStreamReader {
  private let reader: xmlTextReaderPtr
  private let bytes: UnsafeMutableRawBufferPointer?
  private let input: Input?

  /// Feeds a streamed document to libxml2.
  private final class Input {
    let pull: (UnsafeMutableRawBufferPointer) throws -> Int
    var error: Error?
    init(_ pull: @escaping (UnsafeMutableRawBufferPointer) throws -> Int) { self.pull = pull }
  }

  /// Parses a document pulled in pieces: `pull` fills the buffer it is given and returns how
  /// many bytes it wrote, 0 at the end. An error it throws ends the parse and is rethrown.
  package init(pulling pull: @escaping (UnsafeMutableRawBufferPointer) throws -> Int, allowDoctype: Bool = false) throws
  {
    let input = Input(pull)
    self.input = input
    bytes = nil
    let options = Int32(XML_PARSE_NONET.rawValue | XML_PARSE_NOCDATA.rawValue)
    guard
      let r = xmlReaderForIO(
        { context, buffer, length in
          guard let context, let buffer, length > 0 else { return 0 }
          let input = Unmanaged<Input>.fromOpaque(context).takeUnretainedValue()
          do {
            return Int32(try input.pull(UnsafeMutableRawBufferPointer(start: buffer, count: Int(length))))
          } catch {
            input.error = error
            return -1
          }
        }, nil, Unmanaged.passUnretained(input).toOpaque(), nil, nil, options)
    else {
      throw XMLReadError.malformed(line: 0, message: "cannot start the XML parser")
    }
    reader = r
    self.allowDoctype = allowDoctype
    let errors = ErrorBox()
    self.errors = errors
    XMLStreamReader.installErrorHandler(r, errors)
  }

  /// The error the pull closure threw, if any.
  package var inputError: Error? { input?.error }
  private let errors: ErrorBox
  private let allowDoctype: Bool

  private final class ErrorBox {
    var first: (line: Int, message: String)?
  }

  /// - Parameter allowDoctype: accept a `<!DOCTYPE>` without an internal subset (plists have one).
  package convenience init(bytes source: [UInt8], allowDoctype: Bool = false) throws {
    let copy = UnsafeMutableRawBufferPointer.allocate(byteCount: max(1, source.count), alignment: 1)
    source.withUnsafeBytes { raw in copy.copyMemory(from: raw) }
    try self.init(taking: copy, count: source.count, allowDoctype: allowDoctype)
  }

  /// Parses the first `count` bytes of `buffer`, which the reader takes over and frees.
  package init(taking buffer: UnsafeMutableRawBufferPointer, count: Int, allowDoctype: Bool = false) throws {
    guard count < Int(Int32.max), count <= buffer.count else {
      buffer.deallocate()
      throw XMLReadError.malformed(line: 0, message: "document too large")
    }
    bytes = buffer
    let options = Int32(XML_PARSE_NONET.rawValue | XML_PARSE_NOCDATA.rawValue)
    guard
      let r = xmlReaderForMemory(
        buffer.baseAddress?.assumingMemoryBound(to: CChar.self), Int32(count), nil, nil, options)
    else {
      buffer.deallocate()
      throw XMLReadError.malformed(line: 0, message: "cannot start the XML parser")
    }
    reader = r
    input = nil
    self.allowDoctype = allowDoctype
    let errors = ErrorBox()
    self.errors = errors
    XMLStreamReader.installErrorHandler(r, errors)
  }

  private static func installErrorHandler(_ r: xmlTextReaderPtr, _ errors: ErrorBox) {
    xmlTextReaderSetStructuredErrorHandler(
      r,
      { context, error in
        guard let context, let error else { return }
        let box = Unmanaged<ErrorBox>.fromOpaque(context).takeUnretainedValue()
        guard box.first == nil, let failure = XMLReadError(error) else { return }
        if case .malformed(let line, let message) = failure { box.first = (line, message) }
      }, Unmanaged.passUnretained(errors).toOpaque())
  }

  /// The document libxml2 hands over when asked for it (to look at a DOCTYPE).
  private var ownedDocument: xmlDocPtr?

  deinit {
    xmlFreeTextReader(reader)
    if let ownedDocument { xmlFreeDoc(ownedDocument) }
    bytes?.deallocate()
  }

  /// The line of the current node (where the parser is, if the node has none).
  package var line: Int {
    if let node = xmlTextReaderCurrentNode(reader) {
      let line = xmlGetLineNo(node)
      if line > 0 { return Int(line) }
    }
    return Int(xmlTextReaderGetParserLineNumber(reader))
  }

  /// The next event, or nil at the end of the document. With `ignoringText`, character data is
  /// skipped without being turned into a string (for a consumer that ignores it here).
  package func next(ignoringText: Bool = false) throws -> XMLEvent? {
    while true {
      let status = xmlTextReaderRead(reader)
      if status == 0 {
        if let inputError = input?.error { throw inputError }
        if let error = errors.first { throw XMLReadError.malformed(line: error.line, message: error.message) }
        return nil
      }
      guard status == 1 else {
        if let inputError = input?.error { throw inputError }
        let error = errors.first ?? (line, "parse error")
        throw XMLReadError.malformed(line: error.line, message: error.message)
      }
      let type = xmlTextReaderNodeType(reader)
      let depth = Int(xmlTextReaderDepth(reader))
      switch type {
      case Int32(XML_READER_TYPE_ELEMENT.rawValue):
        let name = string(xmlTextReaderConstName(reader))
        let isEmpty = xmlTextReaderIsEmptyElement(reader) == 1
        var attributes: [(name: String, value: String)] = []
        if xmlTextReaderHasAttributes(reader) == 1 {
          while xmlTextReaderMoveToNextAttribute(reader) == 1 {
            attributes.append(
              (string(xmlTextReaderConstName(reader)), string(xmlTextReaderConstValue(reader))))
          }
          xmlTextReaderMoveToElement(reader)
        }
        return XMLEvent(
          kind: .start(name: name, attributes: attributes, isEmpty: isEmpty), line: line,
          depth: depth)
      case Int32(XML_READER_TYPE_END_ELEMENT.rawValue):
        return XMLEvent(
          kind: .end(name: string(xmlTextReaderConstName(reader))), line: line, depth: depth)
      case Int32(XML_READER_TYPE_TEXT.rawValue), Int32(XML_READER_TYPE_CDATA.rawValue),
        Int32(XML_READER_TYPE_WHITESPACE.rawValue),
        Int32(XML_READER_TYPE_SIGNIFICANT_WHITESPACE.rawValue):
        if ignoringText { continue }
        return XMLEvent(
          kind: .text(string(xmlTextReaderConstValue(reader))), line: line, depth: depth)
      case Int32(XML_READER_TYPE_ENTITY_REFERENCE.rawValue),
        Int32(XML_READER_TYPE_ENTITY.rawValue):
        throw XMLReadError.forbidden(line: line, what: "an entity reference")
      case Int32(XML_READER_TYPE_DOCUMENT_TYPE.rawValue):
        guard allowDoctype else { throw XMLReadError.forbidden(line: line, what: "a DOCTYPE") }
        // After this call the document is ours to free (see deinit).
        if ownedDocument == nil { ownedDocument = xmlTextReaderCurrentDoc(reader) }
        if let doc = ownedDocument, let subset = doc.pointee.intSubset,
          subset.pointee.entities != nil || subset.pointee.children != nil
        {
          throw XMLReadError.forbidden(line: line, what: "a DOCTYPE with declarations")
        }
      default:
        continue  // comments, processing instructions, XML declaration
      }
    }
  }

  private func string(_ pointer: UnsafePointer<xmlChar>?) -> String {
    guard let pointer else { return "" }
    return String(cString: pointer)
  }
}

/// Receives a document's events from ``XMLEventParser`` as bytes lent for the call, never as
/// strings (so a consumer pays only for what it keeps). Throwing stops the parse.
package protocol XMLEventHandler: AnyObject {
  /// A start tag (an empty element `<x/>` gets a start and an end). `name` is the qualified
  /// name; `depth` is 0 for the root. Returns true to be given the character data from here to
  /// this element's end (other text, most of a document's indentation, is skipped unseen).
  func start(name: UnsafeRawBufferPointer, attributes: XMLAttributes, line: Int, depth: Int) throws -> Bool
  /// Character data (the predefined entities resolved), possibly in several pieces; only
  /// inside an element whose ``start(name:attributes:line:depth:)`` asked for it.
  func text(_ bytes: UnsafeRawBufferPointer)
  func end(name: UnsafeRawBufferPointer, line: Int, depth: Int) throws
}

/// A start tag's attributes, as libxml2 hands them to SAX2 (valid during the call).
package struct XMLAttributes {
  fileprivate let base: UnsafeMutablePointer<UnsafePointer<xmlChar>?>?
  fileprivate let count: Int

  /// The value of the unprefixed attribute `name`, if present.
  package func value(_ name: StaticString) -> String? {
    guard let base else { return nil }
    return name.withUTF8Buffer { wanted in
      for i in 0..<count {
        let entry = base + 5 * i  // localname, prefix, URI, value, end
        guard entry[1] == nil, let local = entry[0], let start = entry[3], let end = entry[4] else { continue }
        let length = Int(xmlStrlen(local))
        guard length == wanted.count, UnsafeBufferPointer(start: local, count: length).elementsEqual(wanted) else {
          continue
        }
        return XMLAttributes.decode(UnsafeBufferPointer(start: start, count: end - start))
      }
      return nil
    }
  }

  /// SAX2 without entity substitution hands `&` over as `&#38;` (and may leave other
  /// references): they are resolved here, so values read as every other reader reads them.
  private static func decode(_ raw: UnsafeBufferPointer<UInt8>) -> String {
    guard raw.contains(UInt8(ascii: "&")) else { return String(decoding: raw, as: UTF8.self) }
    var out: [UInt8] = []
    var i = 0
    while i < raw.count {
      guard raw[i] == UInt8(ascii: "&"), let semicolon = raw[i...].firstIndex(of: UInt8(ascii: ";")) else {
        out.append(raw[i])
        i += 1
        continue
      }
      let reference = String(decoding: raw[(i + 1)..<semicolon], as: UTF8.self)
      var scalar: Unicode.Scalar?
      switch reference {
      case "amp": scalar = "&"
      case "lt": scalar = "<"
      case "gt": scalar = ">"
      case "quot": scalar = "\""
      case "apos": scalar = "'"
      default:
        if reference.hasPrefix("#x") || reference.hasPrefix("#X") {
          scalar = UInt32(reference.dropFirst(2), radix: 16).flatMap(Unicode.Scalar.init)
        } else if reference.hasPrefix("#") {
          scalar = UInt32(reference.dropFirst(), radix: 10).flatMap(Unicode.Scalar.init)
        }
      }
      if let scalar {
        out.append(contentsOf: String(Character(scalar)).utf8)
        i = semicolon + 1
      } else {
        out.append(raw[i])
        i += 1
      }
    }
    return String(decoding: out, as: UTF8.self)
  }
}

/// A streaming XML parser over a pulled document, through libxml2's SAX2 push interface: no
/// tree, no node per element, no string per name. Trusted with hostile input as
/// ``XMLStreamReader`` is: no network, no DTD, no entity substitution; a DOCTYPE, an entity
/// declaration or an entity reference other than the five predefined ones is refused.
package final class XMLEventParser {
  private var context: xmlParserCtxtPtr?
  private let handler: XMLEventHandler
  private var depth = 0
  /// The depth of the element whose text the handler asked for, if any.
  private var textDepth: Int?
  /// The first failure: the handler's error, a refusal, or libxml2's first error.
  private var failure: Error?
  private var scratch: [UInt8] = []

  private init(handler: XMLEventHandler) { self.handler = handler }

  /// Parses the document `pull` delivers (it fills the buffer it is given and returns how many
  /// bytes, 0 at the end), calling `handler` for each event. Throws the handler's or `pull`'s
  /// error, or ``XMLReadError``.
  package static func parse(
    pulling pull: (UnsafeMutableRawBufferPointer) throws -> Int, into handler: XMLEventHandler
  ) throws {
    let parser = XMLEventParser(handler: handler)
    try parser.run(pull)
  }

  private func run(_ pull: (UnsafeMutableRawBufferPointer) throws -> Int) throws {
    var sax = xmlSAXHandler()
    sax.initialized = UInt32(XML_SAX2_MAGIC)
    sax.startElementNs = { context, localname, prefix, _, _, _, count, _, attributes in
      guard let context, let localname else { return }
      Unmanaged<XMLEventParser>.fromOpaque(context)._withUnsafeGuaranteedRef {
        $0.started(localname, prefix: prefix, attributes: XMLAttributes(base: attributes, count: Int(count)))
      }
    }
    sax.endElementNs = { context, localname, prefix, _ in
      guard let context, let localname else { return }
      Unmanaged<XMLEventParser>.fromOpaque(context)._withUnsafeGuaranteedRef { $0.ended(localname, prefix: prefix) }
    }
    let characters: charactersSAXFunc = { context, bytes, length in
      guard let context, let bytes, length > 0 else { return }
      // Called for every run of text, the indentation included: no retain, and nothing more
      // unless the handler asked for this element's text.
      Unmanaged<XMLEventParser>.fromOpaque(context)._withUnsafeGuaranteedRef { parser in
        guard parser.textDepth != nil, parser.failure == nil else { return }
        parser.handler.text(UnsafeRawBufferPointer(start: bytes, count: Int(length)))
      }
    }
    sax.characters = characters
    sax.ignorableWhitespace = characters
    sax.internalSubset = { context, _, _, _ in
      guard let context else { return }
      Unmanaged<XMLEventParser>.fromOpaque(context).takeUnretainedValue().refuse("a DOCTYPE")
    }
    sax.entityDecl = { context, _, _, _, _, _ in
      guard let context else { return }
      Unmanaged<XMLEventParser>.fromOpaque(context).takeUnretainedValue().refuse("an entity declaration")
    }
    sax.reference = { context, _ in
      guard let context else { return }
      Unmanaged<XMLEventParser>.fromOpaque(context).takeUnretainedValue().refuse("an entity reference")
    }
    sax.serror = { context, error in
      guard let context, let error, let failure = XMLReadError(error) else { return }
      let parser = Unmanaged<XMLEventParser>.fromOpaque(context).takeUnretainedValue()
      if parser.failure == nil { parser.failure = failure }
    }

    var buffer = [UInt8](repeating: 0, count: 64 * 1024)
    var first = try buffer.withUnsafeMutableBytes { try pull($0) }
    let me = Unmanaged.passUnretained(self).toOpaque()
    // The first bytes go to the context's creation (libxml2 detects the encoding from them).
    let lead = min(first, 4)
    guard
      let context = buffer.withUnsafeBytes({ raw in
        xmlCreatePushParserCtxt(
          &sax, me, raw.baseAddress?.assumingMemoryBound(to: CChar.self), Int32(lead), nil)
      })
    else { throw XMLReadError.malformed(line: 0, message: "cannot start the XML parser") }
    self.context = context
    defer {
      if let document = context.pointee.myDoc { xmlFreeDoc(document) }
      xmlFreeParserCtxt(context)
      self.context = nil
    }
    xmlCtxtUseOptions(context, Int32(XML_PARSE_NONET.rawValue | XML_PARSE_NOCDATA.rawValue))
    var offset = lead
    while true {
      if first - offset > 0 {
        _ = buffer.withUnsafeBytes { raw in
          xmlParseChunk(
            context, (raw.baseAddress! + offset).assumingMemoryBound(to: CChar.self), Int32(first - offset), 0)
        }
      }
      if let failure { throw failure }
      if context.pointee.disableSAX != 0 || context.pointee.wellFormed == 0 { break }
      offset = 0
      first = try buffer.withUnsafeMutableBytes { try pull($0) }
      if first == 0 { break }
    }
    if failure == nil && context.pointee.disableSAX == 0 { xmlParseChunk(context, nil, 0, 1) }
    if let failure { throw failure }
    guard context.pointee.wellFormed != 0 else {
      throw XMLReadError.malformed(line: line, message: "the document is not well formed")
    }
  }

  private var line: Int {
    guard let input = context?.pointee.input else { return 0 }
    return Int(input.pointee.line)
  }

  private func refuse(_ what: String) {
    if failure == nil { failure = XMLReadError.forbidden(line: line, what: what) }
    if let context { xmlStopParser(context) }
  }

  /// The qualified name: the local name alone, or `prefix:local` (in a scratch buffer).
  private func withName<T>(
    _ local: UnsafePointer<xmlChar>, prefix: UnsafePointer<xmlChar>?, _ body: (UnsafeRawBufferPointer) throws -> T
  ) rethrows -> T {
    let localLength = Int(xmlStrlen(local))
    guard let prefix else { return try body(UnsafeRawBufferPointer(start: local, count: localLength)) }
    let prefixLength = Int(xmlStrlen(prefix))
    scratch.removeAll(keepingCapacity: true)
    scratch.append(contentsOf: UnsafeBufferPointer(start: prefix, count: prefixLength))
    scratch.append(UInt8(ascii: ":"))
    scratch.append(contentsOf: UnsafeBufferPointer(start: local, count: localLength))
    return try scratch.withUnsafeBytes { try body($0) }
  }

  private func started(_ local: UnsafePointer<xmlChar>, prefix: UnsafePointer<xmlChar>?, attributes: XMLAttributes) {
    guard failure == nil else { return }
    let depth = self.depth
    self.depth += 1
    do {
      let wantsText = try withName(local, prefix: prefix) {
        try handler.start(name: $0, attributes: attributes, line: line, depth: depth)
      }
      if wantsText && textDepth == nil { textDepth = depth }
    } catch {
      failure = error
      if let context { xmlStopParser(context) }
    }
  }

  private func ended(_ local: UnsafePointer<xmlChar>, prefix: UnsafePointer<xmlChar>?) {
    guard failure == nil else { return }
    depth -= 1
    let depth = self.depth
    if textDepth == depth { textDepth = nil }
    do {
      try withName(local, prefix: prefix) { try handler.end(name: $0, line: line, depth: depth) }
    } catch {
      failure = error
      if let context { xmlStopParser(context) }
    }
  }
}
