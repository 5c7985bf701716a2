import ArchiveIO
import SystemIO

// Entries from archives that libarchive reads (ArchiveIO): cpio payloads, zips and tars.

/// Reads an archive through libarchive, entry by entry, data streamed: one pass.
final class LibArchiveReader: PackageReader {
  private let reader: ArchiveReader
  /// A zip's names as ``ZipDirectory`` decoded them, in the order of their local headers: each
  /// entry gets its name from there, and libarchive must give the same entries in that order.
  private var names: [String]?
  private var index = 0
  /// The data of the entry last given, taken back at the next call.
  private var current: LibArchiveEntryData?

  /// Opens a zip as ``ZipDirectory`` checked it (up to its end record, without its comment),
  /// through the descriptor `file`, never by path.
  init(file: FileDescriptor, zip: ZipDirectory) throws {
    if zip.hasComment {
      reader = try ArchiveReader(
        fd: file.rawValue, length: zip.endRecordOffset + 22,
        overrides: [zip.endRecordOffset + 20: 0, zip.endRecordOffset + 21: 0], support: [.zipSeekable])
    } else {
      reader = try ArchiveReader(fd: file.rawValue, support: [.zipSeekable])
    }
    names = zip.namesInFileOrder
  }

  /// Reads a tar through the descriptor `file` (from its start), never by path.
  init(file: FileDescriptor) throws {
    reader = try ArchiveReader(fd: file.rawValue, support: [.zipSeekable, .tar, .allFilters])
  }

  /// Reads a compressed cpio stream (a flat package's Payload) pulled chunk by chunk.
  init(payload pull: @escaping () throws -> [UInt8]?) throws {
    reader = try ArchiveReader(support: [.cpio, .tar], pulling: pull)
  }

  func next() throws -> (entry: PackageEntry, data: EntryData?)? {
    current?.reader = nil
    current = nil
    while let header = try reader.nextHeader() {
      guard !header.isEncrypted else {
        throw LibArchiveError("the archive holds encrypted entries")
      }
      var (rawPath, valid) = LibArchiveReader.string(header.pathname)
      if let names {
        // libarchive turns a backslash into '/'; path-safety judges the name as stored.
        let central = index < names.count ? names[index] : ""
        guard index < names.count,
          header.pathname.isEmpty || rawPath == central || rawPath == central.replacingOccurrences(of: "\\", with: "/")
        else {
          throw ZipDirectory.Inconsistency(
            description:
              "zip: libarchive reads \(rawPath.debugDescription) where the central directory lists \(index < names.count ? names[index].debugDescription : "no more entries")"
          )
        }
        (rawPath, valid) = (names[index], true)
        index += 1
      }
      let path = PackageEntry.normalizedSourcePath(rawPath)
      if path == "." || path.isEmpty && rawPath.hasPrefix(".") { continue }
      let kind: EntryKind
      var linkTarget: String? = nil
      if let hard = header.hardLinkTarget {
        kind = .hardLink
        linkTarget = PackageEntry.normalizedSourcePath(hard)
      } else {
        switch header.fileType {
        case ArchiveFileType.regular: kind = .file
        case ArchiveFileType.directory: kind = .directory
        case ArchiveFileType.symlink:
          kind = .symlink
          linkTarget = header.symlinkTarget ?? ""
        case ArchiveFileType.fifo: kind = .fifo
        case ArchiveFileType.characterDevice: kind = .characterDevice
        case ArchiveFileType.blockDevice: kind = .blockDevice
        case ArchiveFileType.socket: kind = .socket
        default: kind = .other
        }
      }
      // A hard link may carry data of its own (pax, and newc cpio where the last link of a set
      // holds the bytes): extractors write it over the linked file, so its size is kept for
      // the rules to refuse.
      let size = (kind == .file || kind == .hardLink) ? UInt64(max(0, header.size ?? 0)) : 0
      let entry = PackageEntry(
        path: path, kind: kind, mode: header.permissions & 0o7777, size: size,
        linkTarget: linkTarget, pathIsValidUTF8: valid)
      guard kind == .file else { return (entry, nil) }
      let data = LibArchiveEntryData(reader: self, path: path)
      current = data
      return (entry, data)
    }
    if let names, index != names.count {
      throw ZipDirectory.Inconsistency(
        description: "zip: libarchive reads \(index) entries where the central directory lists \(names.count)")
    }
    return nil
  }

  fileprivate func readData(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
    try reader.readData(into: buffer)
  }

  static func string(_ bytes: [UInt8]) -> (String, Bool) {
    if let s = String(validating: bytes, as: UTF8.self) { return (s, true) }
    return (String(decoding: bytes, as: UTF8.self), false)
  }
}

/// The data of the entry a ``LibArchiveReader`` is on; valid until its next entry.
final class LibArchiveEntryData: EntryData {
  fileprivate weak var reader: LibArchiveReader?
  let path: String

  fileprivate init(reader: LibArchiveReader, path: String) {
    self.reader = reader
    self.path = path
  }

  func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
    guard let reader else { return 0 }
    do {
      return try reader.readData(into: buffer)
    } catch let error as LibArchiveError {
      throw error.about(path)
    }
  }
}
