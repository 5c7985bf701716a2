import CLibXML2

// The one file of this module that calls libxml2.

/// Writes XML through libxml2's text writer into memory, indented with one space per level.
public final class XMLTextWriter {
  private let buffer: xmlBufferPtr
  private let writer: xmlTextWriterPtr

  public init() {
    buffer = xmlBufferCreate()!
    writer = xmlNewTextWriterMemory(buffer, 0)!
    xmlTextWriterSetIndent(writer, 1)
    xmlTextWriterSetIndentString(writer, " ")
    xmlTextWriterStartDocument(writer, "1.0", "UTF-8", nil)
  }

  deinit {
    xmlFreeTextWriter(writer)
    xmlBufferFree(buffer)
  }

  public func startElement(_ name: String) {
    xmlTextWriterStartElement(writer, name)
  }

  public func attribute(_ name: String, _ value: String) {
    xmlTextWriterWriteAttribute(writer, name, value)
  }

  /// Writes text content, escaping what XML requires.
  public func text(_ content: String) {
    xmlTextWriterWriteString(writer, content)
  }

  public func endElement() {
    xmlTextWriterEndElement(writer)
  }

  /// `<name>content</name>`.
  public func element(_ name: String, _ content: String) {
    xmlTextWriterWriteElement(writer, name, content)
  }

  /// Ends the document and returns its bytes.
  public func finish() -> [UInt8] {
    xmlTextWriterEndDocument(writer)
    xmlTextWriterFlush(writer)
    let count = Int(xmlBufferLength(buffer))
    guard count > 0, let content = xmlBufferContent(buffer) else { return [] }
    return Array(UnsafeBufferPointer(start: content, count: count))
  }
}

/// One step of a streaming XML parse.
public struct XMLEvent {
  public enum Kind: Equatable {
    /// A start tag; `isEmpty` for `<x/>`, which has no matching ``end``.
    case start(name: String, attributes: [(name: String, value: String)], isEmpty: Bool)
    case end(name: String)
    /// Character data, entities already resolved for the predefined five.
    case text(String)

    public static func == (a: Kind, b: Kind) -> Bool {
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
  public var kind: Kind
  /// The line in the document, for messages.
  public var line: Int
  /// Nesting depth; the root element is 0.
  public var depth: Int
}

/// Why an XML document was refused.
public enum XMLReadError: Error, Equatable {
  /// Not well formed; libxml2's message.
  case malformed(line: Int, message: String)
  /// Markup refused for safety: a DOCTYPE, an entity declaration or reference.
  case forbidden(line: Int, what: String)
}

/// A streaming XML reader over bytes in memory, through libxml2's `xmlTextReader`, configured so
/// that it can be trusted with hostile input: no network, no DTD loading, no entity substitution.
/// Entity references and (unless allowed) DOCTYPEs are refused.
public final class XMLStreamReader {
  private let reader: xmlTextReaderPtr
  private let bytes: UnsafeMutableBufferPointer<CChar>
  private let errors: ErrorBox
  private let allowDoctype: Bool

  private final class ErrorBox {
    var first: (line: Int, message: String)?
  }

  /// - Parameter allowDoctype: accept a `<!DOCTYPE>` without an internal subset (plists have one).
  public init(bytes source: [UInt8], allowDoctype: Bool = false) throws {
    guard source.count < Int(Int32.max) else {
      throw XMLReadError.malformed(line: 0, message: "document too large")
    }
    let copy = UnsafeMutableBufferPointer<CChar>.allocate(capacity: max(1, source.count))
    source.withUnsafeBytes { raw in UnsafeMutableRawBufferPointer(copy).copyMemory(from: raw) }
    bytes = copy
    let options = Int32(XML_PARSE_NONET.rawValue | XML_PARSE_NOCDATA.rawValue)
    guard let r = xmlReaderForMemory(copy.baseAddress, Int32(source.count), nil, nil, options)
    else {
      copy.deallocate()
      throw XMLReadError.malformed(line: 0, message: "cannot start the XML parser")
    }
    reader = r
    self.allowDoctype = allowDoctype
    let errors = ErrorBox()
    self.errors = errors
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

  deinit {
    xmlFreeTextReader(reader)
    bytes.deallocate()
  }

  /// The line of the current node (where the parser is, if the node has none).
  public var line: Int {
    if let node = xmlTextReaderCurrentNode(reader) {
      let line = xmlGetLineNo(node)
      if line > 0 { return Int(line) }
    }
    return Int(xmlTextReaderGetParserLineNumber(reader))
  }

  /// The next event, or nil at the end of the document.
  public func next() throws -> XMLEvent? {
    while true {
      let status = xmlTextReaderRead(reader)
      if status == 0 {
        if let error = errors.first { throw XMLReadError.malformed(line: error.line, message: error.message) }
        return nil
      }
      guard status == 1 else {
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
        return XMLEvent(
          kind: .text(string(xmlTextReaderConstValue(reader))), line: line, depth: depth)
      case Int32(XML_READER_TYPE_ENTITY_REFERENCE.rawValue),
        Int32(XML_READER_TYPE_ENTITY.rawValue):
        throw XMLReadError.forbidden(line: line, what: "an entity reference")
      case Int32(XML_READER_TYPE_DOCUMENT_TYPE.rawValue):
        guard allowDoctype else { throw XMLReadError.forbidden(line: line, what: "a DOCTYPE") }
        if let doc = xmlTextReaderCurrentDoc(reader), let subset = doc.pointee.intSubset,
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
