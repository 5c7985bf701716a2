import Dispatch
import SystemIO
import TextCoding
import Zlib

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

// The table of contents: written by ``XMLStreamWriter`` from the compact records, compressed in
// pieces on worker threads as it is written (``PieceDeflation``), and padded so the heap starts on a file-system block.
extension XARWriter {
  // The TOC is padded so that header + TOC + TOC checksum end on a 4096-byte boundary: the heap
  // then starts on a file-system block, which lets ``finish()`` put the header in front of the
  // heap without copying it. The padding is whitespace after the XML (which XML allows), in a
  // final stored block; it costs under 4 KiB.
  /// The bytes that end an unfinished zlib stream of `compressedLength` bytes (of XML with the
  /// Adler-32 given): a stored block of spaces, sized so the heap starts on a 4096-byte boundary,
  /// and the stream's Adler-32. The XML's length grows by `trailer.count - 9`.
  static func tocTrailer(compressedLength: Int, xmlAdler: UInt32, headerSize: Int, checksumSize: Int) -> [UInt8] {
    let overhead = 5 + 4  // stored-block header, Adler-32
    let used = headerSize + compressedLength + overhead + checksumSize
    let aligned = (used + 4095) / 4096 * 4096
    let padding = [UInt8](repeating: UInt8(ascii: " "), count: aligned - used)
    let length = UInt16(padding.count)
    var trailer = [UInt8(0x01), UInt8(length & 0xFF), UInt8(length >> 8), UInt8(~length & 0xFF), UInt8(~length >> 8)]
    trailer += padding
    let adler = padding.withUnsafeBytes { ZlibDeflater.adler32($0, continuing: xmlAdler) }
    trailer += [UInt8(adler >> 24), UInt8(adler >> 16 & 0xFF), UInt8(adler >> 8 & 0xFF), UInt8(adler & 0xFF)]
    return trailer
  }

  /// Where the compressed TOC is while the archive is finished: in the heap file, behind the data,
  /// until ``finish()`` moves it to the front.
  struct SpilledTOC {
    /// Where it starts in the heap file.
    var offset: UInt64
    var compressedLength: Int
    var uncompressedLength: Int
    /// The TOC checksum: of the compressed bytes, with the algorithm of the archive.
    var checksum: [UInt8]
  }

  /// Writes the aligned TOC (see ``tocTrailer(compressedLength:xmlAdler:headerSize:checksumSize:)``)
  /// into `heap` from `offset` on, compressed on a second thread as ``XMLStreamWriter`` writes it
  /// (``PieceDeflation``): neither the XML nor the compressed TOC is held whole (on 50,000 entries
  /// they are about 20 and 3.4 MB).
  func spillAlignedTOC(into heap: FileDescriptor, at offset: UInt64, headerSize: Int, checksumSize: Int) throws
    -> SpilledTOC
  {
    // Touched by the deflation queue until `finish()` returns, then by this thread.
    final class Spill: @unchecked Sendable {
      let heap: FileDescriptor
      var end: UInt64
      var hasher: XARHasher
      init(heap: FileDescriptor, end: UInt64, hasher: XARHasher) {
        self.heap = heap
        self.end = end
        self.hasher = hasher
      }
      func write(_ bytes: UnsafeRawBufferPointer) throws {
        hasher.update(bytes)
        try heap.write(bytes, at: end)
        end += UInt64(bytes.count)
      }
    }
    let spill = Spill(heap: heap, end: offset, hasher: XARHasher(options.checksum))
    let deflation = PieceDeflation(level: XARWriter.tocLevel, threads: options.threads, output: spill.write)
    var xml = XMLStreamWriter { deflation.append($0) }
    try writeTOC(&xml)
    xml.finishStreaming()
    let (length, adler) = try deflation.finish()
    let trailer = XARWriter.tocTrailer(
      compressedLength: Int(spill.end - offset), xmlAdler: adler, headerSize: headerSize, checksumSize: checksumSize)
    try trailer.withUnsafeBytes { try spill.write($0) }
    return SpilledTOC(
      offset: offset, compressedLength: Int(spill.end - offset), uncompressedLength: length + trailer.count - 9,
      checksum: spill.hasher.finalize().digest)
  }

  /// The TOC's libdeflate level, the default level of files: the compressors the file workers
  /// used are idle by then and are reused (level 6 made a 50,000-entry TOC 1.2% smaller, for
  /// 18% more time and two more compressors, 1 MiB).
  static let tocLevel: Int32 = 5

  func writeTOC(_ xml: inout XMLStreamWriter) throws {
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
    var time: (XARTimestamp, String)? = nil  // entries mostly share one
    while true {
      if current < 0 {
        guard let resume = stack.popLast() else { break }
        xml.endElement()  // </file> of the parent
        current = resume
        continue
      }
      let record = table[current]
      try writeFileElement(&xml, id: current, record: record, time: &time)
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

  /// One `<file>` element, left open for the children; `time` is the last mtime written, and its
  /// text.
  func writeFileElement(_ xml: inout XMLStreamWriter, id: Int32, record: Record, time: inout (XARTimestamp, String)?)
    throws
  {
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
      xml.element("type", record.kind.xarTypeName ?? "file")
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
    xml.element("uid", decimal: UInt64(a.uid))
    if let user = a.user { xml.element("user", user) }
    xml.element("gid", decimal: UInt64(a.gid))
    if let group = a.group { xml.element("group", group) }
    if time?.0 != a.mtime { time = (a.mtime, a.mtime.iso8601) }
    xml.element("mtime", time!.1)
    guard record.data >= 0 else { return }
    let data = try dataSpill.record(Int(record.data))
    xml.startElement("data")
    xml.element("length", decimal: data.length)
    xml.element("offset", decimal: data.offset)
    xml.element("size", decimal: data.size)
    xml.startElement("encoding")
    xml.attribute("style", (data.gzip ? XAREncoding.gzip : .none).style)
    xml.endElement()
    if let digests = data.digests {
      writeChecksum(&xml, "archived-checksum", digests.archived)
      writeChecksum(&xml, "extracted-checksum", digests.extracted)
    }
    xml.endElement()
  }

  private func writeChecksum(_ xml: inout XMLStreamWriter, _ element: String, _ digest: ArraySlice<UInt8>) {
    xml.startElement(element)
    xml.attribute("style", options.checksum.styleName)
    digest.withUnsafeBytes { xml.text(hex: $0) }
    xml.endElement()
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
