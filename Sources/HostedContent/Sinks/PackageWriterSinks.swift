import ArchiveIO
import SystemIO
import XAR
import Zlib

/// How hard to compress what is worth compressing.
public enum CompressionLevel: String, CaseIterable, Sendable {
  /// Store every file as it is.
  case none
  /// Deflate level 1.
  case fast
  /// Deflate level 5: on text, much faster than 6 for a slightly larger result.
  case `default`
  /// Deflate level 9.
  case best

  /// The deflate level (libdeflate's for a XAR's files up to ``XARSink/wholeFileLimit``, zlib's
  /// for larger ones and for a zip's); nil stores everything.
  package var zlibLevel: Int32? {
    switch self {
    case .none: return nil
    case .fast: return 1
    case .default: return 5
    case .best: return 9
    }
  }
}

/// Decides per file: already-compressed formats (by magic bytes) are stored, the rest deflated
/// unless a sample of their bytes does not shrink enough (``DeflateSample``, which the sinks take).
struct EncodingChooser {
  var level: CompressionLevel
  /// Whether to deflate a file that starts with `head`, and whether it is stored because its
  /// bytes are already compressed (not merely because nothing is compressed, or it is empty).
  func choose(head: UnsafeRawBufferPointer) -> (compress: Bool, storedAsCompressed: Bool) {
    guard level.zlibLevel != nil, head.count > 0 else { return (false, false) }
    let compressed = FileSignature.isCompressed(UnsafeRawBufferPointer(rebasing: head.prefix(64)))
    return (!compressed, compressed)
  }

  /// The body sample of a file of `size` bytes (its spots, ``DeflateSample/bodyRanges(size:)``,
  /// one after another), read through `read` (``EntrySink/preview(_:read:)``); nil when there
  /// is none to take, or a read fails (then the lead decides alone, and the file's own read
  /// reports the failure).
  static func middleSample(size: UInt64, read: (UInt64, UnsafeMutableRawBufferPointer) throws -> Int) -> [UInt8]? {
    let ranges = DeflateSample.bodyRanges(size: size)
    guard !ranges.isEmpty else { return nil }
    var sample = [UInt8](repeating: 0, count: ranges.reduce(0) { $0 + Int($1.count) })
    var filled = 0
    for range in ranges {
      var done = 0
      while done < range.count {
        let n = sample.withUnsafeMutableBytes { buffer in
          (try? read(
            range.lowerBound + UInt64(done),
            UnsafeMutableRawBufferPointer(rebasing: buffer[(filled + done)..<(filled + Int(range.count))]))) ?? 0
        }
        guard n > 0 else { return nil }
        done += n
      }
      filled += Int(range.count)
    }
    return sample
  }
}

/// Writes entries into a XAR through ``XARWriter``; the archive appears only on ``commit()``.
///
/// Files up to ``wholeFileLimit`` are gathered and handed to the writer whole, so several can be
/// compressed at once on other threads; larger ones stream through. Which path a file takes
/// depends only on its size, so the output does not depend on the number of threads.
package final class XARSink: PackageSink {
  package let writer: XARWriter
  private let attributesTime: XARTimestamp
  private let chooser: EncodingChooser
  private var pending: PackageEntry?
  /// The file being gathered whole, and its bytes so far. The bytes are a property of their own:
  /// appended through the optional tuple, the first append copied the buffer (not uniquely
  /// held) into one of twice the reserved size, 8 MiB for a 4 MiB file.
  private var whole: (entry: PackageEntry, compress: Bool)?
  private var wholeBytes: [UInt8] = []
  /// Files stored without compression because they already were compressed.
  package private(set) var storedCount = 0
  /// Files stored as they are because deflating them made them no smaller.
  package var unshrunkCount: Int { writer.filesStoredUnshrunk }
  /// Files stored as they are because their sample did not shrink enough, and their bytes.
  package var storedBySample: (files: Int, bytes: UInt64) {
    (writer.filesStoredBySample, writer.bytesStoredBySample)
  }
  /// The middle sample of the file being begun, when it streams (``preview(_:read:)``).
  private var middle: [UInt8]?
  /// Files up to this size are compressed whole (and in parallel).
  package static let wholeFileLimit: UInt64 = 4 << 20

  package init(path: String, overwrite: Bool, mtime: XARTimestamp, compression: CompressionLevel, threads: Int = 1)
    throws
  {
    var options = XARWriter.Options()
    options.overwrite = overwrite
    options.creationTime = mtime
    options.threads = max(1, threads)
    writer = try XARWriter(path: path, options: options)
    attributesTime = mtime
    chooser = EncodingChooser(level: compression)
  }

  private func attributes(_ entry: PackageEntry) -> XARWriter.Attributes {
    .init(mode: entry.mode, mtime: attributesTime)
  }

  package func begin(_ entry: PackageEntry) throws -> String? {
    // Two spellings of one name (NFC and NFD) are one path: the duplicate-path rule reports it.
    if writer.contains(entry.path) {
      return "refused to write: the path appears twice (equal up to Unicode normalization)"
    }
    switch entry.kind {
    case .directory: try writer.addDirectory(entry.path, attributes: attributes(entry))
    case .symlink: try writer.addSymlink(entry.path, target: entry.linkTarget ?? "", attributes: attributes(entry))
    case .file: pending = entry
    default: return "a \(entry.kind.rawValue) cannot be packaged"
    }
    return nil
  }

  private func compression(_ compress: Bool) -> XARWriter.Compression {
    compress ? .sampledZlib(level: chooser.level.zlibLevel!) : .none
  }

  /// A file that streams (larger than ``wholeFileLimit``) is judged on its first bytes and a
  /// sample of its middle, read here; one gathered whole is judged by the writer.
  package func preview(_ entry: PackageEntry, read: (UInt64, UnsafeMutableRawBufferPointer) throws -> Int) throws {
    guard entry.kind == .file, entry.size > XARSink.wholeFileLimit, chooser.level.zlibLevel != nil else { return }
    middle = EncodingChooser.middleSample(size: entry.size, read: read)
  }

  package func write(_ bytes: UnsafeRawBufferPointer) throws {
    if let entry = pending {
      pending = nil
      let (compress, storedAsCompressed) = chooser.choose(head: bytes)
      if storedAsCompressed { storedCount += 1 }
      if entry.size <= XARSink.wholeFileLimit {
        wholeBytes = writer.wholeFileBuffer(capacity: Int(entry.size))
        whole = (entry, compress)
      } else {
        let middle = self.middle ?? []
        self.middle = nil
        try middle.withUnsafeBytes { middle in
          try writer.beginFile(
            entry.path, attributes: attributes(entry), compression: compression(compress),
            sample: (bytes, middle, entry.size))
        }
      }
    }
    if whole != nil {
      wholeBytes.append(contentsOf: bytes)
    } else {
      try writer.writeFileData(bytes)
    }
  }

  package func end(_ entry: PackageEntry) throws {
    guard entry.kind == .file else { return }
    if let pending {
      // No bytes: an empty file.
      self.pending = nil
      try writer.addFile(pending.path, attributes: attributes(pending), compression: .none, bytes: [])
    } else if let file = whole {
      whole = nil
      let bytes = wholeBytes
      wholeBytes = []
      try writer.addFile(
        file.entry.path, attributes: attributes(file.entry), compression: compression(file.compress), bytes: bytes)
    } else {
      try writer.endFile()
    }
  }

  /// Publishes the archive, unless `check` (given the final size) throws.
  @discardableResult
  package func commit(checkingSize check: ((UInt64) throws -> Void)? = nil) throws -> WrittenPackage {
    let summary = try writer.finish(checkingSize: check)
    return WrittenPackage(size: summary.size, sha256: summary.sha256.hex)
  }

  /// Drops everything written; nothing appears.
  package func discard() { writer.cancel() }
}

/// Writes the zip delivery form (what the client downloads) through libarchive, to a temporary
/// file that ``commit()`` renames into place.
package final class ZipSink: PackageSink {
  private let writer: ZipWriter
  /// The zip beside its output, made new (never a name that was there, never through a link).
  private let output: PendingFile
  private let overwrite: Bool
  private let mtime: Int64
  private let chooser: EncodingChooser
  private var pending: PackageEntry?
  /// Files stored without compression because they already were compressed.
  package private(set) var storedCount = 0
  /// Files stored as they are because deflating them made them no smaller.
  package private(set) var unshrunkCount = 0
  /// Files stored as they are because their sample did not shrink enough, and their bytes.
  package private(set) var storedBySample: (files: Int, bytes: UInt64) = (0, 0)
  /// Files that would have been stored but are deflated, because their bytes hold a zip
  /// signature (see ``preview(_:read:)``).
  package private(set) var deflatedForSignature = 0
  /// The middle sample of a file larger than what is gathered (``preview(_:read:)``).
  private var middle: [UInt8]?
  /// Measures what libarchive's deflate (zlib, at the chosen level) makes of a file.
  private lazy var sizer = ZlibDeflater(level: chooser.level.zlibLevel ?? -1)
  /// The level of a file deflated with `--compression none` because it holds a zip signature:
  /// it would not be stored, so it costs as little as deflate can.
  static let signatureLevel: Int32 = 1

  package init(path: String, overwrite: Bool, mtime: XARTimestamp, compression: CompressionLevel) throws {
    self.overwrite = overwrite
    self.mtime = mtime.secondsSinceEpoch
    chooser = EncodingChooser(level: compression)
    // Discarded by its deinit if the writer cannot start.
    output = try PendingFile(beside: path, mode: 0o644)
    writer = try ZipWriter(
      fileDescriptor: output.descriptor.rawValue, path: path,
      deflateLevel: chooser.level.zlibLevel ?? ZipSink.signatureLevel)
  }

  package func begin(_ entry: PackageEntry) throws -> String? {
    switch entry.kind {
    case .directory, .symlink: try add(entry, compress: false)
    case .file: pending = entry
    default: return "a \(entry.kind.rawValue) cannot be packaged"
    }
    return nil
  }

  /// For a file larger than what is gathered: its body sample, and, when it may be stored,
  /// whether its bytes hold a zip signature. libarchive stores a file with its CRC and sizes in a
  /// data descriptor after the data, so a streaming reader finds the end of stored data by
  /// looking for a signature: such a file is deflated instead (``ZipDirectory``'s
  /// `checkStoredData` refuses what a streaming reader would cut short). The entry's header
  /// comes before its data, so the file is read ahead here.
  package func preview(_ entry: PackageEntry, read: (UInt64, UnsafeMutableRawBufferPointer) throws -> Int) throws {
    guard entry.kind == .file, entry.size > XARSink.wholeFileLimit else { return }
    if chooser.level.zlibLevel != nil {
      middle = EncodingChooser.middleSample(size: entry.size, read: read)
    }
    guard let lead = ZipSink.readAhead(0..<min(entry.size, UInt64(DeflateSample.leadSize)), read: read) else { return }
    let choice = lead.withUnsafeBytes { lead in
      (middle ?? []).withUnsafeBytes { decide(head: lead, middle: $0, size: entry.size) }
    }
    guard !choice.compress else { return }
    var watch = StreamingSignatureWatch()
    let chunk = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 20, alignment: 16)
    defer { chunk.deallocate() }
    var offset: UInt64 = 0
    while offset < entry.size, !watch.found {
      let count = Int(min(entry.size - offset, UInt64(chunk.count)))
      let part = UnsafeMutableRawBufferPointer(rebasing: chunk[0..<count])
      guard ZipSink.fill(part, at: offset, read: read) else { return }
      watch.take(UnsafeRawBufferPointer(part))
      offset += UInt64(count)
    }
    signatureAhead = watch.found
  }

  /// The bytes at `range` through `read`; nil when a read fails or comes short (the file's own
  /// read reports it).
  private static func readAhead(_ range: Range<UInt64>, read: (UInt64, UnsafeMutableRawBufferPointer) throws -> Int)
    -> [UInt8]?
  {
    var bytes = [UInt8](repeating: 0, count: Int(range.count))
    let filled = bytes.withUnsafeMutableBytes { fill($0, at: range.lowerBound, read: read) }
    return filled ? bytes : nil
  }

  /// Fills `buffer` with the bytes at `offset` through `read`; false when a read fails or comes
  /// short.
  private static func fill(
    _ buffer: UnsafeMutableRawBufferPointer, at offset: UInt64,
    read: (UInt64, UnsafeMutableRawBufferPointer) throws -> Int
  ) -> Bool {
    var done = 0
    while done < buffer.count {
      let n = (try? read(offset + UInt64(done), UnsafeMutableRawBufferPointer(rebasing: buffer[done...]))) ?? 0
      guard n > 0 else { return false }
      done += n
    }
    return true
  }

  /// Whether a file read ahead by ``preview(_:read:)`` holds a zip signature; nil when it was
  /// not read ahead (then a file too large to gather is deflated rather than stored).
  private var signatureAhead: Bool?
  /// Watches the bytes of a large file stored because it held no signature when read ahead.
  private var storedWatch: StreamingSignatureWatch?

  /// A file's first bytes, gathered until the file is whole or ``XARSink/wholeFileLimit`` bytes
  /// have come, so that what to do with it is decided on its bytes.
  private var gathered: [UInt8] = []

  package func write(_ bytes: UnsafeRawBufferPointer) throws {
    guard let entry = pending else {
      if storedWatch != nil {
        storedWatch!.take(bytes)
        if storedWatch!.found { throw changed }
      }
      return try writer.writeData(bytes)
    }
    gathered.append(contentsOf: bytes)
    if UInt64(gathered.count) >= min(entry.size, XARSink.wholeFileLimit) { try startPending() }
  }

  /// The path of the file being written, for ``changed``.
  private var current = ""

  /// A file stored because it held no zip signature when read ahead holds one now.
  private var changed: OperationError {
    OperationError(
      "'\(current)' changed while it was read; nothing was written", hint: "build again", code: .inputChanged)
  }

  /// How the sample decides a file whose first bytes are `head`, with `middle` its body sample
  /// (``EncodingChooser/middleSample(size:read:)``; empty for a file gathered whole).
  private func decide(head: UnsafeRawBufferPointer, middle: UnsafeRawBufferPointer, size: UInt64)
    -> (compress: Bool, storedAsCompressed: Bool, storedBySample: Bool)
  {
    let (compress, storedAsCompressed) = chooser.choose(head: head)
    guard compress, size >= DeflateSample.minimumSize else { return (compress, storedAsCompressed, false) }
    let shrinks =
      UInt64(head.count) == size
      ? DeflateSample.shrinks(head) : DeflateSample.shrinks(lead: head, middle: middle, size: size)
    return (shrinks, false, !shrinks)
  }

  /// Adds the pending file's entry, deflated or stored, and writes what was gathered of it.
  private func startPending() throws {
    guard let entry = pending else { return }
    pending = nil
    current = entry.path
    defer { gathered.removeAll(keepingCapacity: gathered.capacity <= 1 << 20) }
    let middle = self.middle ?? []
    self.middle = nil
    let ahead = signatureAhead
    signatureAhead = nil
    let whole = UInt64(gathered.count) == entry.size
    var (compress, storedAsCompressed, storedBySample) = gathered.withUnsafeBytes { gathered in
      middle.withUnsafeBytes { decide(head: gathered, middle: $0, size: entry.size) }
    }
    // A file gathered whole is deflated only if that makes it smaller: the entry's data is raw
    // deflate, the zlib stream less its 2-byte header and 4-byte check.
    var unshrunk = false
    if compress, whole, sizer.compressWhole(gathered).count - 6 >= gathered.count {
      compress = false
      unshrunk = true
    }
    // Stored data that holds a zip signature would end early for a streaming reader.
    if !compress, entry.size > 0 {
      // nil: a large file not read ahead, which may hold one (deflated, not counted as one).
      let holdsSignature = whole ? gathered.withUnsafeBytes { ZipDirectory.streamingSignature(in: $0) != nil } : ahead
      if holdsSignature != false {
        compress = true
        (storedAsCompressed, storedBySample, unshrunk) = (false, false, false)
        if holdsSignature == true { deflatedForSignature += 1 }
      }
    }
    if storedAsCompressed { storedCount += 1 }
    if unshrunk { unshrunkCount += 1 }
    if storedBySample {
      self.storedBySample.files += 1
      self.storedBySample.bytes += entry.size
    }
    storedWatch = !compress && !whole ? StreamingSignatureWatch() : nil
    try add(entry, compress: compress)
    if storedWatch != nil {
      gathered.withUnsafeBytes { storedWatch!.take($0) }
      if storedWatch!.found { throw changed }
    }
    try gathered.withUnsafeBytes { try writer.writeData($0) }
  }

  package func end(_ entry: PackageEntry) throws {
    try startPending()
    storedWatch = nil
  }

  private func add(_ entry: PackageEntry, compress: Bool) throws {
    let kind: ZipWriter.Kind
    switch entry.kind {
    case .directory: kind = .directory
    case .symlink: kind = .symlink(target: entry.linkTarget ?? "")
    default: kind = .file(size: entry.size)
    }
    try writer.addEntry(entry.path, kind: kind, mode: entry.mode, mtime: mtime, compress: compress)
  }

  /// Closes the zip and renames it into place, unless `check` (given its size) throws.
  @discardableResult
  package func commit(checkingSize check: ((UInt64) throws -> Void)? = nil) throws -> WrittenPackage {
    try writer.finish()
    return try output.commitPackage(checkingSize: check, replace: overwrite)
  }

  /// Removes the temporary zip (its ``PendingFile`` does, too, when the sink goes away).
  package func discard() { output.discard() }
}

extension PendingFile {
  /// Puts a package written whole into this temporary in place (``commit(replace:)``), unless
  /// `check`, given its size, throws; returns its size and SHA-256.
  package func commitPackage(checkingSize check: ((UInt64) throws -> Void)?, replace: Bool) throws -> WrittenPackage {
    let written = WrittenPackage(size: try descriptor.size(), sha256: try PackageDigest.sha256(of: descriptor))
    try check?(written.size)
    try commit(replace: replace)
    return written
  }
}
