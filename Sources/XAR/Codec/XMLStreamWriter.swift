import TextCoding

// Writes the TOC's XML as bytes, in Swift: libxml2's text writer spent about a fifth of the
// building thread's time on a TOC of 50,000 entries (a C string, a length, an escape and a
// buffer append per call). The bytes are exactly those libxml2's writer makes with an indent of
// one space (`XMLTextWriter`, kept as the reference `XMLStreamWriterTests` compares against),
// so packages are unchanged.

/// An XML document written element by element, indented with one space per level, handed to
/// `consume` in chunks of 64 KiB as it grows (a large document is never held whole). A struct,
/// passed `inout`: as a class, checking exclusive access to its buffer at run time took a tenth
/// of the building thread's time.
package struct XMLStreamWriter {
  private let consume: (UnsafeRawBufferPointer) -> Void
  private var buffer: [UInt8] = []
  /// The open elements; `open` while the start tag still lacks its `>`.
  private var stack: [(name: String, open: Bool)] = []
  /// libxml2's `doindent`: whether an end tag after content gets its indentation.
  private var indentEnd = true
  private static let chunk = 64 << 10

  package init(streamingTo consume: @escaping (UnsafeRawBufferPointer) -> Void) {
    self.consume = consume
    buffer.reserveCapacity(XMLStreamWriter.chunk + 4096)
    write("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n")
  }

  package mutating func startElement(_ name: String) {
    closeStartTag(newline: true)
    stack.append((name, true))
    indent(stack.count - 1)
    buffer.append(UInt8(ascii: "<"))
    write(name)
  }

  package mutating func attribute(_ name: String, _ value: String) {
    buffer.append(UInt8(ascii: " "))
    write(name)
    write("=\"")
    escape(value, attribute: true)
    buffer.append(UInt8(ascii: "\""))
  }

  /// Writes text content, escaping `<`, `>`, `&`, `"` and CR as libxml2 does.
  package mutating func text(_ content: String) {
    startText()
    escape(content, attribute: false)
  }

  package mutating func endElement() {
    guard let top = stack.last else { return }
    if top.open {
      write("/>")
    } else {
      if indentEnd { indent(stack.count - 1) }
      write("</")
      write(top.name)
      buffer.append(UInt8(ascii: ">"))
    }
    indentEnd = true
    buffer.append(UInt8(ascii: "\n"))
    stack.removeLast()
    if buffer.count >= XMLStreamWriter.chunk { flush() }
  }

  /// `<name>content</name>`.
  package mutating func element(_ name: String, _ content: String) {
    startElement(name)
    text(content)
    endElement()
  }

  /// `<name>digits</name>`: `value` in decimal, without making a string of it.
  package mutating func element(_ name: String, decimal value: UInt64) {
    startElement(name)
    startText()
    var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)  // room for 20 digits, 24 bytes
    withUnsafeMutableBytes(of: &digits) { room in
      var v = value
      var i = room.count
      repeat {
        i -= 1
        room[i] = UInt8(ascii: "0") + UInt8(v % 10)
        v /= 10
      } while v > 0
      buffer.append(contentsOf: UnsafeRawBufferPointer(rebasing: room[i...]))
    }
    endElement()
  }

  /// Text content: `bytes` in lower-case hex (which needs no escape).
  package mutating func text(hex bytes: UnsafeRawBufferPointer) {
    startText()
    appendHex(bytes, to: &buffer)
  }

  /// Ends every open element and delivers what is left.
  package mutating func finishStreaming() {
    while !stack.isEmpty { endElement() }
    flush()
  }

  private mutating func flush() {
    guard !buffer.isEmpty else { return }
    buffer.withUnsafeBytes { consume($0) }
    buffer.removeAll(keepingCapacity: true)
  }

  /// Text follows: the start tag is closed on this line, and the end tag follows the text.
  private mutating func startText() {
    closeStartTag(newline: false)
    indentEnd = false
  }

  private mutating func closeStartTag(newline: Bool) {
    guard let top = stack.last, top.open else { return }
    stack[stack.count - 1].open = false
    buffer.append(UInt8(ascii: ">"))
    if newline { buffer.append(UInt8(ascii: "\n")) }
  }

  private mutating func indent(_ depth: Int) {
    buffer.append(contentsOf: repeatElement(UInt8(ascii: " "), count: depth))
  }

  private mutating func write(_ text: String) {
    var text = text
    text.withUTF8 { buffer.append(contentsOf: $0) }
  }

  /// libxml2 takes C strings: like it, content ends at the first NUL.
  private mutating func escape(_ content: String, attribute: Bool) {
    var content = content
    content.withUTF8 { bytes in
      // Most content needs no escape, and every byte that does is below "?": one quick pass.
      var first = 0
      while first < bytes.count, bytes[first] > UInt8(ascii: ">") || !XMLStreamWriter.escaped(bytes[first], attribute) {
        first += 1
      }
      if first == bytes.count {
        buffer.append(contentsOf: bytes)
        return
      }
      let end = bytes.firstIndex(of: 0) ?? bytes.count
      var clean = 0  // bytes[clean..<i] need no escape
      func flushClean(_ i: Int) {
        if i > clean { buffer.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[clean..<i])) }
      }
      var i = first
      while i < end {
        let byte = bytes[i]
        let replacement: String?
        switch byte {
        case UInt8(ascii: "<"): replacement = "&lt;"
        case UInt8(ascii: ">"): replacement = "&gt;"
        case UInt8(ascii: "&"): replacement = "&amp;"
        case UInt8(ascii: "\""): replacement = "&quot;"
        case 0x0D: replacement = "&#13;"
        case 0x0A where attribute: replacement = "&#10;"
        case 0x09 where attribute: replacement = "&#9;"
        default: replacement = nil
        }
        if let replacement {
          flushClean(i)
          write(replacement)
          clean = i + 1
        }
        i += 1
      }
      flushClean(end)
    }
  }

  /// Whether `byte` is escaped (or, NUL, ends the content).
  private static func escaped(_ byte: UInt8, _ attribute: Bool) -> Bool {
    switch byte {
    case 0, UInt8(ascii: "<"), UInt8(ascii: ">"), UInt8(ascii: "&"), UInt8(ascii: "\""), 0x0D: return true
    case 0x0A, 0x09: return attribute
    default: return false
    }
  }
}
