import XAR

/// The content of an Apple flat package: the cpio archive in its `NAME.pkg/Payload`, read through
/// libarchive as a stream straight out of the XAR entry (no temporary copy).
public final class FlatPackageSource: EntrySource {
  public let format = PackageFormat.flatPackage
  public let location: String
  public let reader: XARReader
  /// The `Payload` entry.
  public let payload: XAREntry
  public var otherForms: [PackageFormat] = []

  /// The payload of a flat package, or nil when `reader` is not one.
  public static func payload(in reader: XARReader) -> XAREntry? {
    let roots = Set(reader.entries.filter { !$0.path.contains("/") }.map(\.path))
    guard !roots.contains(ContentInfo.fileName) else { return nil }
    let payloads = reader.entries.filter { entry in
      let parts = entry.path.split(separator: "/")
      return entry.kind == .file && parts.count == 2 && parts[1] == "Payload" && parts[0].hasSuffix(".pkg")
    }
    return payloads.count == 1 ? payloads[0] : nil
  }

  public init(reader: XARReader, payload: XAREntry) {
    self.reader = reader
    self.payload = payload
    location = reader.path
  }

  public var packageSize: UInt64? { reader.fileSize }

  public func forEachEntry(_ visit: (PackageEntry, EntryData?) throws -> Void) throws {
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
    let cpio = try LibArchiveReader(payload: {
      guard !ended else { return nil }
      let n = try buffer.withUnsafeMutableBytes { try stream.read(into: $0) }
      if n == 0 {
        ended = true
        return nil
      }
      return Array(buffer[..<n])
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
public final class ZipPackageSource: EntrySource {
  public let format: PackageFormat
  public let location: String
  public let packageSize: UInt64?
  public let otherForms: [PackageFormat]

  public init(path: String, size: UInt64, format: PackageFormat = .zip, otherForms: [PackageFormat] = []) {
    location = path
    packageSize = size
    self.format = format
    self.otherForms = otherForms
  }

  /// Most entries a zip may declare.
  public var maxEntries = XARReader.Limits().maxEntries

  public func forEachEntry(_ visit: (PackageEntry, EntryData?) throws -> Void) throws {
    if format == .zip {
      // libarchive reads the local headers, unzip the central directory: they must agree.
      let file = try FileDescriptor.open(regularFile: location)
      _ = try ZipDirectory(file: file, fileSize: try file.size(), maxEntries: maxEntries)
    }
    try LibArchiveReader(path: location).forEachEntry(visit)
  }
}
