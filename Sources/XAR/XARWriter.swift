import Dispatch
import SystemIO

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Something that yields bytes once, in order: a file, a buffer, a pipe.
package protocol XARByteSource {
  /// Fills up to `buffer.count` bytes; returns how many, 0 at the end.
  mutating func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int
}

extension FileDescriptor: XARByteSource {}

/// Bytes in memory, as a ``XARByteSource``.
package struct XARBytes: XARByteSource {
  private let bytes: [UInt8]
  private var position = 0

  package init(_ bytes: [UInt8]) { self.bytes = bytes }

  package mutating func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
    let n = min(buffer.count, bytes.count - position)
    guard n > 0 else { return 0 }
    bytes.withUnsafeBytes {
      buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: $0[position..<(position + n)]))
    }
    position += n
    return n
  }
}

/// Writes a XAR archive, deterministically: the same calls give the same bytes.
///
/// Entries are added one at a time; their data streams into a temporary heap file beside the
/// output, and only compact records are kept in memory. ``finish()`` writes the header, the
/// compressed TOC and the heap to another temporary file and renames it into place, so the
/// output appears whole or not at all. Nothing about the host (time, owner, inode) is written:
/// the caller gives every attribute.
///
/// ```swift
/// let writer = try XARWriter(path: "out.pkg")
/// try writer.addDirectory("Contents", attributes: .init(mode: 0o755))
/// var bytes = XARBytes(Array("hello".utf8))
/// try writer.addFile("Contents/a.txt", attributes: .init(mode: 0o644), encoding: .zlib(level: 6), data: &bytes)
/// try writer.finish()
/// ```
package final class XARWriter {
  /// The attributes written for an entry. Nothing is taken from the host.
  package struct Attributes: Equatable, Sendable {
    package var mode: UInt32
    package var uid: UInt64
    package var gid: UInt64
    /// Owner names; omitted from the TOC when nil.
    package var user: String?
    package var group: String?
    package var mtime: XARTimestamp

    package init(
      mode: UInt32, uid: UInt64 = 0, gid: UInt64 = 0, user: String? = nil, group: String? = nil,
      mtime: XARTimestamp = XARWriter.defaultTimestamp
    ) {
      self.mode = mode
      self.uid = uid
      self.gid = gid
      self.user = user
      self.group = group
      self.mtime = mtime
    }
  }

  /// How a file's data is stored.
  package enum Compression: Equatable, Sendable {
    case none
    /// zlib at a level from 1 (fast) to 9 (best).
    case zlib(level: Int32)
  }

  /// Archive-wide settings.
  package struct Options: Sendable {
    /// The algorithm for the TOC checksum and every file checksum.
    package var checksum: XARChecksumAlgorithm = .sha1
    /// Written as the TOC's `<creation-time>`; omitted when nil.
    package var creationTime: XARTimestamp? = XARWriter.defaultTimestamp
    /// Replace an existing file at the output path; when false, ``finish()`` fails with `EEXIST`.
    package var overwrite = true
    /// Threads that compress and hash files added whole (``addFile(_:attributes:compression:bytes:)``).
    /// The output is the same for every value: data is written in the order files were added.
    package var threads = 1
    /// Most bytes of whole files waiting for a thread or for their turn to be written.
    package var maxBytesInFlight = 16 << 20

    package init() {}
  }

  /// 2000-01-01T00:00:00Z: the time written when the caller has none (and no
  /// `SOURCE_DATE_EPOCH`), chosen to be obviously not a real build time.
  package static let defaultTimestamp = XARTimestamp(secondsSinceEpoch: 946_684_800)

  private struct Record {
    var parent: Int32
    var firstChild: Int32 = -1
    var lastChild: Int32 = -1
    var nextSibling: Int32 = -1
    var name: String
    var kind: XAREntryKind
    var attributes: Attributes
    var linkTarget: String? = nil
    var hardLinkOf: Int32 = -1
    var isHardLinkOriginal = false
    /// Index into `dataRecords`, or -1.
    var data: Int32 = -1
  }

  /// Where a file's data went; checksums live in `digests` (no array per file).
  private struct DataRecord {
    var offset: UInt64
    var length: UInt64
    var size: UInt64
    var gzip: Bool
    var digestStart: Int32  // archived digest, then extracted digest
  }
  private var dataRecords: [DataRecord] = []
  private var digests: [UInt8] = []

  private func setData(_ record: Int32, offset: UInt64, length: UInt64, size: UInt64, gzip: Bool, archived: XARChecksum?, extracted: XARChecksum?) {
    var start: Int32 = -1
    if options.checksum != .none, let archived, let extracted {
      start = Int32(digests.count)
      digests += archived.digest
      digests += extracted.digest
    }
    records[Int(record)].data = Int32(dataRecords.count)
    dataRecords.append(DataRecord(offset: offset, length: length, size: size, gzip: gzip, digestStart: start))
  }

  /// The data of a record, as the TOC describes it.
  private func data(of record: Record) -> XARData? {
    guard record.data >= 0 else { return nil }
    let d = dataRecords[Int(record.data)]
    var archived: XARChecksum?
    var extracted: XARChecksum?
    if d.digestStart >= 0 {
      let n = options.checksum.digestSize
      let a = Int(d.digestStart)
      archived = XARChecksum(algorithm: options.checksum, digest: Array(digests[a..<(a + n)]))
      extracted = XARChecksum(algorithm: options.checksum, digest: Array(digests[(a + n)..<(a + 2 * n)]))
    }
    return XARData(
      offset: d.offset, length: d.length, size: d.size, encoding: d.gzip ? .gzip : .none,
      archivedChecksum: archived, extractedChecksum: extracted)
  }

  /// The path of the archive this writer makes.
  package let path: String
  package let options: Options
  private var records: [Record] = []
  /// Records by (parent, name): names are shared with the records, not copied as full paths.
  private struct Key: Hashable {
    var parent: Int32
    var name: String
  }
  private var index: [Key: Int32] = [:]

  /// The record at `path`, if added.
  /// True when an entry at `path` (or one equal to it up to Unicode normalization) was added.
  package func contains(_ path: String) -> Bool { lookup(path) != nil }

  private func lookup(_ path: String) -> Int32? {
    var parent: Int32 = -1
    for component in path.split(separator: "/", omittingEmptySubsequences: false) {
      guard let i = index[Key(parent: parent, name: String(component))] else { return nil }
      parent = i
    }
    return parent
  }
  private var rootFirst: Int32 = -1
  private var rootLast: Int32 = -1
  private let heapPath: String
  private var heap: FileDescriptor?  // nil once published or cancelled
  private var heapSize: UInt64 = 0
  private var finished = false
  private var readBuffer = [UInt8](repeating: 0, count: 256 * 1024)

  /// Starts an archive that will appear at `path` when ``finish()`` succeeds.
  package init(path: String, options: Options = Options()) throws {
    self.path = path
    self.options = options
    heapPath = FileSystem.temporarySibling(of: path, purpose: "heap")
    heap = try FileDescriptor.create(heapPath, mode: 0o600)
    // The heap starts with the TOC checksum; file data follows it.
    heapSize = UInt64(options.checksum.digestSize)
  }

  deinit { cancel() }

  /// The number of entries added so far.
  package var entryCount: Int { records.count }

  /// Abandons the archive: removes the temporary heap. Nothing appears at ``path``.
  package func cancel() {
    if heap != nil {
      heap = nil
      FileSystem.removeFile(heapPath)
    }
    finished = true
  }

  /// Adds a folder.
  package func addDirectory(_ path: String, attributes: Attributes) throws {
    _ = try addRecord(path, kind: .directory, attributes: attributes)
  }

  /// Adds a symbolic link whose target is stored verbatim.
  package func addSymlink(_ path: String, target: String, attributes: Attributes) throws {
    let i = try addRecord(path, kind: .symlink, attributes: attributes)
    records[Int(i)].linkTarget = target
  }

  /// Adds a second name for a file added before; it shares that file's data.
  package func addHardLink(_ path: String, to original: String, attributes: Attributes) throws {
    guard let target = lookup(original), records[Int(target)].kind == .file else {
      throw XARError.hardLinkTargetNotAFile(path: path, target: original)
    }
    let i = try addRecord(path, kind: .hardLink, attributes: attributes)
    records[Int(i)].hardLinkOf = target
    records[Int(target)].isHardLinkOriginal = true
  }

  /// Adds a regular file, streaming its bytes from `data` until it ends.
  ///
  /// The archived and extracted checksums are computed in the same pass as the compression.
  package func addFile<Source: XARByteSource>(
    _ path: String, attributes: Attributes, compression: Compression, data: inout Source
  ) throws {
    try beginFile(path, attributes: attributes, compression: compression)
    while true {
      let n = try readBuffer.withUnsafeMutableBytes { try data.read(into: $0) }
      if n == 0 { break }
      try readBuffer.withUnsafeBytes { try writeFileData(UnsafeRawBufferPointer(rebasing: $0[..<n])) }
    }
    try endFile()
  }

  private struct OpenFile {
    var record: Int32
    var offset: UInt64
    var archived: XARHasher
    var extracted: XARHasher
    var size: UInt64 = 0
    var length: UInt64 = 0
    var deflater: ZlibDeflater?
  }
  private var openFile: OpenFile?

  /// Starts a regular file whose bytes follow through ``writeFileData(_:)``; ``endFile()`` ends it.
  /// For producers that push data rather than being pulled.
  package func beginFile(_ path: String, attributes: Attributes, compression: Compression) throws {
    guard openFile == nil else { throw XARError.invalidPath(path, reason: "another file is still open") }
    try writeQueuedJobs()
    let i = try addRecord(path, kind: .file, attributes: attributes)
    var deflater: ZlibDeflater? = nil
    if case .zlib(let level) = compression { deflater = ZlibDeflater(level: level) }
    openFile = OpenFile(
      record: i, offset: heapSize, archived: XARHasher(options.checksum), extracted: XARHasher(options.checksum),
      deflater: deflater)
  }

  /// The next bytes of the file begun with ``beginFile(_:attributes:compression:)``.
  package func writeFileData(_ chunk: UnsafeRawBufferPointer) throws {
    guard var file = openFile, let heap else { throw XARError.writerFinished }
    defer { openFile = file }
    file.extracted.update(chunk)
    file.size += UInt64(chunk.count)
    if let deflater = file.deflater {
      try deflater.deflate(chunk, finish: false) { piece in
        file.archived.update(piece)
        try heap.write(piece)
        file.length += UInt64(piece.count)
      }
    } else {
      // Stored: the archived checksum is the extracted one (hashed once, in endFile).
      try heap.write(chunk)
      file.length += UInt64(chunk.count)
    }
  }

  /// Ends the open file and records where its data lies.
  package func endFile() throws {
    guard var file = openFile, let heap else { throw XARError.writerFinished }
    openFile = nil
    // An empty file has no data: nothing was written to the heap.
    guard file.size > 0 else { return }
    if let deflater = file.deflater {
      try deflater.deflate(UnsafeRawBufferPointer(start: nil, count: 0), finish: true) { piece in
        file.archived.update(piece)
        try heap.write(piece)
        file.length += UInt64(piece.count)
      }
    }
    heapSize += file.length
    let extracted = file.extracted.finalize()
    setData(
      file.record, offset: file.offset, length: file.length, size: file.size, gzip: file.deflater != nil,
      archived: file.deflater == nil ? extracted : file.archived.finalize(), extracted: extracted)
  }

  /// Adds a file whose bytes are all in memory. It is compressed and hashed on a worker thread
  /// when ``Options/threads`` > 1, and written to the heap in the order files were added.
  /// Small files travel in batches, so a thread hand-off is not paid per file.
  package func addFile(
    _ path: String, attributes: Attributes, compression: Compression, bytes: [UInt8]
  ) throws {
    guard openFile == nil else { throw XARError.invalidPath(path, reason: "another file is still open") }
    let i = try addRecord(path, kind: .file, attributes: attributes)
    guard !bytes.isEmpty else { return }
    if batch == nil { batch = EncodeBatch(algorithm: options.checksum) }
    batch!.add(record: i, bytes: bytes, compression: compression)
    if batch!.inputBytes >= 1 << 20 || batch!.count >= 256 { try submitBatch() }
  }

  /// Hands the open batch to a worker (or runs it here with one thread).
  private func submitBatch() throws {
    guard let job = batch else { return }
    batch = nil
    if options.threads > 1 {
      queuedBytes += job.inputBytes
      queue.append(job)
      job.start()
      while queuedBytes > options.maxBytesInFlight || queue.count - queueHead > 4 * options.threads {
        try writeOldestJob()
      }
    } else {
      job.run()
      queue.append(job)
      try writeOldestJob()
    }
  }

  /// Whole files being compressed and hashed together, maybe on another thread.
  private final class EncodeBatch: @unchecked Sendable {
    struct Item {
      var record: Int32
      var bytes: [UInt8]
      var compression: Compression
      var stored: [UInt8] = []
      var size = 0
      var archived: XARChecksum?
      var extracted: XARChecksum?
    }
    let algorithm: XARChecksumAlgorithm
    private(set) var items: [Item] = []
    private(set) var inputBytes = 0
    private let done = DispatchSemaphore(value: 0)

    init(algorithm: XARChecksumAlgorithm) { self.algorithm = algorithm }

    var count: Int { items.count }

    func add(record: Int32, bytes: [UInt8], compression: Compression) {
      items.append(Item(record: record, bytes: bytes, compression: compression))
      inputBytes += bytes.count
    }

    func start() {
      DispatchQueue.global().async { self.run(); self.done.signal() }
    }

    func wait() { done.wait() }

    func run() {
      for index in items.indices {
        var item = items[index]
        item.size = item.bytes.count
        var hasher = XARHasher(algorithm)
        hasher.update(item.bytes)
        item.extracted = hasher.finalize()
        if case .zlib(let level) = item.compression {
          let deflater = DeflaterPool.shared.take(level: level)
          item.stored = deflater.compressWhole(item.bytes)
          DeflaterPool.shared.give(deflater)
          var a = XARHasher(algorithm)
          a.update(item.stored)
          item.archived = a.finalize()
        } else {
          item.stored = item.bytes
          item.archived = item.extracted  // the same bytes: hash once
        }
        item.bytes = []
        items[index] = item
      }
    }
  }

  private var batch: EncodeBatch?

  /// Deflaters kept between files: starting a stream with `deflateReset` costs far less than a
  /// new one (which clears 64 KiB of tables), and gives the same bytes.
  private final class DeflaterPool: @unchecked Sendable {
    static let shared = DeflaterPool()
    private let lock = DispatchSemaphore(value: 1)
    private var free: [ZlibDeflater] = []

    func take(level: Int32) -> ZlibDeflater {
      lock.wait()
      defer { lock.signal() }
      if let i = free.lastIndex(where: { $0.level == level }) { return free.remove(at: i) }
      return ZlibDeflater(level: level)
    }

    func give(_ deflater: ZlibDeflater) {
      lock.wait()
      if free.count < 4 { free.append(deflater) }
      lock.signal()
    }
  }

  private var queue: [EncodeBatch] = []
  private var queueHead = 0
  private var queuedBytes = 0

  /// Waits for the oldest queued batch and appends its files to the heap.
  private func writeOldestJob() throws {
    guard queueHead < queue.count, let heap else { return }
    let job = queue[queueHead]
    queue[queueHead] = EncodeBatch(algorithm: options.checksum)  // drop our reference to the data
    queueHead += 1
    if options.threads > 1 { job.wait() }
    for item in job.items {
      try item.stored.withUnsafeBytes { try bufferedHeapWrite($0, heap) }
      setData(
        item.record, offset: heapSize, length: UInt64(item.stored.count), size: UInt64(item.size),
        gzip: item.compression != .none, archived: item.archived, extracted: item.extracted)
      heapSize += UInt64(item.stored.count)
    }
    if options.threads > 1 { queuedBytes -= job.inputBytes }
    if queueHead == queue.count {
      queue.removeAll(keepingCapacity: true)
      queueHead = 0
    }
  }

  /// Writes every queued file, in order, and flushes the heap buffer.
  private func writeQueuedJobs() throws {
    try submitBatch()
    while queueHead < queue.count { try writeOldestJob() }
    if let heap, !heapBuffer.isEmpty {
      try heapBuffer.withUnsafeBytes { try heap.write($0) }
      heapBuffer.removeAll(keepingCapacity: true)
    }
  }

  /// Small files are gathered into one write.
  private var heapBuffer: [UInt8] = []

  private func bufferedHeapWrite(_ bytes: UnsafeRawBufferPointer, _ heap: FileDescriptor) throws {
    let large = bytes.count >= 1 << 19
    if !heapBuffer.isEmpty && (large || heapBuffer.count + bytes.count > 1 << 20) {
      try heapBuffer.withUnsafeBytes { try heap.write($0) }
      heapBuffer.removeAll(keepingCapacity: true)
    }
    if large {
      try heap.write(bytes)
    } else {
      heapBuffer.append(contentsOf: bytes)
    }
  }

  /// The folder most recently added to, so siblings do not walk the path again.
  private var lastParent: (path: String?, index: Int32) = (nil, -1)

  private func lookupParent(_ path: String) -> Int32? {
    if lastParent.path == path { return lastParent.index }
    return lookup(path)
  }

  private func addRecord(_ path: String, kind: XAREntryKind, attributes: Attributes) throws -> Int32 {
    guard !finished else { throw XARError.writerFinished }
    let (parentPath, name) = try XARWriter.split(path)
    var parent: Int32 = -1
    if let parentPath {
      guard let p = lookupParent(parentPath), records[Int(p)].kind == .directory else {
        throw XARError.missingParent(path: path, parent: parentPath)
      }
      parent = p
    }
    let key = Key(parent: parent, name: name)
    guard index[key] == nil else { throw XARError.duplicatePath(path) }
    let i = Int32(records.count)
    records.append(Record(parent: parent, name: name, kind: kind, attributes: attributes))
    index[key] = i
    lastParent = (parentPath, parent)
    if parent >= 0 {
      if records[Int(parent)].lastChild >= 0 {
        records[Int(records[Int(parent)].lastChild)].nextSibling = i
      } else {
        records[Int(parent)].firstChild = i
      }
      records[Int(parent)].lastChild = i
    } else {
      if rootLast >= 0 { records[Int(rootLast)].nextSibling = i } else { rootFirst = i }
      rootLast = i
    }
    return i
  }

  static func split(_ path: String) throws -> (parent: String?, name: String) {
    guard !path.isEmpty else { throw XARError.invalidPath(path, reason: "the path is empty") }
    guard !path.hasPrefix("/") else {
      throw XARError.invalidPath(path, reason: "absolute paths are not allowed")
    }
    guard !path.utf8.contains(0) else {
      throw XARError.invalidPath(path, reason: "the path holds a NUL byte")
    }
    let components = path.split(separator: "/", omittingEmptySubsequences: false)
    for component in components {
      if component.isEmpty || component == "." || component == ".." {
        throw XARError.invalidPath(path, reason: "empty, '.' or '..' components are not allowed")
      }
    }
    guard let slash = path.lastIndex(of: "/") else { return (nil, path) }
    return (String(path[..<slash]), String(path[path.index(after: slash)...]))
  }

  /// Writes the header, TOC and heap, and renames the result to ``path``.
  ///
  /// On failure nothing appears at ``path`` and the temporary files are removed.
  @discardableResult
  package func finish() throws -> Summary {
    try finish(checkingSize: nil)
  }

  /// What ``finish()`` wrote.
  package struct Summary: Sendable {
    /// The archive's size in bytes.
    package var size: UInt64
    /// SHA-256 of the whole archive file, computed as it was written.
    package var sha256: XARChecksum
  }

  /// Like ``finish()``, but first calls `check` with the size the archive will have; if it
  /// throws, nothing is written and the error is passed on.
  @discardableResult
  package func finish(checkingSize check: ((UInt64) throws -> Void)?) throws -> Summary {
    guard !finished, openFile == nil, let heap else { throw XARError.writerFinished }
    defer { cancel() }
    try writeQueuedJobs()
    let checksumSize = options.checksum.digestSize
    let headerSize = XARHeader(tocCompressedLength: 0, tocUncompressedLength: 0, checksumAlgorithm: options.checksum).headerSize
    let toc = streamAlignedTOC(headerSize: Int(headerSize), checksumSize: checksumSize)
    var hasher = XARHasher(options.checksum)
    hasher.update(toc.compressed)
    let tocChecksum = hasher.finalize().digest

    let header = XARHeader(
      tocCompressedLength: UInt64(toc.compressed.count),
      tocUncompressedLength: UInt64(toc.uncompressedLength), checksumAlgorithm: options.checksum)
    let front = header.encoded() + toc.compressed + tocChecksum
    let dataLength = heapSize - UInt64(checksumSize)
    let size = UInt64(front.count) + dataLength
    try check?(size)
    var digest = XARHasher(.sha256)
    digest.update(front)

    // Best: make room in front of the heap file and write header and TOC there; no data is
    // copied. Else: a new file, the heap copied behind the front.
    if heap.insertRange(at: 0, length: UInt64(front.count)) {
      try heap.write(front, at: 0)
      var buffer = [UInt8](repeating: 0, count: 4 << 20)
      var offset = UInt64(front.count)
      while offset < size {
        let n = try buffer.withUnsafeMutableBytes { try heap.read(into: $0, at: offset) }
        guard n > 0 else { throw SystemError("read", path: heapPath, code: EIO) }
        buffer.withUnsafeBytes { digest.update(UnsafeRawBufferPointer(rebasing: $0[..<n])) }
        offset += UInt64(n)
      }
      try heap.setMode(0o644)
      try heap.sync()
      try publish(heapPath)
      self.heap = nil  // published: nothing to remove
      return Summary(size: size, sha256: digest.finalize())
    }
    let outputTemp = FileSystem.temporarySibling(of: path, purpose: "tmp")
    do {
      let out = try FileDescriptor.create(outputTemp, mode: 0o644)
      try out.write(front)
      try out.append(from: heap, offset: 0, length: dataLength) { digest.update($0) }
      try out.sync()
      try publish(outputTemp)
    } catch {
      FileSystem.removeFile(outputTemp)
      throw error
    }
    return Summary(size: size, sha256: digest.finalize())
  }

  /// Renames (or, without `overwrite`, links) a finished file to ``path``.
  private func publish(_ temporary: String) throws {
    if options.overwrite {
      try FileSystem.rename(temporary, to: path)
    } else {
      try FileSystem.link(temporary, to: path)
      FileSystem.removeFile(temporary)
    }
  }

  // The TOC is padded so that header + TOC + TOC checksum end on a 4096-byte boundary: the heap
  // then starts on a file-system block, which lets ``finish()`` put the header in front of the
  // heap without copying it. The padding is whitespace after the XML (which XML allows), in a
  // final stored block; it costs under 4 KiB.

  /// Ends an unfinished zlib stream `body` (of XML with length and Adler-32 given) with a
  /// stored block of spaces sized so the heap starts on a 4096-byte boundary.
  static func padTOC(_ body: [UInt8], xmlLength: Int, xmlAdler: UInt32, headerSize: Int, checksumSize: Int) -> (compressed: [UInt8], uncompressedLength: Int) {
    let overhead = 5 + 4  // stored-block header, Adler-32
    let used = headerSize + body.count + overhead + checksumSize
    let aligned = (used + 4095) / 4096 * 4096
    let padding = [UInt8](repeating: UInt8(ascii: " "), count: aligned - used)
    var out = body
    let length = UInt16(padding.count)
    out += [0x01, UInt8(length & 0xFF), UInt8(length >> 8), UInt8(~length & 0xFF), UInt8(~length >> 8)]
    out += padding
    let adler = padding.withUnsafeBytes { ZlibDeflater.adler32($0, continuing: xmlAdler) }
    out += [UInt8(adler >> 24), UInt8(adler >> 16 & 0xFF), UInt8(adler >> 8 & 0xFF), UInt8(adler & 0xFF)]
    return (out, xmlLength + padding.count)
  }

  /// The aligned TOC (see ``padTOC(_:xmlLength:xmlAdler:headerSize:checksumSize:)``), compressed as libxml2
  /// writes it, so the XML is never held whole.
  private func streamAlignedTOC(headerSize: Int, checksumSize: Int) -> (compressed: [UInt8], uncompressedLength: Int) {
    let deflater = ZlibDeflater(level: 9)
    var body: [UInt8] = []
    var adler: UInt32? = nil
    var length = 0
    let xml = XMLTextWriter { chunk in
      adler = ZlibDeflater.adler32(chunk, continuing: adler)
      length += chunk.count
      try! deflater.deflate(chunk, finish: false) { body.append(contentsOf: $0) }
    }
    writeTOC(xml)
    xml.finishStreaming()
    try! deflater.syncFlush { body.append(contentsOf: $0) }
    return XARWriter.padTOC(body, xmlLength: length, xmlAdler: adler ?? 1, headerSize: headerSize, checksumSize: checksumSize)
  }

  private func writeTOC(_ xml: XMLTextWriter) {
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
      let record = records[Int(current)]
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

  private func writeFileElement(_ xml: XMLTextWriter, id: Int32, record: Record) {
    xml.startElement("file")
    xml.attribute("id", String(id + 1))
    if XARWriter.isXMLSafe(record.name) {
      xml.element("name", record.name)
    } else {
      xml.startElement("name")
      xml.attribute("enctype", "base64")
      xml.text(Base64.encode(Array(record.name.utf8)))
      xml.endElement()
    }
    switch record.kind {
    case .hardLink:
      xml.startElement("type")
      xml.attribute("link", String(record.hardLinkOf + 1))
      xml.text("hardlink")
      xml.endElement()
    case .file where record.isHardLinkOriginal:
      xml.startElement("type")
      xml.attribute("link", "original")
      xml.text("hardlink")
      xml.endElement()
    default:
      xml.element("type", record.kind.typeName)
    }
    if let target = record.linkTarget {
      xml.startElement("link")
      if XARWriter.isXMLSafe(target) {
        xml.text(target)
      } else {
        xml.attribute("enctype", "base64")
        xml.text(Base64.encode(Array(target.utf8)))
      }
      xml.endElement()
    }
    let a = record.attributes
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
