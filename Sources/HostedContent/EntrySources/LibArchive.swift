import ArchiveIO

// Entries from archives that libarchive reads (ArchiveIO): cpio payloads, zips and tars.

/// Reads an archive through libarchive, entry by entry, data streamed.
final class LibArchiveReader {
  private let reader: ArchiveReader

  /// Opens a zip (or tar) file by path, using the zip central directory.
  init(path: String) throws {
    reader = try ArchiveReader(path: path, support: [.zipSeekable, .tar, .allFilters])
  }

  /// Reads a compressed cpio stream (a flat package's Payload) pulled chunk by chunk.
  init(payload pull: @escaping () throws -> [UInt8]?) throws {
    reader = try ArchiveReader(support: [.cpio, .tar], pulling: pull)
  }

  func forEachEntry(_ visit: (PackageEntry, EntryData?) throws -> Void) throws {
    while let header = try reader.nextHeader() {
      guard !header.isEncrypted else {
        throw LibArchiveError("the archive holds encrypted entries")
      }
      let (rawPath, valid) = LibArchiveReader.string(header.pathname)
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
      if kind == .file {
        let data = LibArchiveEntryData(reader: self, path: path)
        try visit(entry, data)
        data.reader = nil
      } else {
        try visit(entry, nil)
      }
    }
  }

  fileprivate func readData(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
    try reader.readData(into: buffer)
  }

  static func string(_ bytes: [UInt8]) -> (String, Bool) {
    if let s = String(validating: bytes, as: UTF8.self) { return (s, true) }
    return (String(decoding: bytes, as: UTF8.self), false)
  }
}

/// The data of the entry a ``LibArchiveReader`` is on; valid only during the visit.
final class LibArchiveEntryData: EntryData {
  fileprivate var reader: LibArchiveReader?
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
