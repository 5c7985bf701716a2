import CArchive

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// A zip written through libarchive, deterministically: every time, owner and mode comes from
/// the caller, entries in the caller's order. The one owner of a `struct archive *` for writing.
package final class ZipWriter {
  private let archive: OpaquePointer
  private let path: String

  /// What an entry is.
  package enum Kind {
    case file(size: UInt64)
    case directory
    case symlink(target: String)
  }

  /// Starts a zip in the open file `fileDescriptor` (made by the caller, who keeps it open until
  /// ``finish()`` and renames it into place), whose files are deflated at zlib's `deflateLevel`
  /// (1–9); `path` names it in messages.
  package init(fileDescriptor: Int32, path: String, deflateLevel: Int32) throws {
    guard let archive = archive_write_new() else { throw LibArchiveError(call: "archive_write_new", "out of memory") }
    self.archive = archive
    self.path = path
    guard archive_write_set_format_zip(archive) == ARCHIVE_OK else { throw error("archive_write_set_format_zip") }
    guard (1...9).contains(deflateLevel),
      archive_write_set_format_option(archive, "zip", "compression-level", String(deflateLevel)) == ARCHIVE_OK
    else { throw error("archive_write_set_format_option") }
    guard archive_write_set_bytes_in_last_block(archive, 1) == ARCHIVE_OK else {
      throw error("archive_write_set_bytes_in_last_block")
    }
    guard archive_write_open_fd(archive, fileDescriptor) == ARCHIVE_OK else { throw error("archive_write_open_fd") }
  }

  deinit { archive_write_free(archive) }

  private func error(_ call: String) -> LibArchiveError {
    let message = archive_error_string(archive).map { String(cString: $0) } ?? "cannot write the zip"
    return LibArchiveError(call: call, code: archive_errno(archive), message).about(path)
  }

  /// Starts an entry; a file's bytes follow through ``writeData(_:)``, deflated (at the
  /// writer's level) or stored.
  package func addEntry(_ path: String, kind: Kind, mode: UInt32, mtime: Int64, compress: Bool) throws {
    guard let e = archive_entry_new() else { throw LibArchiveError(call: "archive_entry_new", "out of memory") }
    defer { archive_entry_free(e) }
    switch kind {
    case .directory:
      archive_entry_set_pathname(e, path + "/")
      archive_entry_set_filetype(e, ArchiveFileType.directory)
    case .symlink(let target):
      archive_entry_set_pathname(e, path)
      archive_entry_set_filetype(e, ArchiveFileType.symlink)
      archive_entry_set_symlink(e, target)
    case .file(let size):
      archive_entry_set_pathname(e, path)
      archive_entry_set_filetype(e, ArchiveFileType.regular)
      archive_entry_set_size(e, la_int64_t(size))
    }
    archive_entry_set_perm(e, mode_t(mode & 0o777))
    archive_entry_set_mtime(e, time_t(mtime), 0)
    archive_entry_set_uid(e, 0)
    archive_entry_set_gid(e, 0)
    _ = compress ? archive_write_zip_set_compression_deflate(archive) : archive_write_zip_set_compression_store(archive)
    guard archive_write_header(archive, e) == ARCHIVE_OK else { throw error("archive_write_header") }
  }

  /// Appends bytes to the current file entry.
  package func writeData(_ bytes: UnsafeRawBufferPointer) throws {
    guard bytes.count > 0 else { return }
    guard archive_write_data(archive, bytes.baseAddress, bytes.count) == bytes.count else {
      throw error("archive_write_data")
    }
  }

  /// Writes the central directory and closes the file.
  package func finish() throws {
    guard archive_write_close(archive) == ARCHIVE_OK else { throw error("archive_write_close") }
  }
}
