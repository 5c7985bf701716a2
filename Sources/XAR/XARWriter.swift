import Dispatch
import SystemIO
import Zlib

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

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
/// try writer.addFile(
///   "Contents/a.txt", attributes: .init(mode: 0o644), compression: .zlib(level: 6),
///   data: MemoryBytes(Array("hello".utf8)))
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
    /// A zlib stream at a level from 1 (fast) to 9 (best), made by libdeflate: whole for files
    /// added whole (``XARWriter/addFile(_:attributes:compression:bytes:)``), in pieces of
    /// ``PieceDeflation/fileChunkSize`` joined into one stream for streamed ones.
    case zlib(level: Int32)
    /// As ``zlib(level:)``, unless a sample of the bytes (``DeflateSample``) shows they would not
    /// shrink enough: then stored. A file added whole is sampled from its bytes; a streamed one
    /// from the sample given to ``XARWriter/beginFile(_:attributes:compression:sample:)`` (none
    /// given: deflated). Files under ``DeflateSample/minimumSize`` are not sampled.
    case sampledZlib(level: Int32)

    /// The level to deflate at, before any sample is taken; nil: stored.
    var level: Int32? {
      switch self {
      case .none: return nil
      case .zlib(let level), .sampledZlib(let level): return level
      }
    }
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
    /// Most bytes of whole files waiting for a thread or for their turn to be written. 3 MiB
    /// builds the benchmark's mixed tree as fast as 4, 6 or 10 (2 MiB was 15% slower), in less
    /// memory (docs/performance.md).
    package var maxBytesInFlight = 3 << 20

    package init() {}
  }

  /// 2000-01-01T00:00:00Z: the time written when the caller has none (and no
  /// `SOURCE_DATE_EPOCH`), chosen to be obviously not a real build time.
  package static let defaultTimestamp = XARTimestamp(secondsSinceEpoch: 946_684_800)

  /// The path of the archive this writer makes.
  package let path: String

  package let options: Options

  // MARK: State (kept in this body: extensions in the other XARWriter files use it)
  var table = RecordTable()

  var rootFirst: Int32 = -1
  var rootLast: Int32 = -1

  /// The heap file beside the output; when the TOC can be put in front of it, it becomes the archive.
  var pendingHeap: PendingFile?  // nil once published or cancelled
  /// The heap file's descriptor; nil once published or cancelled.
  var heap: FileDescriptor? { pendingHeap?.descriptor }

  /// The heap's size in the archive: the TOC checksum's room, then the data added so far
  /// (grown through ``growHeap(by:)``).
  var heapSize: UInt64 = 0
  /// Files handed whole with compression asked for, stored as they are because deflating them
  /// made them no smaller.
  package internal(set) var filesStoredUnshrunk = 0
  /// Files stored as they are because their sample did not shrink enough
  /// (``Compression/sampledZlib(level:)``), and their bytes.
  package internal(set) var filesStoredBySample = 0
  package internal(set) var bytesStoredBySample: UInt64 = 0
  /// Where the heap file's data not yet handed to the kernel's writeback starts.
  var writebackStart: UInt64 = 0
  var finished = false
  /// Where each file's data went, on disk until the TOC is written.
  let dataSpill: DataSpill

  var readBuffer = [UInt8](repeating: 0, count: 256 * 1024)
  var openFile: OpenFile?

  var batch: EncodeBatch?
  var queue: [EncodeBatch] = []
  var queueHead = 0

  var queuedBytes = 0
  /// Buffers of whole files already written to the heap, for the next files' bytes
  /// (``wholeFileBuffer(capacity:)``), largest first, at most ``spareBufferBytes`` of them.
  var spareBuffers: [[UInt8]] = []

  /// Small files are gathered into one write.
  var heapBuffer: [UInt8] = {
    var b = [UInt8]()
    b.reserveCapacity(XARWriter.heapBufferSize)
    return b
  }()
  /// 256 KiB: writes of 1 MiB were no faster, and the buffer is held for the whole build.
  static let heapBufferSize = 256 << 10

  /// The folder most recently added to, so siblings do not walk the path again.
  var lastParent: (path: Substring?, index: Int32) = (nil, -1)

  // MARK: Adding entries

  /// True when an entry at `path` (or one equal to it up to Unicode normalization) was added.
  package func contains(_ path: String) -> Bool {
    guard let slash = path.lastIndex(of: "/") else { return table.find(parent: -1, name: path[...]) != nil }
    // The folder is most often the one added to last: its lookup is cached.
    guard let parent = lookupParent(path[..<slash]) else { return false }
    return table.find(parent: parent, name: path[path.index(after: slash)...]) != nil
  }

  /// Starts an archive that will appear at `path` when ``finish()`` succeeds.
  package init(path: String, options: Options = Options()) throws {
    self.path = path
    self.options = options
    pendingHeap = try PendingFile(beside: path, purpose: "heap")
    dataSpill = DataSpill(beside: path, digestSize: options.checksum.digestSize)
    // The heap starts with the TOC checksum; file data follows it.
    heapSize = UInt64(options.checksum.digestSize)
  }

  deinit { cancel() }

  /// The number of entries added so far.
  package var entryCount: Int { table.count }

  /// Abandons the archive: removes the temporary heap. Nothing appears at ``path``.
  package func cancel() {
    pendingHeap?.discard()
    pendingHeap = nil
    dataSpill.remove()
    finished = true
  }

  /// Adds a folder.
  package func addDirectory(_ path: String, attributes: Attributes) throws {
    _ = try addRecord(path, kind: .directory, attributes: attributes)
  }

  /// Adds a symbolic link whose target is stored verbatim.
  package func addSymlink(_ path: String, target: String, attributes: Attributes) throws {
    let i = try addRecord(path, kind: .symlink, attributes: attributes)
    table.linkTargets[i] = target
  }

  /// Adds a second name for a file added before; it shares that file's data.
  package func addHardLink(_ path: String, to original: String, attributes: Attributes) throws {
    guard let target = lookup(original[...]), table[target].kind == .file else {
      throw XARError.hardLinkTargetNotAFile(path: path, target: original)
    }
    let i = try addRecord(path, kind: .hardLink, attributes: attributes)
    table.hardLinkOf[i] = target
    table[target].isHardLinkOriginal = true
  }

  /// Adds a regular file, streaming its bytes from `data` until it ends.
  ///
  /// The archived and extracted checksums are computed in the same pass as the compression.
  package func addFile(
    _ path: String, attributes: Attributes, compression: Compression, data: some ByteSource
  ) throws {
    try beginFile(path, attributes: attributes, compression: compression)
    while true {
      let n = try readBuffer.withUnsafeMutableBytes { try data.read(into: $0) }
      if n == 0 { break }
      try readBuffer.withUnsafeBytes { try writeFileData(UnsafeRawBufferPointer(rebasing: $0[..<n])) }
    }
    try endFile()
  }

  struct OpenFile {
    var record: Int32
    var offset: UInt64
    var extracted: XARHasher
    var size: UInt64 = 0
    /// The stored bytes' length (a stored file's; a deflated one's is its output's).
    var length: UInt64 = 0
    /// The level to deflate at; nil: stored.
    var level: Int32?
    /// Made with the first bytes: an empty file writes nothing, not even a zlib header.
    var deflation: PieceDeflation?
    var output: DeflatedOutput?
    var storedBySample = false
  }

  /// Where a streamed file's compressed pieces go, in order, on the writer's thread.
  final class DeflatedOutput {
    let heap: FileDescriptor
    var archived: XARHasher
    var length: UInt64 = 0

    init(heap: FileDescriptor, algorithm: XARChecksumAlgorithm) {
      self.heap = heap
      archived = XARHasher(algorithm)
    }

    func write(_ bytes: UnsafeRawBufferPointer) throws {
      archived.update(bytes)
      try heap.write(bytes)
      length += UInt64(bytes.count)
    }
  }

  /// Starts a regular file whose bytes follow through ``writeFileData(_:)``; ``endFile()`` ends it.
  /// For producers that push data rather than being pulled.
  ///
  /// A deflated file is cut into pieces of ``PieceDeflation/fileChunkSize`` bytes, deflated on
  /// the worker threads (``Options/threads``) and joined into one zlib stream; the pieces are
  /// cut at fixed offsets, so the bytes are the same for any number of threads.
  ///
  /// - Parameter sample: for ``Compression/sampledZlib(level:)``, the file's first bytes, those
  ///   at ``DeflateSample/bodyRanges(size:)`` (one after another) and its size
  ///   (``DeflateSample/shrinks(lead:middle:size:)``).
  package func beginFile(
    _ path: String, attributes: Attributes, compression: Compression,
    sample: (lead: UnsafeRawBufferPointer, middle: UnsafeRawBufferPointer, size: UInt64)? = nil
  ) throws {
    guard openFile == nil else { throw XARError.invalidPath(path, reason: "another file is still open") }
    guard heap != nil else { throw XARError.writerFinished }
    try writeQueuedJobs()
    let i = try addRecord(path, kind: .file, attributes: attributes)
    var file = OpenFile(record: i, offset: heapSize, extracted: XARHasher(options.checksum))
    if case .sampledZlib = compression, let sample,
      !DeflateSample.shrinks(lead: sample.lead, middle: sample.middle, size: sample.size)
    {
      file.storedBySample = true
    } else {
      file.level = compression.level
    }
    openFile = file
  }

  /// The next bytes of the file begun with ``beginFile(_:attributes:compression:sample:)``.
  package func writeFileData(_ chunk: UnsafeRawBufferPointer) throws {
    guard var file = openFile, let heap else { throw XARError.writerFinished }
    defer { openFile = file }
    file.extracted.update(chunk)
    file.size += UInt64(chunk.count)
    if let level = file.level {
      if file.deflation == nil && !chunk.isEmpty {
        let output = DeflatedOutput(heap: heap, algorithm: options.checksum)
        file.output = output
        file.deflation = PieceDeflation(
          level: level, chunkSize: PieceDeflation.fileChunkSize, threads: options.threads, output: output.write)
      }
      file.deflation?.append(chunk)
    } else {
      // Stored: the archived checksum is the extracted one (hashed once, in endFile).
      try heap.write(chunk)
      file.length += UInt64(chunk.count)
    }
  }

  /// Ends the open file and records where its data lies.
  package func endFile() throws {
    guard let file = openFile, heap != nil else { throw XARError.writerFinished }
    openFile = nil
    var archived: XARChecksum? = nil
    var length = file.length
    if let deflation = file.deflation, let output = file.output {
      // Every piece written (or the first error), then the stream ended: a final empty block
      // and the Adler-32 of the whole input.
      let (_, adler) = try deflation.finish()
      let end = PieceDeflation.finalBlock + withUnsafeBytes(of: adler.bigEndian) { Array($0) }
      try end.withUnsafeBytes { try output.write($0) }
      archived = output.archived.finalize()
      length = output.length
    }
    // An empty file has no data: nothing was written to the heap.
    guard file.size > 0 else { return }
    if file.storedBySample {
      filesStoredBySample += 1
      bytesStoredBySample += file.size
    }
    growHeap(by: length)
    let extracted = file.extracted.finalize()
    try setData(
      file.record, offset: file.offset, length: length, size: file.size, gzip: archived != nil,
      archived: archived ?? extracted, extracted: extracted)
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

  // MARK: Finishing

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
    // Where room can be made in front of the heap file (Linux, below), it becomes the package:
    // its data, all written now, is flushed to the disk from here on, on a thread of its own,
    // while the TOC is made and everything hashed, so the flush before the rename has only the
    // front left. (Mixed benchmark: that flush took 0.5–0.6 s after the hashing, most of it the
    // disk's cache flush.) Waited for before the file changes shape, and on every way out.
    #if os(Linux)
      let inPlace = true
      let dataFlush: BackgroundFlush? = heap.startFlush()
    #else
      let inPlace = false
      let dataFlush: BackgroundFlush? = nil
    #endif
    defer { try? dataFlush?.wait() }
    // The data's buffers are done with: the TOC phase is where a build peaks.
    heapBuffer = []
    readBuffer = []
    spareBuffers = []
    let checksumSize = options.checksum.digestSize
    let headerSize = XARHeader(tocCompressedLength: 0, tocUncompressedLength: 0, checksumAlgorithm: options.checksum)
      .headerSize
    let dataLength = heapSize - UInt64(checksumSize)
    // The compressed TOC is written behind the data, then moved to the front: kept in memory, it
    // was the largest thing a build of many small files held (3.4 MB for 50,000).
    let toc = try spillAlignedTOC(into: heap, at: dataLength, headerSize: Int(headerSize), checksumSize: checksumSize)
    let tocLength = UInt64(toc.compressedLength)

    let header = XARHeader(
      tocCompressedLength: tocLength, tocUncompressedLength: UInt64(toc.uncompressedLength),
      checksumAlgorithm: options.checksum)
    let headerBytes = header.encoded()
    let frontLength = UInt64(headerBytes.count) + tocLength + UInt64(toc.checksum.count)
    let size = frontLength + dataLength
    try check?(size)
    var digest = XARHasher(.sha256)
    digest.update(headerBytes)
    try heap.observe(offset: toc.offset, length: tocLength) { digest.update($0) }
    digest.update(toc.checksum)

    // Best: make room in front of the heap file and move the TOC there; no data is copied.
    // Else: a new file, the TOC and the heap copied behind the header (and hashed on the way).
    //
    // Where the room can be made (Linux), the data is hashed first, from the page cache in
    // place (mapped, not copied): making the room writes the file back and drops its cached
    // pages, and hashing after it read all 424 MB of the mixed benchmark's package back from
    // the disk (1.1 s of the build's CPU; 0.3 s now).
    if inPlace { try heap.observe(offset: 0, length: dataLength) { digest.update($0) } }
    try dataFlush?.wait()
    if heap.insertRange(at: 0, length: frontLength) {  // only on Linux: the data is hashed
      try heap.write(headerBytes, at: 0)
      try heap.copy(from: frontLength + toc.offset, length: tocLength, to: UInt64(headerBytes.count))
      try heap.write(toc.checksum, at: UInt64(headerBytes.count) + tocLength)
      try heap.truncate(to: size)
      try heap.setMode(0o644)
      // Renamed over the output (or, without `overwrite`, linked into place).
      try pendingHeap?.commit(replace: options.overwrite)
      pendingHeap = nil  // published: nothing to remove
      return Summary(size: size, sha256: digest.finalize())
    }
    // Discarded by its deinit if anything below fails.
    let output = try PendingFile(beside: path, mode: 0o644)
    let out = output.descriptor
    try out.write(headerBytes)
    try out.append(from: heap, offset: toc.offset, length: tocLength) { _ in }
    try out.write(toc.checksum)
    try out.append(from: heap, offset: 0, length: dataLength) { if !inPlace { digest.update($0) } }
    try output.commit(replace: options.overwrite)
    return Summary(size: size, sha256: digest.finalize())
  }
}
