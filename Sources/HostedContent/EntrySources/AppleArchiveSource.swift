import AppleArchive
import SystemIO
import TextCoding

/// An Apple Archive (`.aar`), such as a Background Assets asset pack: its entries as the codec
/// reads them, one pass, in archive order (the format has no index). Each file's bytes stream
/// out of the archive as they are decoded; hashes the header declares are checked at their end.
///
/// The root entry Apple's writers put first (a folder with an empty path) is the archive itself,
/// not content: it is passed over. Any other entry with an empty path is damage.
package final class AppleArchiveSource: EntrySource {
  package let format = PackageFormat.appleArchive
  package let location: String
  package let packageSize: UInt64?
  package let otherForms: [PackageFormat]
  package var index: PackageIndex? {
    var index = PackageIndex()
    index.otherForms = otherForms
    index.checksumStyle = "per-file hashes (CKS, SH1/SH2/SH3/SH5) where the writer put them; " + compressionName
    return index
  }
  private let reader: AppleArchiveReader
  private let maxDepth: Int
  /// All paths' bytes, at most (``ReaderLimits/maxTotalPathBytes``, as a XAR's TOC).
  private let maxTotalPathBytes: UInt64
  /// Headers and blobs other than files' data (extended attributes, ACLs), at most: what a
  /// XAR keeps in its TOC, under the same bound (``ReaderLimits/maxTOCBytes``). Files' data is
  /// the inspector's budget (`--max-size`).
  private let maxMetadataBytes: UInt64
  /// The largest block a framing may declare here: Apple's tools write 4 MiB; a block is held
  /// whole while it is read.
  package static let maxBlockSize: UInt64 = 16 << 20
  private var compressionName: String {
    reader.compression == .none ? "raw entries" : "pbz* blocks of \(reader.compression.name)"
  }

  /// The archive open as `file`, read under `limits` (the entry count, the path length and the
  /// expansion ratio carry over; the content limit is the inspector's). Throws
  /// ``AppleArchiveError`` when its first bytes are not a framing the codec reads (AEA, LZ4,
  /// LZBITMAP, a cut or oversized framing).
  package init(file: FileDescriptor, size: UInt64, limits: ReaderLimits, otherForms: [PackageFormat] = []) throws {
    location = file.path
    packageSize = size
    self.otherForms = otherForms
    maxDepth = limits.maxDepth
    maxTotalPathBytes = limits.maxTotalPathBytes
    maxMetadataBytes = limits.maxTOCBytes
    reader = try AppleArchiveReader(file: file, limits: Self.codecLimits(limits))
  }

  /// The codec's limits under `limits`: the entry count, the path length and the expansion
  /// ratio (per block) carry over, the block size is ``maxBlockSize``, the rest are the codec's
  /// defaults. docs/format.md's `.aar` limits table is checked against this.
  package static func codecLimits(_ limits: ReaderLimits) -> AppleArchiveLimits {
    var codec = AppleArchiveLimits()
    codec.maxEntries = limits.maxEntries
    codec.maxPathBytes = min(limits.maxPathBytes, Int(UInt16.max))
    codec.maxRatio = max(1, limits.maxExpansionRatio)
    codec.maxBlockSize = maxBlockSize
    return codec
  }

  /// An entry's data, read from the archive as it is decoded.
  private final class Data: EntryData {
    let reader: AppleArchiveReader
    init(_ reader: AppleArchiveReader) { self.reader = reader }
    func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int { try reader.readData(into: buffer) }
  }

  /// The entries (one pass: the archive is a stream, and a second pass reads on from where
  /// the first stopped).
  package func entries() throws -> PackageReader { Entries(self) }

  private final class Entries: PackageReader {
    private let source: AppleArchiveSource
    private let data: Data
    private var first = true
    private var pathBytes: UInt64 = 0
    private var metadata: UInt64 = 0

    init(_ source: AppleArchiveSource) {
      self.source = source
      data = Data(source.reader)
    }

    func next() throws -> (entry: PackageEntry, data: EntryData?)? {
      while let x = try source.reader.next() {
        defer { first = false }
        pathBytes += UInt64(x.path.count + (x.linkTarget?.count ?? 0))
        guard pathBytes <= source.maxTotalPathBytes else {
          throw AppleArchiveSourceError.tooManyPathBytes(entry: x.number, limit: source.maxTotalPathBytes)
        }
        metadata += UInt64(x.headerSize)
        for blob in x.blobs where blob.key != "DAT" {
          let (sum, overflow) = metadata.addingReportingOverflow(blob.size)
          metadata = overflow ? .max : sum
        }
        guard metadata <= source.maxMetadataBytes else {
          throw AppleArchiveSourceError.tooMuchMetadata(entry: x.number, limit: source.maxMetadataBytes)
        }
        if x.path.isEmpty {
          guard first, x.kind == .directory, x.dataSize == nil else {
            throw AppleArchiveSourceError.emptyPath(entry: x.number, kind: x.kind.name)
          }
          continue
        }
        let depth = x.path.reduce(1) { $0 + ($1 == UInt8(ascii: "/") ? 1 : 0) }
        guard depth <= source.maxDepth else {
          throw AppleArchiveSourceError.tooDeep(entry: x.number, depth: depth, limit: source.maxDepth)
        }
        let entry = AppleArchiveSource.entry(from: x)
        return (entry, entry.kind == .file ? data : nil)
      }
      return nil
    }
  }

  /// The engine's view of one Apple Archive entry.
  static func entry(from x: AppleArchiveEntry) -> PackageEntry {
    let kind = x.kind.entryKind
    let path = text(x.path)
    let target = x.linkTarget.map(text)
    return PackageEntry(
      path: PackageEntry.normalizedSourcePath(path.text),
      kind: kind,
      // MOD carries the permission and special bits; without one, what extractors use.
      mode: x.mode.map { UInt32(truncatingIfNeeded: $0) & 0o7777 } ?? (kind == .directory ? 0o755 : 0o644),
      size: kind == .file ? (x.dataSize ?? 0) : 0,
      linkTarget: kind == .symlink ? target?.text : nil,
      // No storage: the format keeps no per-entry stored size (blocks are shared), so none is
      // made up; the compression shows in ``PackageIndex/checksumStyle``.
      pathIsValidUTF8: path.valid && (target?.valid ?? true))
  }
}

/// Why an Apple Archive's entries do not make a package.
package enum AppleArchiveSourceError: Error, CustomStringConvertible {
  /// An entry other than the first folder has an empty path.
  case emptyPath(entry: Int, kind: String)
  /// An entry's path is nested deeper than ``ReaderLimits/maxDepth``.
  case tooDeep(entry: Int, depth: Int, limit: Int)
  /// The paths (and link targets) up to an entry add up to more than the limit.
  case tooManyPathBytes(entry: Int, limit: UInt64)
  /// Headers, extended attributes and ACLs up to an entry add up to more than the limit.
  case tooMuchMetadata(entry: Int, limit: UInt64)

  package var description: String {
    switch self {
    case .emptyPath(let entry, let kind):
      return
        "Apple Archive entry \(entry) (a \(kind)) has an empty path: only the archive's first entry, a folder, may stand for its root"
    case .tooDeep(let entry, let depth, let limit):
      return "Apple Archive entry \(entry) is nested \(depth) folders deep; the limit is \(limit)"
    case .tooManyPathBytes(let entry, let limit):
      return
        "Apple Archive entry \(entry): the paths so far add up to more than \(limit) bytes (raise the limit with --max-path-bytes)"
    case .tooMuchMetadata(let entry, let limit):
      return
        "Apple Archive entry \(entry): headers, extended attributes and ACLs so far add up to more than \(limit) bytes (raise the limit with --max-toc-size)"
    }
  }
}

/// `bytes` as text, and whether they were valid UTF-8 (if not, U+FFFD stands for each bad
/// sequence, and `path-safety` refuses the name).
private func text(_ bytes: [UInt8]) -> (text: String, valid: Bool) {
  if let valid = String(validating: bytes, as: UTF8.self) { return (valid, true) }
  return (String(decoding: bytes, as: UTF8.self), false)
}

extension [UInt8] {
  fileprivate var hex: String { hexString(self) }
}
