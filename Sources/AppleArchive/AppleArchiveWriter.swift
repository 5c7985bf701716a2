import Crypto
import SystemIO

/// Writes an Apple Archive: directories, symbolic links and files (their data streamed in
/// chunks), raw or in `pbz*` blocks. The same calls give the same bytes: nothing is written that
/// the caller did not give (no times, owners or flags unless given).
///
/// Each entry's header holds, in this order: `TYP1`, `PATP`, `LNKP` (links), `MOD2`, `MTMT` (when
/// a time is given), and for files `SH2H` (when the digest is known) and `DAT` with the smallest
/// blob subtype that fits (`A` up to 65,535 bytes, `B` up to 4 GiB - 1, else `C`). A header
/// comes before its data, so a streamed file's SHA-256 is given when it is begun (or omitted);
/// the writer checks it against the bytes and fails if they differ. ``addFile(_:contents:mode:modificationTime:)``
/// computes it.
///
/// Holds one block (the block size) for a compressed archive, and one more per thread encoding
/// (raw and encoded); 64 KiB for a raw one. After any
/// error, every call throws it again and the output is not a whole archive.
package final class AppleArchiveWriter {
  /// How the archive is stored.
  package let compression: AppleArchiveCompression
  /// The block size of a compressed archive.
  package let blockSize: Int

  private let sink: (UnsafeRawBufferPointer) throws -> Void
  private var pending: [UInt8] = []
  private var entryCount = 0
  private var openFile: (entry: Int, path: [UInt8], size: UInt64, written: UInt64, digest: [UInt8]?, hash: SHA256?)?
  private var finished = false
  private var failure: AppleArchiveError?
  /// Threads that encode blocks (1: this thread does); the bytes are the same for any number.
  private let threads: Int
  private var pool: BlockEncoderPool?
  private var poolFailed = false

  /// Writes to `file` at its current position.
  package convenience init(
    file: FileDescriptor, compression: AppleArchiveCompression = .none, blockSize: Int = AppleArchive.defaultBlockSize,
    threads: Int = 1
  ) throws {
    try self.init(compression: compression, blockSize: blockSize, threads: threads) { try file.write($0) }
  }

  /// Writes through `write`, which must take every byte it is given.
  ///
  /// - Parameters:
  ///   - blockSize: 1 byte to 64 MiB (what the reader accepts by default).
  ///   - threads: how many threads encode blocks (default 1: the caller's); the bytes are the
  ///     same for any number; one block per thread is held (raw and encoded) besides the one
  ///     being filled.
  package init(
    compression: AppleArchiveCompression = .none, blockSize: Int = AppleArchive.defaultBlockSize, threads: Int = 1,
    write: @escaping (UnsafeRawBufferPointer) throws -> Void
  ) throws {
    self.threads = max(1, min(threads, 64))
    guard blockSize > 0, UInt64(blockSize) <= AppleArchiveLimits().maxBlockSize else {
      throw AppleArchiveError(.writerMisuse("a block size of \(blockSize) bytes is not between 1 byte and 64 MiB"))
    }
    self.compression = compression
    self.blockSize = blockSize
    sink = write
    pending.reserveCapacity(compression == .none ? 64 << 10 : blockSize)
    if let letter = compression.letter {
      var framing = Array("pbz".utf8) + [letter]
      for shift in stride(from: 56, through: 0, by: -8) {
        framing.append(UInt8(truncatingIfNeeded: UInt64(blockSize) >> UInt64(shift)))
      }
      try framing.withUnsafeBytes { try sink($0) }
    }
  }

  /// Adds a directory; only a directory may have the empty path (the archive's root).
  package func addDirectory(_ path: [UInt8], mode: UInt16 = 0o755, modificationTime: AppleArchiveTime? = nil) throws {
    try guarded {
      let header = try header(kind: .directory, path: path, link: nil, mode: mode, time: modificationTime, data: nil)
      try append(header)
    }
  }

  /// Adds a symbolic link to `target` (not checked beyond: not empty, no NUL byte).
  package func addSymlink(
    _ path: [UInt8], target: [UInt8], mode: UInt16 = 0o755, modificationTime: AppleArchiveTime? = nil
  ) throws {
    try guarded {
      let header = try header(kind: .symlink, path: path, link: target, mode: mode, time: modificationTime, data: nil)
      try append(header)
    }
  }

  /// Begins a file of `size` bytes; its data follows through ``writeData(_:)`` and ends with
  /// ``endFile()``. With `sha256`, the header carries it (`SH2`) and ``endFile()`` checks it.
  package func beginFile(
    _ path: [UInt8], size: UInt64, mode: UInt16 = 0o644, sha256: [UInt8]? = nil,
    modificationTime: AppleArchiveTime? = nil
  ) throws {
    try guarded {
      if let sha256, sha256.count != 32 {
        throw AppleArchiveError(.writerMisuse("a SHA-256 digest has 32 bytes, not \(sha256.count)"))
      }
      let header = try header(
        kind: .file, path: path, link: nil, mode: mode, time: modificationTime, data: (size, sha256))
      try append(header)
      openFile = (entryCount, path, size, 0, sha256, sha256 == nil ? nil : SHA256())
    }
  }

  /// Writes the next chunk of the open file's data.
  package func writeData(_ chunk: UnsafeRawBufferPointer) throws {
    try guarded {
      guard var file = openFile else { throw AppleArchiveError(.writerMisuse("data written with no file begun")) }
      guard UInt64(chunk.count) <= file.size - file.written else {
        throw AppleArchiveError(
          .dataSizeMismatch(declared: file.size, written: file.written + UInt64(chunk.count)), entry: file.entry,
          path: file.path)
      }
      file.written += UInt64(chunk.count)
      file.hash?.update(bufferPointer: chunk)
      openFile = file
      try append(chunk)
    }
  }

  /// Ends the open file: throws when fewer bytes were written than begun with, or when the data
  /// does not have the SHA-256 given.
  package func endFile() throws {
    try guarded {
      guard let file = openFile else { throw AppleArchiveError(.writerMisuse("endFile() with no file begun")) }
      guard file.written == file.size else {
        throw AppleArchiveError(
          .dataSizeMismatch(declared: file.size, written: file.written), entry: file.entry, path: file.path)
      }
      if let digest = file.digest, let hash = file.hash {
        let actual = Array(hash.finalize())
        guard actual == digest else {
          throw AppleArchiveError(
            .declaredDigestMismatch(declared: AppleArchiveError.hex(digest), actual: AppleArchiveError.hex(actual)),
            entry: file.entry, path: file.path)
        }
      }
      openFile = nil
    }
  }

  /// Adds a file whose bytes are all at hand, with its SHA-256.
  package func addFile(
    _ path: [UInt8], contents: [UInt8], mode: UInt16 = 0o644, modificationTime: AppleArchiveTime? = nil
  ) throws {
    let digest = Array(SHA256.hash(data: contents))
    try beginFile(path, size: UInt64(contents.count), mode: mode, sha256: digest, modificationTime: modificationTime)
    try contents.withUnsafeBytes { try writeData($0) }
    try endFile()
  }

  /// Writes what is held (the last block) and ends the archive. Throws when a file is open.
  package func finish() throws {
    try guarded {
      if let file = openFile {
        throw AppleArchiveError(
          .dataSizeMismatch(declared: file.size, written: file.written), entry: file.entry, path: file.path)
      }
      try flush()
      try drainPool()
      finished = true
    }
  }

  // MARK: Inside

  private func guarded(_ body: () throws -> Void) throws {
    if let failure { throw failure }
    if finished { throw AppleArchiveError(.writerMisuse("the archive is already finished")) }
    do {
      try body()
    } catch let error as AppleArchiveError {
      failure = error
      throw error
    } catch {
      failure = AppleArchiveError(.writerMisuse("the output failed: \(error)"))
      throw error
    }
  }

  private func header(
    kind: AppleArchiveEntry.Kind, path: [UInt8], link: [UInt8]?, mode: UInt16, time: AppleArchiveTime?,
    data: (size: UInt64, sha256: [UInt8]?)?
  ) throws -> [UInt8] {
    let number = entryCount + 1
    if let file = openFile {
      throw AppleArchiveError(
        .writerMisuse("an entry was added while the file '\(AppleArchiveError.printable(file.path))' is open"),
        entry: number, path: path)
    }
    if path.isEmpty {
      if kind != .directory { throw AppleArchiveError(.invalidPath(.empty), entry: number, path: path) }
    } else if let problem = EntryHeader.pathProblem(path, limit: AppleArchiveLimits().maxPathBytes) {
      throw AppleArchiveError(.invalidPath(problem), entry: number, path: path)
    }
    if let link {
      let limit = AppleArchiveLimits().maxPathBytes
      if link.isEmpty || link.contains(0) || link.count > limit {
        let why =
          link.isEmpty
          ? "it is empty"
          : link.contains(0) ? "it holds a NUL byte" : "it is \(link.count) bytes long; the limit is \(limit)"
        throw AppleArchiveError(.invalidLinkTarget(reason: why), entry: number, path: path)
      }
    }
    guard mode <= 0o7777 else {
      throw AppleArchiveError(
        .writerMisuse("mode 0o\(String(mode, radix: 8)) is over 0o7777"), entry: number, path: path)
    }
    if let time, time.nanoseconds >= 1_000_000_000 {
      throw AppleArchiveError(.invalidTime(key: "MTM", nanoseconds: time.nanoseconds), entry: number, path: path)
    }
    var h = Array("AA01".utf8) + [0, 0]
    func key(_ text: String) { h += Array(text.utf8) }
    func little(_ value: UInt64, _ count: Int) {
      for i in 0..<count { h.append(UInt8(truncatingIfNeeded: value >> (8 * UInt64(i)))) }
    }
    key("TYP1")
    h.append(kind.rawValue)
    key("PATP")
    little(UInt64(path.count), 2)
    h += path
    if let link {
      key("LNKP")
      little(UInt64(link.count), 2)
      h += link
    }
    key("MOD2")
    little(UInt64(mode), 2)
    if let time {
      key("MTMT")
      little(UInt64(bitPattern: time.seconds), 8)
      little(UInt64(time.nanoseconds), 4)
    }
    if let data {
      if let digest = data.sha256 {
        key("SH2H")
        h += digest
      }
      switch data.size {
      case ...0xFFFF:
        key("DATA")
        little(data.size, 2)
      case ...0xFFFF_FFFF:
        key("DATB")
        little(data.size, 4)
      default:
        key("DATC")
        little(data.size, 8)
      }
    }
    h[4] = UInt8(h.count & 0xFF)
    h[5] = UInt8(h.count >> 8)
    entryCount = number
    return h
  }

  private func append(_ bytes: [UInt8]) throws {
    try bytes.withUnsafeBytes { try append($0) }
  }

  /// Adds payload bytes: raw ones through a 64 KiB buffer, compressed ones a block at a time.
  private func append(_ bytes: UnsafeRawBufferPointer) throws {
    let capacity = compression == .none ? 64 << 10 : blockSize
    var rest = bytes[...]
    while !rest.isEmpty {
      let n = min(rest.count, capacity - pending.count)
      pending += rest.prefix(n)
      rest = rest.dropFirst(n)
      if pending.count == capacity { try flush() }
    }
  }

  private func flush() throws {
    guard !pending.isEmpty else { return }
    defer { pending.removeAll(keepingCapacity: true) }
    guard compression != .none else {
      try pending.withUnsafeBytes { try sink($0) }
      return
    }
    if pool == nil && threads > 1 && !poolFailed {
      pool = BlockEncoderPool(compression: compression, threads: threads)
      poolFailed = pool == nil
    }
    if let pool {
      var spare: [UInt8]?
      for block in pool.submit(pending) {
        try emit(raw: block.raw, encoded: block.encoded)
        spare = block.raw
      }
      // The pool keeps the bytes it was given: the next block fills a block written by now
      // (its buffer, no longer shared, is reused), or a new buffer.
      pending = spare ?? []
      pending.reserveCapacity(blockSize)
    } else {
      try emit(raw: pending, encoded: BlockCodec.encode(pending, compression: compression))
    }
  }

  /// Writes every block the pool still holds, in order.
  private func drainPool() throws {
    guard let pool else { return }
    for block in pool.drain() { try emit(raw: block.raw, encoded: block.encoded) }
    pool.stop()
    self.pool = nil
  }

  /// Writes one block: its sizes, then the encoded bytes, or the raw ones when encoding did not
  /// make it smaller (a stored block).
  private func emit(raw: [UInt8], encoded: [UInt8]) throws {
    let stored = encoded.count >= raw.count
    var header: [UInt8] = []
    for value in [UInt64(raw.count), UInt64(stored ? raw.count : encoded.count)] {
      for shift in stride(from: 56, through: 0, by: -8) {
        header.append(UInt8(truncatingIfNeeded: value >> UInt64(shift)))
      }
    }
    try header.withUnsafeBytes { try sink($0) }
    try (stored ? raw : encoded).withUnsafeBytes { try sink($0) }
  }
}
