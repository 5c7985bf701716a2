import CArchive

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

// The one file of this module that calls libarchive: reading cpio payloads, zips and tars, and
// writing the zip delivery form.

/// A libarchive failure, with libarchive's message.
package struct LibArchiveError: Error, CustomStringConvertible {
  package var description: String
}

/// Reads an archive through libarchive, entry by entry, data streamed.
final class LibArchiveReader {
  private var archive: OpaquePointer?
  private let pull: (() throws -> [UInt8]?)?
  private var current = ContiguousArray<UInt8>()
  private var pullError: Error?

  /// Opens a zip (or tar) file by path, using the zip central directory.
  init(path: String) throws {
    pull = nil
    guard let a = archive_read_new() else { throw LibArchiveError(description: "out of memory") }
    archive = a
    archive_read_support_format_zip_seekable(a)
    archive_read_support_format_tar(a)
    archive_read_support_filter_all(a)
    guard archive_read_open_filename(a, path, 64 * 1024) == ARCHIVE_OK else { throw error() }
  }

  /// Reads a compressed cpio stream (a flat package's Payload) pulled chunk by chunk.
  init(payload pull: @escaping () throws -> [UInt8]?) throws {
    self.pull = pull
    guard let a = archive_read_new() else { throw LibArchiveError(description: "out of memory") }
    archive = a
    archive_read_support_format_cpio(a)
    archive_read_support_format_tar(a)
    archive_read_support_filter_gzip(a)
    archive_read_support_filter_bzip2(a)
    archive_read_support_filter_xz(a)
    archive_read_support_filter_lzma(a)
    let context = Unmanaged.passUnretained(self).toOpaque()
    let status = archive_read_open(
      a, context, nil,
      { _, context, buffer in
        let reader = Unmanaged<LibArchiveReader>.fromOpaque(context!).takeUnretainedValue()
        do {
          guard let chunk = try reader.pull?() else { return 0 }
          reader.current = ContiguousArray(chunk)
          reader.current.withUnsafeBytes { buffer!.pointee = $0.baseAddress }
          return reader.current.count
        } catch {
          reader.pullError = error
          return -1
        }
      }, nil)
    if let pullError { throw pullError }
    guard status == ARCHIVE_OK else { throw error() }
  }

  deinit {
    if let archive { archive_read_free(archive) }
  }

  private func error() -> Error {
    if let pullError { return pullError }
    let message = archive.flatMap { archive_error_string($0) }.map { String(cString: $0) } ?? "unreadable archive"
    return LibArchiveError(description: message)
  }

  /// The name of the format libarchive found (after the first entry).
  var formatName: String {
    guard let archive, let name = archive_format_name(archive) else { return "unknown" }
    return String(cString: name)
  }

  func forEachEntry(_ visit: (PackageEntry, EntryData?) throws -> Void) throws {
    guard let archive else { return }
    while true {
      var entryPointer: OpaquePointer?
      let status = archive_read_next_header(archive, &entryPointer)
      if status == ARCHIVE_EOF { return }
      guard status == ARCHIVE_OK || status == ARCHIVE_WARN, let e = entryPointer else { throw error() }
      guard archive_entry_is_encrypted(e) == 0 else {
        throw LibArchiveError(description: "the archive holds encrypted entries")
      }
      let (rawPath, valid) = LibArchiveReader.string(archive_entry_pathname(e))
      let path = PackageEntry.normalizedSourcePath(rawPath)
      if path == "." || path.isEmpty && rawPath.hasPrefix(".") { continue }
      let kind: EntryKind
      var linkTarget: String? = nil
      if let hard = archive_entry_hardlink(e) {
        kind = .hardLink
        linkTarget = PackageEntry.normalizedSourcePath(String(cString: hard))
      } else {
        switch archive_entry_filetype(e) {
        case FileType.reg: kind = .file
        case FileType.dir: kind = .directory
        case FileType.lnk:
          kind = .symlink
          linkTarget = archive_entry_symlink(e).map { String(cString: $0) } ?? ""
        case FileType.ifo: kind = .fifo
        case FileType.chr: kind = .characterDevice
        case FileType.blk: kind = .blockDevice
        case FileType.sock: kind = .socket
        default: kind = .other
        }
      }
      // A hard link may carry data of its own (pax, and newc cpio where the last link of a set
      // holds the bytes): extractors write it over the linked file, so its size is kept for
      // the rules to refuse.
      let size = (kind == .file || kind == .hardLink) && archive_entry_size_is_set(e) != 0 ? UInt64(max(0, archive_entry_size(e))) : 0
      let entry = PackageEntry(
        path: path, kind: kind, mode: UInt32(archive_entry_perm(e)) & 0o7777, size: size,
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
    let n = archive_read_data(archive, buffer.baseAddress, buffer.count)
    guard n >= 0 else { throw error() }
    return n
  }

  static func string(_ pointer: UnsafePointer<CChar>?) -> (String, Bool) {
    guard let pointer else { return ("", false) }
    let bytes = UnsafeBufferPointer(start: UnsafeRawPointer(pointer).assumingMemoryBound(to: UInt8.self), count: strlen(pointer))
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
      throw LibArchiveError(description: "'\(path)': \(error.description)")
    }
  }
}

/// Writes a zip through libarchive, deterministically: every time and owner comes from the
/// caller, entries in the caller's order.
final class LibArchiveZipWriter {
  private var archive: OpaquePointer?
  private let path: String

  /// Starts a zip at `path` (which must not exist; the caller renames it into place).
  init(path: String) throws {
    self.path = path
    guard let a = archive_write_new() else { throw LibArchiveError(description: "out of memory") }
    archive = a
    guard archive_write_set_format_zip(a) == ARCHIVE_OK,
      archive_write_set_bytes_in_last_block(a, 1) == ARCHIVE_OK,
      archive_write_open_filename(a, path) == ARCHIVE_OK
    else { throw error() }
  }

  deinit {
    if let archive { archive_write_free(archive) }
  }

  private func error() -> Error {
    let message = archive.flatMap { archive_error_string($0) }.map { String(cString: $0) } ?? "cannot write the zip"
    return LibArchiveError(description: "'\(path)': \(message)")
  }

  /// Adds an entry; for files, `data` streams the bytes (exactly `entry.size` of them).
  func add(_ entry: PackageEntry, mtime: Int64, compress: Bool, data: EntryData?) throws {
    guard let archive, let e = archive_entry_new() else { throw LibArchiveError(description: "out of memory") }
    defer { archive_entry_free(e) }
    archive_entry_set_pathname(e, entry.kind == .directory ? entry.path + "/" : entry.path)
    switch entry.kind {
    case .directory:
      archive_entry_set_filetype(e, FileType.dir)
    case .symlink:
      archive_entry_set_filetype(e, FileType.lnk)
      archive_entry_set_symlink(e, entry.linkTarget ?? "")
    default:
      archive_entry_set_filetype(e, FileType.reg)
      archive_entry_set_size(e, la_int64_t(entry.size))
    }
    archive_entry_set_perm(e, mode_t(entry.mode & 0o777))
    archive_entry_set_mtime(e, time_t(mtime), 0)
    archive_entry_set_uid(e, 0)
    archive_entry_set_gid(e, 0)
    _ = compress ? archive_write_zip_set_compression_deflate(archive) : archive_write_zip_set_compression_store(archive)
    guard archive_write_header(archive, e) == ARCHIVE_OK else { throw error() }
    if let data {
      var buffer = [UInt8](repeating: 0, count: 256 * 1024)
      while true {
        let n = try buffer.withUnsafeMutableBytes { try data.read(into: $0) }
        if n == 0 { break }
        let written = buffer.withUnsafeBytes { archive_write_data(archive, $0.baseAddress, n) }
        guard written == n else { throw error() }
      }
    }
  }

  /// Appends bytes to the current file entry.
  func writeData(_ bytes: UnsafeRawBufferPointer) throws {
    guard let archive, bytes.count > 0 else { return }
    guard archive_write_data(archive, bytes.baseAddress, bytes.count) == bytes.count else { throw error() }
  }

  /// Writes the central directory and closes the file.
  func finish() throws {
    guard let archive else { return }
    guard archive_write_close(archive) == ARCHIVE_OK else { throw error() }
  }
}

/// libarchive's `AE_IF*` file types (macros Swift cannot import).
private enum FileType {
  static let reg: UInt32 = 0o100000
  static let dir: UInt32 = 0o040000
  static let lnk: UInt32 = 0o120000
  static let ifo: UInt32 = 0o010000
  static let chr: UInt32 = 0o020000
  static let blk: UInt32 = 0o060000
  static let sock: UInt32 = 0o140000
}
