import ArchiveIO
import SystemIO
import XAR

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

  /// True for `NAME.pkg/Payload`, where a flat package keeps its content.
  package static func isPayloadPath(_ path: String) -> Bool {
    guard path.hasSuffix("/Payload") else { return false }
    let parts = path.split(separator: "/")
    return parts.count == 2 && parts[0].hasSuffix(".pkg")
  }

  package init(reader: XARReader, payload: XAREntry) {
    self.reader = reader
    self.payload = payload
    location = reader.path
  }

  package var packageSize: UInt64? { reader.fileSize }

  package func forEachEntry(_ visit: (PackageEntry, EntryData?) throws -> Void) throws {
    // The outer archive's other members: checked, their data read to the end (so a size or
    // checksum lie is caught), never written.
    for x in reader.entries where x.path != payload.path {
      var entry = XARPackageSource.entry(from: x)
      entry.isWrapperMember = true
      try visit(entry, entry.kind == .file ? reader.dataReader(for: x) : nil)
    }
    let stream = reader.dataReader(for: payload)
    var buffer = [UInt8](repeating: 0, count: 256 * 1024)
    var ended = false
    // A gzip'd payload is inflated here rather than by libarchive, so the cpio headers can be
    // checked before libarchive reads them (it allocates whatever length a header declares).
    var inflater: ZlibInflater?
    var pending: [UInt8] = []
    var used = 0
    var output = [UInt8](repeating: 0, count: 256 * 1024)
    var headerGuard = CpioHeaderGuard()
    var first = true
    func readCompressed() throws -> Int {
      let n = try buffer.withUnsafeMutableBytes { try stream.read(into: $0) }
      if n == 0 { ended = true }
      return n
    }
    let cpio = try LibArchiveReader(payload: {
      while true {
        if let z = inflater {
          if z.finished { return nil }
          if used == pending.count {
            let n = ended ? 0 : try readCompressed()
            guard n > 0 else { throw LibArchiveError("the Payload's gzip stream is truncated") }
            pending = Array(buffer[..<n])
            used = 0
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
          if step.made > 0 {
            let chunk = Array(output[..<step.made])
            try headerGuard.observe(chunk)
            return chunk
          }
          if step.used == 0 && used < pending.count { throw LibArchiveError("the Payload's gzip stream is damaged") }
          continue
        }
        guard !ended else { return nil }
        let n = try readCompressed()
        if n == 0 { return nil }
        let chunk = Array(buffer[..<n])
        if first {
          first = false
          if chunk.starts(with: [0x1F, 0x8B]) {
            inflater = ZlibInflater()
            pending = chunk
            used = 0
            continue
          }
        }
        try headerGuard.observe(chunk)
        return chunk
      }
    })
    try cpio.forEachEntry(visit)
    // Drain what libarchive did not need, so the payload's checksums are verified too.
    while !ended {
      let n = try buffer.withUnsafeMutableBytes { try stream.read(into: $0) }
      if n == 0 { ended = true }
    }
  }
}

/// The entries of a zip (the client's delivery form) or a tar, through libarchive.
package final class ZipPackageSource: EntrySource {
  package let format: PackageFormat
  package let location: String
  package let packageSize: UInt64?
  package let otherForms: [PackageFormat]

  /// The package file, open once: the central directory and libarchive both read through it.
  private let file: FileDescriptor

  package init(file: FileDescriptor, size: UInt64, format: PackageFormat = .zip, otherForms: [PackageFormat] = []) {
    self.file = file
    location = file.path
    packageSize = size
    self.format = format
    self.otherForms = otherForms
  }

  /// Most entries a zip may declare.
  package var maxEntries = ReaderLimits().maxEntries

  package func forEachEntry(_ visit: (PackageEntry, EntryData?) throws -> Void) throws {
    guard format == .zip else {
      try LibArchiveReader(file: file).forEachEntry(visit)
      return
    }
    // libarchive reads the local headers, unzip the central directory: they must agree. The
    // names are the ones decoded there (libarchive gives none for a UTF-8 name in the C locale),
    // and libarchive reads the zip as checked there, through the same open file.
    let zip = try ZipDirectory(file: file, fileSize: try file.size(), maxEntries: maxEntries)
    try LibArchiveReader(file: file, zip: zip).forEachEntry(names: zip.namesInFileOrder, visit)
  }
}

/// Watches a cpio stream (newc or odc) on its way to libarchive and refuses a header whose name
/// or symlink target is longer than any real one, before libarchive allocates that length.
/// Streams in other formats pass unwatched.
struct CpioHeaderGuard {
  /// The longest name or symlink target accepted, in bytes.
  static let maxLength: UInt64 = 64 * 1024
  private var header: [UInt8] = []
  private var skip: UInt64 = 0
  private var active = true

  mutating func observe(_ chunk: [UInt8]) throws {
    var i = 0
    while active && i < chunk.count {
      if skip > 0 {
        let n = Int(min(skip, UInt64(chunk.count - i)))
        skip -= UInt64(n)
        i += n
        continue
      }
      header.append(chunk[i])
      i += 1
      if header.count == 6 {
        let magic = String(decoding: header, as: UTF8.self)
        if magic != "070701" && magic != "070702" && magic != "070707" { active = false }
      }
      let newc = header.starts(with: Array("07070".utf8)) && header.count >= 6 && header[5] != UInt8(ascii: "7")
      let size = newc ? 110 : 76
      guard header.count == size else { continue }
      func field(_ offset: Int, _ length: Int, radix: Int) throws -> UInt64 {
        guard let v = UInt64(String(decoding: header[offset..<(offset + length)], as: UTF8.self), radix: radix) else {
          throw LibArchiveError("the Payload holds a damaged cpio header")
        }
        return v
      }
      let mode = try newc ? field(14, 8, radix: 16) : field(18, 6, radix: 8)
      let nameSize = try newc ? field(94, 8, radix: 16) : field(59, 6, radix: 8)
      let fileSize = try newc ? field(54, 8, radix: 16) : field(65, 11, radix: 8)
      guard nameSize <= CpioHeaderGuard.maxLength else {
        throw LibArchiveError("the Payload's cpio header declares a name of \(nameSize) bytes")
      }
      if mode & 0o170000 == 0o120000 && fileSize > CpioHeaderGuard.maxLength {
        throw LibArchiveError("the Payload's cpio header declares a symlink target of \(fileSize) bytes")
      }
      skip = newc ? pad4(110 + nameSize) - 110 + pad4(fileSize) : nameSize + fileSize
      header = []
    }
  }

  private func pad4(_ n: UInt64) -> UInt64 { (n + 3) & ~3 }
}
