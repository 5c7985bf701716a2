import ArchiveIO
import SystemIO
import XAR
import Zlib

/// The content of an Apple flat package: the cpio archive in its `NAME.pkg/Payload`, read through
/// libarchive as a stream straight out of the XAR entry (no temporary copy).
package final class FlatPackageSource: EntrySource {
  package let format = PackageFormat.flatPackage
  package let location: String
  package let reader: XARReader
  /// The `Payload` entry.
  package let payload: XAREntry
  package var otherForms: [PackageFormat] = []

  /// The payload of a flat package, or nil when `reader` is not one.
  package static func payload(in reader: XARReader) -> XAREntry? {
    // (XAR paths are names joined by "/", never with an empty part.) Cheap tests first: this
    // runs on every package, whatever its number of entries.
    guard !reader.entries.contains(where: { $0.path == ContentInfo.fileName }) else { return nil }
    var payload: XAREntry?
    for entry in reader.entries where entry.kind == .file && isPayloadPath(entry.path) {
      guard payload == nil else { return nil }
      payload = entry
    }
    return payload
  }

  /// The name of the member that holds a flat package's content.
  package static let payloadName = "Payload"

  /// True for `NAME.pkg/Payload`, where a flat package keeps its content.
  package static func isPayloadPath(_ path: String) -> Bool {
    guard path.hasSuffix("/" + payloadName) else { return false }
    let parts = path.split(separator: "/")
    return parts.count == 2 && parts[0].hasSuffix(".pkg")
  }

  package init(reader: XARReader, payload: XAREntry) {
    self.reader = reader
    self.payload = payload
    location = reader.path
  }

  package var packageSize: UInt64? { reader.fileSize }

  package var index: PackageIndex? {
    var index = PackageIndex()
    index.otherForms = otherForms
    index.checksumStyle = reader.header.checksumAlgorithm.styleName + " (outer XAR), cpio payload"
    index.tableOfContents = reader
    return index
  }

  package func entries() throws -> PackageReader { Entries(self) }

  /// The outer archive's other members first, then the payload's entries.
  private final class Entries: PackageReader {
    private let source: FlatPackageSource
    private var outer = 0
    private var payloadStream: PayloadStream?
    private var archive: LibArchiveReader?
    private var ended = false

    init(_ source: FlatPackageSource) { self.source = source }

    func next() throws -> (entry: PackageEntry, data: EntryData?)? {
      let reader = source.reader
      // The outer archive's other members: checked, their data read to the end (so a size or
      // checksum lie is caught), never written.
      while archive == nil && outer < reader.entries.count {
        let x = reader.entries[outer]
        outer += 1
        guard x.path != source.payload.path else { continue }
        var entry = XARPackageSource.entry(from: x)
        entry.isWrapperMember = true
        return (entry, entry.kind == .file ? reader.dataReader(for: x) : nil)
      }
      guard !ended else { return nil }
      if archive == nil {
        let payloadStream = PayloadStream(reader.dataReader(for: source.payload))
        self.payloadStream = payloadStream
        // The Payload is decompressed here, whatever its compression, and libarchive reads the
        // decompressed bytes with no filter of its own: so the guard sees every header
        // libarchive will parse before libarchive allocates what it declares.
        var headerGuard = PayloadHeaderGuard()
        archive = try LibArchiveReader(payload: {
          guard let chunk = try payloadStream.next() else {
            try headerGuard.finish()
            return nil
          }
          try headerGuard.observe(chunk)
          return chunk
        })
      }
      if let item = try archive?.next() { return item }
      ended = true
      // Drain what libarchive did not need, so the payload's checksums are verified too.
      try payloadStream?.drain()
      return nil
    }
  }
}

/// A flat package's Payload, decompressed: gzip through zlib, bzip2 and xz through libarchive's
/// raw format and its filters; anything else passes as it is.
private final class PayloadStream {
  private let stream: XARDataReader
  private var ended = false
  private var buffer = [UInt8](repeating: 0, count: 256 * 1024)
  private var output = [UInt8](repeating: 0, count: 256 * 1024)
  private enum Decoder {
    case undecided
    case none
    case gzip(ZlibInflater)
    case filter(ArchiveReader, name: String)
  }
  private var decoder = Decoder.undecided
  /// Compressed bytes read but not yet used.
  private var pending: [UInt8] = []
  private var used = 0

  init(_ stream: XARDataReader) { self.stream = stream }

  private func readCompressed() throws -> [UInt8] {
    guard !ended else { return [] }
    let n = try buffer.withUnsafeMutableBytes { try stream.read(into: $0) }
    if n == 0 { ended = true }
    return Array(buffer[..<n])
  }

  /// The next decompressed bytes; nil at the end.
  func next() throws -> [UInt8]? {
    while true {
      switch decoder {
      case .undecided:
        pending = try readCompressed()
        used = 0
        // Enough bytes to tell the compressions apart (a Payload's first read is larger).
        while pending.count < 6 && !ended { pending += try readCompressed() }
        if pending.starts(with: [0x1F, 0x8B]) {
          decoder = .gzip(ZlibInflater())
        } else if pending.starts(with: Array("BZh".utf8)) {
          decoder = .filter(try openFilter(.bzip2), name: "bzip2")
        } else if pending.starts(with: [0xFD, 0x37, 0x7A, 0x58, 0x5A, 0x00]) {
          decoder = .filter(try openFilter(.xz), name: "xz")
        } else {
          decoder = .none
        }
      case .none:
        if used < pending.count {
          defer { used = pending.count }
          return Array(pending[used...])
        }
        let chunk = try readCompressed()
        return chunk.isEmpty ? nil : chunk
      case .gzip(let z):
        if z.finished { return nil }
        if used == pending.count {
          pending = try readCompressed()
          used = 0
          guard !pending.isEmpty else { throw LibArchiveError("the Payload's gzip stream is truncated") }
        }
        let step: (used: Int, made: Int)
        do {
          step = try pending.withUnsafeBytes { raw in
            try output.withUnsafeMutableBytes {
              try z.inflateStep(UnsafeRawBufferPointer(rebasing: raw[used...]), into: $0)
            }
          }
        } catch let error as ZlibError {
          throw LibArchiveError("the Payload's gzip stream is damaged: \(error.message)")
        }
        used += step.used
        if step.made > 0 { return Array(output[..<step.made]) }
        if step.used == 0 && used < pending.count && !z.finished {
          throw LibArchiveError("the Payload's gzip stream is damaged")
        }
      case .filter(let archive, let name):
        let n: Int
        do {
          n = try output.withUnsafeMutableBytes { try archive.readData(into: $0) }
        } catch let error as LibArchiveError {
          throw LibArchiveError("the Payload's \(name) stream is damaged: \(error.message)")
        }
        return n == 0 ? nil : Array(output[..<n])
      }
    }
  }

  /// A libarchive reader of the raw stream through its `filter`, pulling the compressed bytes.
  private func openFilter(_ filter: ArchiveFilter) throws -> ArchiveReader {
    let archive = try ArchiveReader(
      support: [.raw, .bzip2, .xz],
      pulling: { [unowned self] in
        if self.used < self.pending.count {
          defer { self.used = self.pending.count }
          return Array(self.pending[self.used...])
        }
        let chunk = try self.readCompressed()
        return chunk.isEmpty ? nil : chunk
      })
    guard try archive.nextHeader() != nil, archive.filterCount >= 2, archive.filter(0) == filter else {
      throw LibArchiveError("the Payload's compressed stream is damaged")
    }
    return archive
  }

  /// Reads the rest of the Payload's stored bytes, so its checksum is verified.
  func drain() throws {
    while !ended { _ = try readCompressed() }
  }
}

/// The entries of a zip (the client's delivery form) or a tar, through libarchive.
package final class ZipPackageSource: EntrySource {
  package let format: PackageFormat
  package let location: String
  package let packageSize: UInt64?
  package let otherForms: [PackageFormat]

  /// The package file, open once: the central directory and libarchive both read through it.
  let file: FileDescriptor

  package init(file: FileDescriptor, size: UInt64, format: PackageFormat = .zip, otherForms: [PackageFormat] = []) {
    self.file = file
    location = file.path
    packageSize = size
    self.format = format
    self.otherForms = otherForms
  }

  /// Most entries a zip may declare.
  package var maxEntries = ReaderLimits().maxEntries

  /// The central directory's names, once it was read.
  private var indexedPaths: [String]?

  package var index: PackageIndex? {
    var index = PackageIndex()
    index.otherForms = otherForms
    index.expectedDataSize = { self.expectedDataSize }
    index.checksumStyle = format == .zip ? "crc32" : "none"
    index.indexedPaths = { self.indexedPaths }
    return index
  }

  package func entries() throws -> PackageReader {
    guard format == .zip else { return try LibArchiveReader(file: file) }
    // libarchive reads the local headers, unzip the central directory: they must agree. The
    // names are the ones decoded there (libarchive gives none for a UTF-8 name in the C locale),
    // and libarchive reads the zip as checked there, through the same open file.
    let zip = try ZipDirectory(file: file, fileSize: try file.size(), maxEntries: maxEntries)
    indexedPaths = zip.namesInFileOrder.map { PackageEntry.normalizedSourcePath($0) }
    return try LibArchiveReader(file: file, zip: zip)
  }
}
