import ArchiveIO
import SystemIO
import TextCoding
import Zlib

/// Reads a XAR archive without trusting it.
///
/// Opening checks the header, bounds the TOC before inflating it, parses it with libxml2 with no
/// entity substitution, no DTD and no network, verifies the TOC checksum, and checks that every
/// entry's name is sane and every data range lies inside the heap. Entries come in TOC order.
/// Data is streamed by ``XARDataReader``, which never yields more than the declared size and
/// verifies both checksums when the data ends.
package final class XARReader {
  /// Bounds that keep a hostile archive from exhausting memory or time.
  package struct Limits: Sendable {
    /// Largest TOC accepted, compressed or inflated, in bytes.
    package var maxTOCBytes: UInt64 = 256 << 20
    /// Most `<file>` elements accepted.
    package var maxEntries = 2_000_000
    /// Deepest folder nesting accepted.
    package var maxDepth = 256
    /// Longest full path accepted, in UTF-8 bytes.
    package var maxPathBytes = 4096
    /// Most UTF-8 bytes all entries' full paths may add up to (memory grows with it).
    package var maxTotalPathBytes: UInt64 = 64 << 20
    /// Largest decoded size / stored length accepted for a compressed file over 1 MiB (deflate
    /// cannot pass about 1032; a bigger claim is a bomb or a lie).
    package var maxExpansionRatio: UInt64 = 10_000
    /// Open a file that ends before the data its TOC describes (a download cut off) instead of
    /// refusing it, when the TOC and its checksum lie before the cut: ``XARReader/truncation``
    /// says where, and reading an entry whose data lies past the cut throws. For `unpack
    /// --keep-going`; everything else refuses the file (``XARError/truncatedArchive(fileSize:describedSize:unrecoverable:)``).
    package var acceptsTruncation = false
    /// Threads a large compressed file's stream is inflated on, beside its reader
    /// (``PieceInflation``); the bytes and verdicts are the same for any number.
    package var inflateThreads = 1

    package init() {}
  }

  /// The archive's path, for messages.
  package let path: String
  package let header: XARHeader
  /// Every `<file>` of the TOC, in document order, as compact records (an ``XAREntry`` is made
  /// for each as it is read).
  package let entries: XAREntryTable
  /// The TOC's `<creation-time>`, if any.
  package let creationTime: XARTimestamp?
  /// The TOC checksum as stored (and verified).
  package let tocChecksum: XARChecksum?
  /// The size of the archive file.
  package let fileSize: UInt64
  /// Set when the file ends before the data its TOC describes (only with
  /// ``Limits/acceptsTruncation``; otherwise such a file is refused).
  package let truncation: XARTruncation?
  /// The size of the heap: everything after the compressed TOC.
  package var heapSize: UInt64 { fileSize - header.heapStart }
  /// The TOC XML, inflated again from the file (it is not kept in memory).
  /// Empty if it no longer inflates to exactly the declared length.
  package var tocXML: [UInt8] {
    var xml: [UInt8] = []
    xml.reserveCapacity(Int(header.tocUncompressedLength))
    do { try writeTOC { xml += $0 } } catch { return [] }
    return xml
  }

  /// Inflates the TOC XML again from the file and hands it to `write` chunk by chunk, as it
  /// inflates: memory stays bounded by a chunk, whatever the TOC's size. Throws when the TOC no
  /// longer inflates to exactly the declared length (the file changed since it was opened);
  /// what was written by then stays written.
  package func writeTOC(to write: ([UInt8]) throws -> Void) throws {
    // The same inflation, with the same checks, as opening the archive.
    let compressedLength = Int(header.tocCompressedLength)
    let declared = header.tocUncompressedLength
    let inflation = TOCInflation(
      file: file, offset: UInt64(header.headerSize), length: compressedLength, declared: declared)
    defer { inflation.stop() }
    while let chunk = try inflation.next() { try write(chunk) }
    let (used, made) = inflation.totals
    guard used == compressedLength, made == declared else {
      throw XARError.tocLengthMismatch(declared: declared, actual: made)
    }
  }
  let file: FileDescriptor

  /// Opens and checks the archive at `path`.
  package convenience init(path: String, limits: Limits = Limits()) throws {
    try self.init(file: FileDescriptor.open(reading: path), limits: limits)
  }

  /// Opens and checks an archive already open for reading.
  package convenience init(file: FileDescriptor, limits: Limits = Limits()) throws {
    let front = try Front(file: file, limits: limits)
    try self.init(front, parsed: XARReader.parseTOC(front, limits: limits), limits: limits)
  }

  /// What comes before the heap, read and bounded: the header, and where the compressed TOC is
  /// (it is read as it is inflated, and hashed from the file).
  struct Front: Sendable {
    var file: FileDescriptor
    var fileSize: UInt64
    var header: XARHeader
    var heapSize: UInt64 { fileSize - header.heapStart }

    init(file: FileDescriptor, limits: Limits) throws {
      self.file = file
      fileSize = try file.size()
      let headerBytes = try file.read(count: 4096, at: 0)
      header = try XARHeader.decode(headerBytes)

      // The TOC: bounded, then inflated; the zlib stream must end exactly where the heap starts.
      let declared = header.tocCompressedLength
      guard declared <= limits.maxTOCBytes, header.tocUncompressedLength <= limits.maxTOCBytes else {
        throw XARError.tocTooLarge(
          compressed: declared, uncompressed: header.tocUncompressedLength, limit: limits.maxTOCBytes)
      }
      guard UInt64(header.headerSize) + declared <= fileSize else {
        throw XARError.truncatedTOC(
          declared: declared, available: fileSize - min(fileSize, UInt64(header.headerSize)))
      }
    }
  }

  /// What ``parseTOC(_:limits:publish:)`` gives: the TOC, and the hash of its compressed bytes
  /// in the header's checksum algorithm (taken as they were read for inflating).
  struct ParsedTOC {
    var toc: TOCParser.Result
    var compressedDigest: XARChecksum?
  }

  /// The reader of a parsed TOC, once the checks that need the whole TOC pass.
  init(_ front: Front, parsed: ParsedTOC, limits: Limits) throws {
    let toc = parsed.toc
    file = front.file
    path = front.file.path
    fileSize = front.fileSize
    header = front.header
    creationTime = toc.creationTime
    entries = toc.entries
    inflateThreads = max(1, limits.inflateThreads)

    // The TOC checksum, at the place the TOC says, in the algorithm the header says.
    let heapSize = fileSize - header.heapStart
    if header.checksumAlgorithm != .none {
      let algorithm = header.checksumAlgorithm
      guard let location = toc.checksum else { throw XARError.tocChecksumMissing }
      guard location.algorithm == algorithm else {
        throw XARError.tocChecksumAlgorithmMismatch(
          header: algorithm.styleName, toc: location.algorithm.styleName)
      }
    }
    let checksumRegion = header.checksumAlgorithm == .none ? nil : toc.checksum
    // A file that ends before the data its TOC describes was cut off (a broken download).
    let referenced = try XARReader.referencedHeapSize(
      entries, checksum: checksumRegion, signatures: toc.signatures + toc.attributeRegions, heapSize: heapSize)
    let described = max(referenced, heapSize)
    if described > heapSize {
      let checksumCut = checksumRegion.map { $0.offset > heapSize || $0.size > heapSize - $0.offset } ?? false
      let (end, overflow) = header.heapStart.addingReportingOverflow(described)
      let cut = XARTruncation(fileSize: fileSize, describedSize: overflow ? .max : end)
      guard limits.acceptsTruncation, !checksumCut else {
        throw XARError.truncatedArchive(
          fileSize: cut.fileSize, describedSize: cut.describedSize,
          unrecoverable: checksumCut ? "the checksum of its table of contents lies past the cut" : nil)
      }
      truncation = cut
    } else {
      truncation = nil
    }
    // Bytes after the last one the TOC references (the header, the TOC, its checksum, the
    // signatures, every entry's data): a file that is a XAR to us and something else to another
    // reader (`cat book.pkg tools.zip`: unzip and Python's zipfile find the zip at the end).
    if referenced < heapSize, !XARReader.isLibarchiveTail(file, header: header, from: referenced, heapSize: heapSize) {
      let start = header.heapStart + referenced
      throw XARError.bytesAfterHeap(
        count: heapSize - referenced, offset: start,
        looksLike: XARReader.describeTrailing(file, from: start, to: fileSize))
    }
    // Regions are checked against the heap the TOC describes; reading past the cut throws.
    let heapBound = max(described, heapSize)
    if header.checksumAlgorithm != .none, let location = checksumRegion {
      let algorithm = header.checksumAlgorithm
      guard location.size == UInt64(algorithm.digestSize),
        location.offset <= heapSize, location.size <= heapSize - location.offset
      else {
        throw XARError.tocChecksumOutOfHeap(
          offset: location.offset, size: location.size, heapSize: heapSize)
      }
      let stored = try file.read(count: Int(location.size), at: header.heapStart + location.offset)
      // (Set whenever the stream ended, as it has here; were it not, the TOC would be refused.)
      let actual = parsed.compressedDigest ?? XARChecksum(algorithm: algorithm, digest: [])
      guard stored == actual.digest else {
        throw XARError.tocChecksumMismatch(expected: hexString(stored), actual: actual.hex)
      }
      tocChecksum = actual
    } else {
      tocChecksum = nil
    }

    if truncation == nil {
      try XARReader.checkSignaturesAndAttributes(
        file, header: header, toc: toc, checksum: checksumRegion, entries: entries, heapSize: heapSize)
    }

    // Every entry's data has heap bytes of its own: shared regions would let a small file
    // declare many times its size, and let one checksum vouch for two files.
    // Regions by entry index (-1 for the TOC checksum); paths are made only for a message.
    // Where the data is laid out in TOC order (pkgtool's packages), one pass shows that no two
    // regions overlap; otherwise (bsdtar's) their indices are sorted by offset. (An array of
    // the regions, 24 bytes each, was the largest thing made at the end of reading a TOC of
    // many entries.)
    var end = checksumRegion.map { $0.offset + $0.size } ?? 0
    var inOrder = checksumRegion.map { $0.size > 0 } ?? true
    for i in entries.indices {
      guard let stored = try XARReader.checkData(of: entries, at: i, heapSize: heapBound, limits: limits),
        stored.length > 0
      else { continue }
      if stored.offset < end { inOrder = false }
      end = stored.offset + stored.length
    }
    if inOrder { return }
    // Out of order: the regions' indices (4 bytes each), sorted by offset, neighbours compared.
    let entries = self.entries
    func region(_ index: Int32) -> (offset: UInt64, end: UInt64) {
      if index < 0, let location = checksumRegion { return (location.offset, location.offset + location.size) }
      let stored = entries.storedRange(at: Int(index)) ?? (0, 0)
      return (stored.offset, stored.offset + stored.length)
    }
    var order: [Int32] = checksumRegion == nil ? [] : [-1]
    order.reserveCapacity(entries.count + 1)
    for i in entries.indices where (entries.storedRange(at: i)?.length ?? 0) > 0 { order.append(Int32(i)) }
    order.sort { a, b in
      let (x, y) = (region(a).offset, region(b).offset)
      return x != y ? x < y : a < b
    }
    func name(_ index: Int32) -> String { index < 0 ? "(TOC checksum)" : entries.path(at: Int(index)) }
    for (a, b) in zip(order, order.dropFirst()) where region(b).offset < region(a).end {
      throw XARError.overlappingData(path: name(b), other: name(a))
    }
  }

  /// The heap regions of `<signature>`, `<x-signature>` and `<ea>`: bytes the TOC references
  /// that no entry's data holds. Each lies in the heap, shares no byte with another region (the
  /// TOC checksum, a signature, an attribute, a file's data), a signature is at most 64 KiB, and
  /// none holds another archive's records: declared over an appended zip, a region would
  /// otherwise make `cat book.pkg tools.zip` pass as referenced, while unzip reads the zip.
  static func checkSignaturesAndAttributes(
    _ file: FileDescriptor, header: XARHeader, toc: TOCParser.Result, checksum: TOCParser.ChecksumLocation?,
    entries: XAREntryTable, heapSize: UInt64
  ) throws {
    var regions: [(offset: UInt64, end: UInt64, what: String)] = []
    for signature in toc.signatures where signature.size > 0 {
      guard signature.size <= 64 << 10 else {
        throw XARError.malformedTOC(
          line: 0, message: "a signature of \(signature.size) bytes in the heap; a signature is at most 64 KiB")
      }
      regions.append((signature.offset, signature.offset + signature.size, "(signature)"))
    }
    for attribute in toc.attributeRegions where attribute.size > 0 {
      regions.append((attribute.offset, attribute.offset + attribute.size, "(extended attribute)"))
    }
    guard !regions.isEmpty else { return }
    for region in regions where region.end > heapSize {
      throw XARError.dataOutOfHeap(
        path: region.what, offset: region.offset, length: region.end - region.offset, heapSize: heapSize)
    }
    for region in regions {
      if let found = archiveRecord(in: file, from: header.heapStart + region.offset, count: region.end - region.offset)
      {
        throw XARError.hiddenArchive(region: region.what, offset: region.offset, looksLike: found)
      }
    }
    var sorted = regions
    if let checksum, checksum.size > 0 {
      sorted.append((checksum.offset, checksum.offset + checksum.size, "(TOC checksum)"))
    }
    sorted.sort { $0.offset < $1.offset }
    for (a, b) in zip(sorted, sorted.dropFirst()) where b.offset < a.end {
      throw XARError.overlappingData(path: b.what, other: a.what)
    }
    // Sorted and disjoint, so their ends are sorted too: the first region ending after a file's
    // data starts is the only one that can overlap it.
    for i in entries.indices {
      guard let stored = entries.storedRange(at: i), stored.length > 0 else { continue }
      var low = 0
      var high = sorted.count
      while low < high {
        let middle = (low + high) / 2
        if sorted[middle].end > stored.offset { high = middle } else { low = middle + 1 }
      }
      if low < sorted.count, sorted[low].offset < stored.offset + stored.length {
        throw XARError.overlappingData(path: entries.path(at: i), other: sorted[low].what)
      }
    }
  }

  /// What another archive's records in `count` bytes of `file` from `start` look like (a zip's
  /// local header, central directory or end record, a XAR header), or nil when there is none.
  static func archiveRecord(in file: FileDescriptor, from start: UInt64, count: UInt64) -> String? {
    let markers: [([UInt8], String)] = [
      ([0x50, 0x4B, 0x03, 0x04], "a zip entry's local header"), ([0x50, 0x4B, 0x01, 0x02], "a zip central directory"),
      ([0x50, 0x4B, 0x05, 0x06], "a zip end record"), (Array("xar!".utf8), "a XAR header"),
    ]
    var offset: UInt64 = 0
    var carry: [UInt8] = []
    while offset < count {
      let length = Int(min(1 << 20, count - offset))
      guard let chunk = try? file.read(count: length, at: start + offset), !chunk.isEmpty else { return nil }
      let window = carry + chunk
      if window.count >= 4 {
        for i in 0...(window.count - 4) where window[i] == 0x50 || window[i] == 0x78 {
          for (marker, name) in markers
          where window[i] == marker[0] && window[i + 1] == marker[1] && window[i + 2] == marker[2]
            && window[i + 3] == marker[3]
          {
            return name
          }
        }
      }
      carry = Array(window.suffix(3))
      offset += UInt64(chunk.count)
    }
    return nil
  }

  /// True when the heap's unreferenced end is what libarchive's XAR writer (bsdtar --format xar,
  /// 3.x) leaves there: a copy of the first bytes of the compressed TOC, as many as its checksum
  /// has. No reader reads them as anything (too short for a zip's end record or a XAR header),
  /// and every package bsdtar writes has them.
  static func isLibarchiveTail(_ file: FileDescriptor, header: XARHeader, from referenced: UInt64, heapSize: UInt64)
    -> Bool
  {
    let count = heapSize - referenced
    guard header.checksumAlgorithm != .none, count == UInt64(header.checksumAlgorithm.digestSize),
      header.tocCompressedLength >= count,
      let tail = try? file.read(count: Int(count), at: header.heapStart + referenced),
      let toc = try? file.read(count: Int(count), at: UInt64(header.headerSize))
    else { return false }
    return tail == toc
  }

  /// What the bytes from `start` to `end` of `file` look like, for a message: another XAR, a
  /// zip, zeros, or other bytes (their first ones in hex).
  static func describeTrailing(_ file: FileDescriptor, from start: UInt64, to end: UInt64) -> String {
    let count = end - start
    let head = (try? file.read(count: Int(min(count, 64)), at: start)) ?? []
    if head.starts(with: Array("xar!".utf8)) { return "another XAR archive" }
    if head.starts(with: [0x50, 0x4B, 0x03, 0x04]) { return "a zip archive" }
    // A zip's end record lies within its last 65,557 bytes (22 and a comment of up to 65,535).
    let tailLength = min(count, 65_557)
    if let tail = try? file.read(count: Int(tailLength), at: end - tailLength),
      tail.indices.dropLast(3).contains(where: {
        tail[$0] == 0x50 && tail[$0 + 1] == 0x4B && tail[$0 + 2] == 5 && tail[$0 + 3] == 6
      })
    {
      return "a zip archive (its end record is there)"
    }
    var allZero = true
    var offset = start
    let scanned = min(end, start + (16 << 20))
    while allZero && offset < scanned {
      let chunk = (try? file.read(count: Int(min(1 << 20, scanned - offset)), at: offset)) ?? [1]
      if chunk.isEmpty { break }
      allZero = chunk.allSatisfy { $0 == 0 }
      offset += UInt64(chunk.count)
    }
    if allZero { return scanned < end ? "zeros (the first 16 MiB of them at least)" : "zeros (padding)" }
    let shown = head.prefix(8).map { String(format: "%02x", $0) }.joined(separator: " ")
    return "other bytes (starting \(shown))"
  }

  /// How many heap bytes the TOC references: the end of the last data region (or of the TOC
  /// checksum, or of a signature). Throws for a region whose end does not fit in 64 bits.
  static func referencedHeapSize(
    _ entries: XAREntryTable, checksum: TOCParser.ChecksumLocation?, signatures: [(offset: UInt64, size: UInt64)],
    heapSize: UInt64
  ) throws -> UInt64 {
    var described: UInt64 = 0
    for signature in signatures {
      let (end, overflow) = signature.offset.addingReportingOverflow(signature.size)
      guard !overflow else {
        throw XARError.dataOutOfHeap(
          path: "(signature)", offset: signature.offset, length: signature.size, heapSize: heapSize)
      }
      described = max(described, end)
    }
    if let checksum {
      let (end, overflow) = checksum.offset.addingReportingOverflow(checksum.size)
      guard !overflow else {
        throw XARError.tocChecksumOutOfHeap(offset: checksum.offset, size: checksum.size, heapSize: heapSize)
      }
      described = max(described, end)
    }
    for i in entries.indices {
      guard let stored = entries.storedRange(at: i) else { continue }
      let (end, overflow) = stored.offset.addingReportingOverflow(stored.length)
      guard !overflow else {
        throw XARError.dataOutOfHeap(
          path: entries.path(at: i), offset: stored.offset, length: stored.length, heapSize: heapSize)
      }
      described = max(described, end)
    }
    return described
  }

  /// Checks that an entry's data lies inside the heap and does not claim to expand beyond the
  /// limit; returns its stored range (nil without data).
  static func checkData(of entries: XAREntryTable, at i: Int, heapSize: UInt64, limits: Limits) throws -> (
    offset: UInt64, length: UInt64
  )? {
    guard let stored = entries.storedRange(at: i) else { return nil }
    guard stored.offset <= heapSize, stored.length <= heapSize - stored.offset else {
      throw XARError.dataOutOfHeap(
        path: entries.path(at: i), offset: stored.offset, length: stored.length, heapSize: heapSize)
    }
    let size = entries.sizes(at: i).size
    if size > 1 << 20, entries.data(at: i)?.encoding != XAREncoding.none,
      size / max(stored.length, 1) > limits.maxExpansionRatio
    {
      throw XARError.expansionTooLarge(
        path: entries.path(at: i), size: size, length: stored.length, limit: limits.maxExpansionRatio)
    }
    return stored
  }

  /// Inflates the TOC as libxml2 asks for it, so the XML is never held whole, then checks that
  /// the stream ends exactly where the heap starts and inflates to the declared length. With
  /// `publish`, entries are handed out as they are read (``TOCParser/parse(pulling:limits:publish:)``).
  static func parseTOC(_ front: Front, limits: Limits, publish: TOCParser.Publish? = nil) throws -> ParsedTOC {
    let header = front.header
    let declared = header.tocUncompressedLength
    let compressedLength = Int(header.tocCompressedLength)
    let inflation = TOCInflation(
      file: front.file, offset: UInt64(header.headerSize), length: compressedLength, declared: declared,
      hashing: header.checksumAlgorithm)
    defer { inflation.stop() }
    var chunk: [UInt8] = []
    var position = 0
    var ended = false
    let pull: (UnsafeMutableRawBufferPointer) throws -> Int = { out in
      while position == chunk.count {
        if ended { return 0 }
        guard let next = try inflation.next() else {
          ended = true
          return 0
        }
        chunk = next
        position = 0
      }
      let n = min(out.count, chunk.count - position)
      chunk.withUnsafeBytes { out.copyMemory(from: UnsafeRawBufferPointer(rebasing: $0[position..<(position + n)])) }
      position += n
      return n
    }
    let result = try TOCParser.parse(pulling: pull, limits: limits, publish: publish)
    // What libxml2 did not need must be whitespace (the padding before an aligned heap).
    var scratch = [UInt8](repeating: 0, count: 64 * 1024)
    while true {
      let n = try scratch.withUnsafeMutableBytes { try pull($0) }
      if n == 0 { break }
      guard scratch[..<n].allSatisfy({ $0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09 }) else {
        throw XARError.malformedTOC(line: 0, message: "content after the end of the document")
      }
    }
    let (used, made) = inflation.totals
    guard used == compressedLength else {
      throw XARError.heapStartMismatch(declaredTOCLength: UInt64(compressedLength), streamEnd: UInt64(used))
    }
    guard made == declared else { throw XARError.tocLengthMismatch(declared: declared, actual: made) }
    return ParsedTOC(toc: result, compressedDigest: inflation.digest)
  }

  /// A stream of `entry`'s decoded bytes. An entry without data gives an empty stream.
  package func dataReader(for entry: XAREntry) -> XARDataReader {
    XARDataReader(
      file: file, heapStart: header.heapStart, path: entry.path, data: entry.data, window: window,
      threads: inflateThreads)
  }

  /// Threads a large compressed file is inflated on (``Limits/inflateThreads``).
  package let inflateThreads: Int

  /// Recently read heap bytes: small files lie side by side, so one read serves many.
  private let window = ReadWindow()

  /// All of `entry`'s decoded bytes, verified; refuses entries larger than `limit`.
  package func readData(of entry: XAREntry, limit: UInt64 = 16 << 20) throws -> [UInt8] {
    try dataReader(for: entry).readAll(of: entry, limit: limit)
  }
}

/// Where a XAR file was cut off: it ends at byte ``fileSize``, its TOC describes
/// ``describedSize`` bytes.
package struct XARTruncation: Equatable, Sendable {
  package var fileSize: UInt64
  package var describedSize: UInt64

  package init(fileSize: UInt64, describedSize: UInt64) {
    self.fileSize = fileSize
    self.describedSize = describedSize
  }

}

/// A 1 MiB read-ahead over the archive file, for reads of small entries in heap order.
final class ReadWindow {
  private var bytes = [UInt8]()
  private var start: UInt64 = 0
  static let size = 128 << 10

  /// Copies `count` bytes at `offset` into `buffer` from the window, refilling it when needed.
  /// Returns false when the file ends first.
  func read(_ file: FileDescriptor, at offset: UInt64, count: Int, into buffer: UnsafeMutableRawBufferPointer) throws
    -> Bool
  {
    if offset < start || offset + UInt64(count) > start + UInt64(bytes.count) {
      bytes = try file.read(count: max(ReadWindow.size, count), at: offset)
      start = offset
      guard bytes.count >= count else { return false }
    }
    let from = Int(offset - start)
    bytes.withUnsafeBytes { buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: $0[from..<(from + count)])) }
    return true
  }
}

/// The decoded bytes of one entry, streamed.
///
/// Bytes are provisional until ``read(into:)`` returns 0: that last call is the one that checks
/// the decoded size and both checksums, and throws if anything disagrees. It never yields more
/// than the declared size.
extension XARDataReader {
  /// All of `entry`'s decoded bytes (this reader's entry), checked as they are read; refused when
  /// it declares more than `limit`.
  package func readAll(of entry: XAREntry, limit: UInt64) throws -> [UInt8] {
    guard entry.size <= limit else {
      throw XARError.corruptData(path: entry.path, reason: "larger than \(limit) bytes")
    }
    var out: [UInt8] = []
    out.reserveCapacity(Int(entry.size))
    var buffer = [UInt8](repeating: 0, count: 64 * 1024)
    while true {
      let n = try buffer.withUnsafeMutableBytes { try read(into: $0) }
      if n == 0 { return out }
      out.append(contentsOf: buffer[..<n])
    }
  }
}

package final class XARDataReader: ByteSource {
  private enum Decoder {
    case none
    case zlib(ZlibInflater)
    /// A large zlib stream, inflated in segments on `threads` threads.
    case pieces(PieceInflation)
    case filter(ArchiveFilterDecoder)
  }

  /// The entry's path, for messages.
  package let path: String
  private let file: FileDescriptor
  private let start: UInt64
  private let data: XARData?
  private var consumed: UInt64 = 0
  /// Decoded bytes delivered so far.
  package private(set) var produced: UInt64 = 0
  private var archived: XARHasher
  private var extracted: XARHasher
  private var decoder: Decoder = .none
  /// The stored chunk being inflated: `stored[storedStart..<storedEnd]` is still to go. One
  /// buffer for the whole file, refilled in place (a fresh array per chunk was a fresh mapping
  /// of 256 KiB, zeroed page by page: most of an unpack's page faults).
  private var stored: [UInt8] = []
  private var storedStart = 0
  private var storedEnd = 0
  private var started = false
  /// True when the stored bytes are the extracted bytes and both checksums use one algorithm.
  private let sharedHash: Bool
  private var finished = false
  private var failed: Error?
  private static let chunkSize = 256 * 1024

  private let window: ReadWindow?
  /// Threads a large zlib stream is inflated on (``PieceInflation``).
  private let threads: Int

  init(
    file: FileDescriptor, heapStart: UInt64, path: String, data: XARData?, window: ReadWindow? = nil, threads: Int = 1
  ) {
    self.window = window
    self.threads = threads
    self.file = file
    self.path = path
    self.data = data
    start = heapStart + (data?.offset ?? 0)
    archived = XARHasher(data?.archivedChecksum?.algorithm ?? .none)
    extracted = XARHasher(data?.extractedChecksum?.algorithm ?? .none)
    sharedHash =
      data?.encoding == XAREncoding.none && data?.archivedChecksum?.algorithm == data?.extractedChecksum?.algorithm
  }

  /// The most bytes one ``read(into:)`` delivers, whatever room it is given. Bytes decoded by a
  /// call that then fails (a damaged check at a stream's end) are not delivered; with every
  /// reader held to the same step, what a file delivers before its failure, and so what the
  /// rules see of its first bytes, is the same whoever reads it: a decode thread (64 KiB at a
  /// time) or the caller itself (256 KiB buffers), for any `--jobs`.
  package static let deliveryLimit = 64 * 1024

  package func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
    if let failed { throw failed }
    let buffer =
      buffer.count > XARDataReader.deliveryLimit
      ? UnsafeMutableRawBufferPointer(rebasing: buffer[..<XARDataReader.deliveryLimit]) : buffer
    do {
      return try readChecked(into: buffer)
    } catch {
      failed = error
      throw error
    }
  }

  private func readChecked(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
    guard let data, !finished, buffer.count > 0 else { return 0 }
    if case .none = decoder, consumed == 0, !started {
      started = true
      switch data.encoding {
      case .none: break
      case .gzip where data.length >= PieceInflation.minimumLength && startsWithPlainZlibHeader():
        let (file, start, path) = (file, start, path)
        decoder = .pieces(
          PieceInflation(length: data.length, threads: threads) { offset, buffer in
            let n = try file.read(into: buffer, at: start + offset)
            guard n > 0 else { throw XARError.truncatedHeap(path: path) }
            return n
          })
      case .gzip: decoder = .zlib(ZlibInflater())
      case let encoding where ArchiveFilterDecoder.supports(encoding):
        decoder = .filter(ArchiveFilterDecoder(encoding: encoding) { [unowned self] in try self.pullStored() })
      default:
        throw XARError.unsupportedEncoding(path: path, style: data.encoding.style)
      }
    }
    switch decoder {
    case .none:
      // Stored: read straight into the caller's buffer; one hash serves both checksums when
      // they use the same algorithm.
      let want = Int(min(UInt64(buffer.count), data.length - consumed))
      guard want > 0 else {
        try finish()
        return 0
      }
      var filled = 0
      if let window, data.length <= 64 * 1024 {
        guard try window.read(file, at: start + consumed, count: want, into: buffer) else {
          throw XARError.truncatedHeap(path: path)
        }
        filled = want
      }
      while filled < want {
        let n = try file.read(
          into: UnsafeMutableRawBufferPointer(rebasing: buffer[filled..<want]), at: start + consumed + UInt64(filled))
        guard n > 0 else { throw XARError.truncatedHeap(path: path) }
        filled += n
      }
      consumed += UInt64(filled)
      let chunk = UnsafeRawBufferPointer(rebasing: buffer[..<filled])
      if !sharedHash { archived.update(chunk) }
      try accept(chunk)
      return filled
    case .pieces(let pieces):
      let n: Int
      do {
        n = try pieces.read(into: buffer) { archived.update($0) }
      } catch let failure as PieceInflation.Failure {
        switch failure {
        case .corrupt(let message): throw XARError.corruptData(path: path, reason: message)
        case .truncated: throw XARError.corruptData(path: path, reason: "the compressed stream is truncated")
        case .endsEarly(let end): throw XARError.storedLengthMismatch(path: path, declared: data.length, consumed: end)
        }
      }
      if n == 0 {
        consumed = data.length
        try finish()
        return 0
      }
      try accept(UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(buffer)[..<n]))
      return n
    case .filter(let filter):
      let n: Int
      do {
        n = try filter.read(into: buffer)
      } catch let error as LibArchiveError {
        throw XARError.corruptData(path: path, reason: error.message)
      }
      if n == 0 {
        try finish()
        return 0
      }
      try accept(UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(buffer)[..<n]))
      return n
    case .zlib(let inflater):
      // Inflate straight into the caller's buffer from the current stored chunk.
      while true {
        if inflater.finished {
          if storedStart < storedEnd || consumed < data.length {
            throw XARError.storedLengthMismatch(
              path: path, declared: data.length, consumed: consumed - UInt64(storedEnd - storedStart))
          }
          try finish()
          return 0
        }
        if storedStart == storedEnd {
          guard try refillStored() else {
            try finish()  // reports the truncated stream
            return 0
          }
        }
        let (used, made): (Int, Int)
        do {
          (used, made) = try stored.withUnsafeBytes { raw in
            try inflater.inflateStep(UnsafeRawBufferPointer(rebasing: raw[storedStart..<storedEnd]), into: buffer)
          }
        } catch let error as ZlibError {
          throw XARError.corruptData(path: path, reason: error.message)
        }
        storedStart += used
        if made > 0 {
          try accept(UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(buffer)[..<made]))
          return made
        }
        if used == 0 && storedStart < storedEnd && !inflater.finished {
          throw XARError.corruptData(path: path, reason: "the compressed stream makes no progress")
        }
      }
    }
  }

  /// Whether the data starts with a zlib header that leaves nothing to zlib
  /// (``ZlibInflater/isPlainZlibHeader(_:_:)``): a stream ``PieceInflation`` may take.
  private func startsWithPlainZlibHeader() -> Bool {
    guard let bytes = try? file.read(count: 2, at: start), bytes.count == 2 else { return false }
    return ZlibInflater.isPlainZlibHeader(bytes[0], bytes[1])
  }

  /// Reads the next chunk of stored bytes into ``stored``, hashed; false when the declared
  /// length is used up.
  private func refillStored() throws -> Bool {
    guard let data, consumed < data.length else { return false }
    let count = Int(min(UInt64(XARDataReader.chunkSize), data.length - consumed))
    if stored.count < count {
      stored = [UInt8](repeating: 0, count: Int(min(UInt64(XARDataReader.chunkSize), data.length)))
    }
    try stored.withUnsafeMutableBytes { buffer in
      let out = UnsafeMutableRawBufferPointer(rebasing: buffer[..<count])
      if let window, data.length <= 64 * 1024 {
        guard try window.read(file, at: start + consumed, count: count, into: out) else {
          throw XARError.truncatedHeap(path: path)
        }
      } else {
        var filled = 0
        while filled < count {
          let n = try file.read(
            into: UnsafeMutableRawBufferPointer(rebasing: out[filled...]), at: start + consumed + UInt64(filled))
          guard n > 0 else { throw XARError.truncatedHeap(path: path) }
          filled += n
        }
      }
      archived.update(UnsafeRawBufferPointer(out))
    }
    consumed += UInt64(count)
    storedStart = 0
    storedEnd = count
    return true
  }

  /// The next chunk of stored bytes, hashed, as an array of its own (for a filter decoder);
  /// nil when the declared length is used up.
  private func pullStored() throws -> [UInt8]? {
    guard try refillStored() else { return nil }
    return Array(stored[..<storedEnd])
  }

  private func accept(_ chunk: UnsafeRawBufferPointer) throws {
    let size = data?.size ?? 0
    guard UInt64(chunk.count) <= size - produced else {
      throw XARError.dataLongerThanDeclared(path: path, declared: size)
    }
    produced += UInt64(chunk.count)
    extracted.update(chunk)
  }

  private func finish() throws {
    guard let data else { return }
    if case .zlib(let inflater) = decoder, !inflater.finished {
      throw XARError.corruptData(path: path, reason: "the compressed stream is truncated")
    }
    guard consumed == data.length else {
      throw XARError.storedLengthMismatch(path: path, declared: data.length, consumed: consumed)
    }
    guard produced == data.size else {
      throw XARError.dataSizeMismatch(path: path, declared: data.size, actual: produced)
    }
    if let expected = data.archivedChecksum {
      let actual = sharedHash ? extracted.finalize() : archived.finalize()
      guard actual.digest == expected.digest else {
        throw XARError.archivedChecksumMismatch(path: path, expected: expected.hex, actual: actual.hex)
      }
    }
    if let expected = data.extractedChecksum {
      let actual = extracted.finalize()
      guard actual.digest == expected.digest else {
        throw XARError.extractedChecksumMismatch(path: path, expected: expected.hex, actual: actual.hex)
      }
    }
    finished = true
  }
}
