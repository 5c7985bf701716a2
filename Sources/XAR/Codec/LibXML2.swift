import CLibXML2

// The one file of this module that calls libxml2.

/// Writes XML through libxml2's text writer, indented with one space per level: into memory,
/// or streamed in chunks to a closure (so a large document is never held whole).
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
        guard box.first == nil, error.pointee.level.rawValue >= XML_ERR_ERROR.rawValue else { return }
        var message = error.pointee.message.map { String(cString: $0) } ?? "parse error"
        while message.last == "\n" { message.removeLast() }
        box.first = (Int(error.pointee.line), message)
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
