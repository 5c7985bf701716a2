import SystemIO

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

// Where each file's data went, kept on disk until the TOC is written. In memory this was the
// writer's largest table: 72 bytes a file (offset, length, size, encoding, two SHA-1 digests),
// 3.6 MB for 50,000 files, held through the whole build. The TOC reads the records back in the
// order the files were added, which is the order it writes them in.
extension XARWriter {
  /// Fixed-size records of file data, appended to a temporary file beside the archive and read
  /// back by number through a window of 64 KiB.
  final class DataSpill {
    /// The archive the records are for: their file is made beside it.
    let archivePath: String
    private var pendingFile: PendingFile?
    private var file: FileDescriptor? { pendingFile?.descriptor }
    let digestSize: Int
    /// offset, length, size (8 bytes each, little-endian), flags, digests.
    var recordSize: Int { 25 + 2 * digestSize }
    private(set) var count = 0
    /// Records not yet written.
    private var pending: [UInt8] = []
    private var written = 0
    /// Records `windowStart ..< windowStart + window.count / recordSize`, read back.
    private var window: [UInt8] = []
    private var windowStart = 0
    private static let bufferSize = 64 << 10

    private enum Flag {
      static let gzip: UInt8 = 1
      static let digests: UInt8 = 2
    }

    init(beside archivePath: String, digestSize: Int) {
      self.archivePath = archivePath
      self.digestSize = digestSize
    }

    /// Adds a record; returns its number.
    func append(
      offset: UInt64, length: UInt64, size: UInt64, gzip: Bool, digests: (archived: [UInt8], extracted: [UInt8])?
    ) throws -> Int32 {
      for value in [offset, length, size] {
        withUnsafeBytes(of: value.littleEndian) { pending.append(contentsOf: $0) }
      }
      var flags: UInt8 = gzip ? Flag.gzip : 0
      if let digests, digests.archived.count == digestSize, digests.extracted.count == digestSize {
        flags |= Flag.digests
        pending.append(flags)
        pending += digests.archived
        pending += digests.extracted
      } else {
        pending.append(flags)
        pending += repeatElement(0, count: 2 * digestSize)
      }
      count += 1
      if pending.count >= DataSpill.bufferSize { try flush() }
      return Int32(count - 1)
    }

    private func flush() throws {
      guard !pending.isEmpty else { return }
      // Never committed: only a temporary, removed by ``remove()`` (or an interruption).
      if pendingFile == nil { pendingFile = try PendingFile(beside: archivePath, purpose: "records") }
      try file!.write(pending, at: UInt64(written) * UInt64(recordSize))
      written += pending.count / recordSize
      pending.removeAll(keepingCapacity: true)
    }

    /// Record `number`: where the data is, its encoding, and its two digests (nil when the
    /// archive has no checksums; slices of the read window, valid until the next call).
    func record(_ number: Int) throws -> (
      offset: UInt64, length: UInt64, size: UInt64, gzip: Bool,
      digests: (archived: ArraySlice<UInt8>, extracted: ArraySlice<UInt8>)?
    ) {
      let perWindow = max(1, DataSpill.bufferSize / recordSize)
      if number < windowStart || number >= windowStart + window.count / recordSize {
        try flush()
        pending = []  // appending is over once records are read
        windowStart = number
        let n = min(perWindow, count - number)
        window = try file!.read(count: n * recordSize, at: UInt64(number) * UInt64(recordSize))
        guard window.count == n * recordSize else { throw SystemError("read", path: file!.path, code: EIO) }
      }
      let at = (number - windowStart) * recordSize
      func value(_ k: Int) -> UInt64 {
        window.withUnsafeBytes { UInt64(littleEndian: $0.loadUnaligned(fromByteOffset: at + 8 * k, as: UInt64.self)) }
      }
      let flags = window[at + 24]
      let digests =
        flags & Flag.digests == 0
        ? nil
        : (window[(at + 25)..<(at + 25 + digestSize)], window[(at + 25 + digestSize)..<(at + 25 + 2 * digestSize)])
      return (value(0), value(1), value(2), flags & Flag.gzip != 0, digests)
    }

    /// Removes the file; the records are gone.
    func remove() {
      pendingFile?.discard()
      pendingFile = nil
      pending = []
      window = []
    }
  }
}
