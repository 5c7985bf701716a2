import AppleArchive
import SystemIO

/// Writes an Apple Archive (`.aar`) through ``AppleArchiveWriter``, to a temporary beside its
/// output that ``commit(checkingSize:)`` puts in place: whole, or not at all.
///
/// The layout is fixed so that the same entries give the same bytes: a root folder entry with
/// the empty path first (as Apple's writers put it), then each entry in the order it comes,
/// with `TYP`, `PAT`, `MOD` (0755 for folders, 0644 for files: what a pack needs, whatever the
/// umask of the machine that made it), `SH2` when the entry's storage gives its SHA-256
/// (`sha256:…`), and `DAT`; never a time, an owner or flags.
package final class AppleArchiveSink: PackageSink {
  private let output: PendingFile
  private let writer: AppleArchiveWriter
  private let overwrite: Bool
  /// Nothing is stored uncompressed on purpose (the codec decides per block).
  package let storedCount = 0
  package let unshrunkCount = 0
  package let storedBySample: (files: Int, bytes: UInt64) = (0, 0)

  /// A sink writing `path` (replacing it with `overwrite`) with `compression`, its blocks
  /// encoded on `threads` threads (the same bytes for any number).
  package init(path: String, overwrite: Bool, compression: AppleArchiveCompression = .lzfse, threads: Int = 1) throws {
    self.overwrite = overwrite
    output = try PendingFile(beside: path, mode: 0o644)
    let file = output.descriptor
    writer = try AppleArchiveWriter(file: file, compression: compression, threads: threads)
    try writer.addDirectory([], mode: 0o755)
  }

  package func begin(_ entry: PackageEntry) throws -> String? {
    let path = Array(entry.path.utf8)
    switch entry.kind {
    case .directory: try writer.addDirectory(path, mode: 0o755)
    case .file:
      let digest = entry.storage?.checksum.flatMap { checksum -> [UInt8]? in
        guard checksum.hasPrefix("sha256:") else { return nil }
        return Self.bytes(hex: checksum.dropFirst("sha256:".count))
      }
      try writer.beginFile(path, size: entry.size, mode: 0o644, sha256: digest)
    default:
      return "a \(entry.kind.rawValue) cannot go into an asset pack (files and folders only)"
    }
    return nil
  }

  package func write(_ bytes: UnsafeRawBufferPointer) throws { try writer.writeData(bytes) }

  package func end(_ entry: PackageEntry) throws {
    if entry.kind == .file { try writer.endFile() }
  }

  /// Finishes the archive and puts it in place, unless `check` (given its size) throws.
  @discardableResult
  package func commit(checkingSize check: ((UInt64) throws -> Void)? = nil) throws -> WrittenPackage {
    try finishWriting()
    return try output.commitPackage(checkingSize: check, replace: overwrite)
  }

  /// Removes the temporary archive.
  package func discard() { output.discard() }

  private var finished = false

  /// Writes what the archive still holds back (its last block): after this the temporary is a
  /// whole archive that can be read back (``pendingFile``) before it is committed.
  package func finishWriting() throws {
    guard !finished else { return }
    try writer.finish()
    finished = true
  }

  /// The temporary, open: to read the archive back (after ``finishWriting()``) before it is
  /// committed.
  package var pendingFile: FileDescriptor { output.descriptor }

  /// 64 hex digits as 32 bytes; nil for anything else.
  private static func bytes(hex: Substring) -> [UInt8]? {
    let digits = Array(hex.utf8)
    guard digits.count == 64 else { return nil }
    func value(_ c: UInt8) -> UInt8? {
      switch c {
      case 0x30...0x39: return c - 0x30
      case 0x61...0x66: return c - 0x61 + 10
      default: return nil
      }
    }
    var out: [UInt8] = []
    for i in stride(from: 0, to: 64, by: 2) {
      guard let high = value(digits[i]), let low = value(digits[i + 1]) else { return nil }
      out.append(high << 4 | low)
    }
    return out
  }
}
