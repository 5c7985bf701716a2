import Dispatch
import SystemIO

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

// The table of contents: written with libxml2's text writer from the compact records, compressed
// on a second thread as it is written, and padded so the heap starts on a file-system block.
extension XARWriter {
  // The TOC is padded so that header + TOC + TOC checksum end on a 4096-byte boundary: the heap
  // then starts on a file-system block, which lets ``finish()`` put the header in front of the
  // heap without copying it. The padding is whitespace after the XML (which XML allows), in a
  // final stored block; it costs under 4 KiB.
  /// Ends an unfinished zlib stream `body` (of XML with length and Adler-32 given) with a
  /// stored block of spaces sized so the heap starts on a 4096-byte boundary.
  /// Returns the XML's length with the padding.
  static func padTOC(_ body: inout ByteChunks, xmlLength: Int, xmlAdler: UInt32, headerSize: Int, checksumSize: Int)
    -> Int
  {
    let overhead = 5 + 4  // stored-block header, Adler-32
    let used = headerSize + body.count + overhead + checksumSize
    let aligned = (used + 4095) / 4096 * 4096
    let padding = [UInt8](repeating: UInt8(ascii: " "), count: aligned - used)
    let length = UInt16(padding.count)
    body.append([0x01, UInt8(length & 0xFF), UInt8(length >> 8), UInt8(~length & 0xFF), UInt8(~length >> 8)])
    body.append(padding)
    let adler = padding.withUnsafeBytes { ZlibDeflater.adler32($0, continuing: xmlAdler) }
    body.append([UInt8(adler >> 24), UInt8(adler >> 16 & 0xFF), UInt8(adler >> 8 & 0xFF), UInt8(adler & 0xFF)])
    return xmlLength + padding.count
  }

  /// The aligned TOC (see ``padTOC(_:xmlLength:xmlAdler:headerSize:checksumSize:)``), compressed on
  /// a second thread as libxml2 writes it (``TOCDeflation``), so the XML is never held whole.
  func streamAlignedTOC(headerSize: Int, checksumSize: Int) -> (compressed: ByteChunks, uncompressedLength: Int) {
    let deflation = TOCDeflation(level: XARWriter.tocLevel)
    let xml = XMLTextWriter { deflation.append($0) }
    writeTOC(xml)
    xml.finishStreaming()
    var (body, length, adler) = deflation.finish()
    let uncompressed = XARWriter.padTOC(
      &body, xmlLength: length, xmlAdler: adler, headerSize: headerSize, checksumSize: checksumSize)
    return (body, uncompressed)
  }

  /// The TOC's zlib level: 6 compresses it within 2% of 9, in three quarters of the time.
  static let tocLevel: Int32 = 6

  func writeTOC(_ xml: XMLTextWriter) {
    xml.startElement("xar")
    xml.startElement("toc")
    if let creationTime = options.creationTime {
      xml.element("creation-time", creationTime.iso8601)
    }
    if options.checksum != .none {
      xml.startElement("checksum")
      xml.attribute("style", options.checksum.styleName)
      xml.element("offset", "0")
      xml.element("size", String(options.checksum.digestSize))
      xml.endElement()
    }
    // Depth-first over the tree without recursion: a stack of next siblings.
    var stack: [Int32] = []
    var current = rootFirst
    while true {
      if current < 0 {
        guard let resume = stack.popLast() else { break }
        xml.endElement()  // </file> of the parent
        current = resume
        continue
      }
      let record = table[current]
      writeFileElement(xml, id: current, record: record)
      if record.firstChild >= 0 {
        stack.append(record.nextSibling)
        current = record.firstChild
      } else {
        xml.endElement()
        current = record.nextSibling
      }
    }
    xml.endElement()  // toc
    xml.endElement()  // xar
  }

  func writeFileElement(_ xml: XMLTextWriter, id: Int32, record: Record) {
    xml.startElement("file")
    xml.attribute("id", String(id + 1))
    let name = table.name(of: record)
    if XARWriter.isXMLSafe(name) {
      xml.element("name", name)
    } else {
      xml.startElement("name")
      xml.attribute("enctype", "base64")
      xml.text(Base64.encode(Array(name.utf8)))
      xml.endElement()
    }
    switch record.kind {
    case .hardLink:
      xml.startElement("type")
      xml.attribute("link", String(table.hardLinkOf[id, default: -1] + 1))
      xml.text("hardlink")
      xml.endElement()
    case .file where record.isHardLinkOriginal:
      xml.startElement("type")
      xml.attribute("link", "original")
      xml.text("hardlink")
      xml.endElement()
    default:
      xml.element("type", record.kind.entryKind.typeName)
    }
    if let target = table.linkTargets[id] {
      xml.startElement("link")
      if XARWriter.isXMLSafe(target) {
        xml.text(target)
      } else {
        xml.attribute("enctype", "base64")
        xml.text(Base64.encode(Array(target.utf8)))
      }
      xml.endElement()
    }
    let a = table.attributes(of: record)
    let octal = String(a.mode & 0o7777, radix: 8)
    xml.element("mode", String(repeating: "0", count: max(1, 4 - octal.count)) + octal)
    xml.element("uid", String(a.uid))
    if let user = a.user { xml.element("user", user) }
    xml.element("gid", String(a.gid))
    if let group = a.group { xml.element("group", group) }
    xml.element("mtime", a.mtime.iso8601)
    if let data = data(of: record) {
      xml.startElement("data")
      xml.element("length", String(data.length))
      xml.element("offset", String(data.offset))
      xml.element("size", String(data.size))
      xml.startElement("encoding")
      xml.attribute("style", data.encoding.style)
      xml.endElement()
      for (element, checksum) in [
        ("archived-checksum", data.archivedChecksum), ("extracted-checksum", data.extractedChecksum),
      ] {
        guard let checksum else { continue }
        xml.startElement(element)
        xml.attribute("style", checksum.algorithm.styleName)
        xml.text(checksum.hex)
        xml.endElement()
      }
      xml.endElement()
    }
  }

  /// True when `text` survives an XML round trip as element content: no control characters
  /// (whitespace ones included, since parsers normalize them) and no non-characters.
  static func isXMLSafe(_ text: String) -> Bool {
    for scalar in text.unicodeScalars {
      let v = scalar.value
      if v < 0x20 || v == 0x7F || v == 0xFFFE || v == 0xFFFF { return false }
    }
    // Leading or trailing spaces survive, but keep names unambiguous anyway.
    return true
  }
}
