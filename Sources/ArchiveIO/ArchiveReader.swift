import CArchive

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// What an ``ArchiveReader`` accepts: container formats and compression filters.
package struct ArchiveReadSupport: OptionSet, Sendable {
  package let rawValue: Int
  package init(rawValue: Int) { self.rawValue = rawValue }

  /// A zip, read through its central directory (from a file).
  package static let zipSeekable = ArchiveReadSupport(rawValue: 1 << 0)
  package static let tar = ArchiveReadSupport(rawValue: 1 << 1)
  package static let cpio = ArchiveReadSupport(rawValue: 1 << 2)
  /// No container: the (decompressed) stream itself as one entry.
  package static let raw = ArchiveReadSupport(rawValue: 1 << 3)
  package static let gzip = ArchiveReadSupport(rawValue: 1 << 4)
  package static let bzip2 = ArchiveReadSupport(rawValue: 1 << 5)
  package static let xz = ArchiveReadSupport(rawValue: 1 << 6)
  package static let lzma = ArchiveReadSupport(rawValue: 1 << 7)
  /// Every filter libarchive has.
  package static let allFilters = ArchiveReadSupport(rawValue: 1 << 8)
}

/// One entry's header as libarchive read it.
package struct ArchiveEntryHeader {
  /// The name as stored (bytes, not necessarily UTF-8); empty when there is none.
  package var pathname: [UInt8]
  /// The target of a hard link, when the entry is one.
  package var hardLinkTarget: String?
  /// The target of a symlink.
  package var symlinkTarget: String?
  /// The `S_IFMT` bits.
  package var fileType: UInt32
  /// The permission bits.
  package var permissions: UInt32
  /// The declared size, when the header sets one.
  package var size: Int64?
  package var isEncrypted: Bool
}

/// An archive read through libarchive: the one owner of a `struct archive *` for reading, freed
/// exactly once. Entries come one at a time; data is streamed.
package final class ArchiveReader {
  private let archive: OpaquePointer
  private let pull: (() throws -> [UInt8]?)?
  private var current = ContiguousArray<UInt8>()
  private var pullError: (any Error)?

  private init(support: ArchiveReadSupport, pull: (() throws -> [UInt8]?)?) throws {
    guard let archive = archive_read_new() else { throw LibArchiveError(call: "archive_read_new", "out of memory") }
    self.archive = archive
    self.pull = pull
    if support.contains(.zipSeekable) {
      archive_read_support_format_zip_seekable(archive)
      // Every entry as its own entry on every platform (on Apple platforms libarchive would
      // otherwise fold `__MACOSX/._NAME` into NAME's metadata).
      archive_read_set_format_option(archive, "zip", "mac-ext", nil)
    }
    if support.contains(.tar) { archive_read_support_format_tar(archive) }
    if support.contains(.cpio) { archive_read_support_format_cpio(archive) }
    if support.contains(.raw) { archive_read_support_format_raw(archive) }
    if support.contains(.allFilters) { archive_read_support_filter_all(archive) }
    if support.contains(.gzip) { archive_read_support_filter_gzip(archive) }
    if support.contains(.bzip2) { archive_read_support_filter_bzip2(archive) }
    if support.contains(.xz) { archive_read_support_filter_xz(archive) }
    if support.contains(.lzma) { archive_read_support_filter_lzma(archive) }
  }

  /// Opens the first `length` bytes of the file open as `fd` as a seekable archive, with the bytes
  /// of `overrides` (offset to byte) in place of the file's: a zip's index as our own parse read
  /// it (the zip up to its end record, its comment left out, so libarchive's search for the end
  /// record, which covers only the last 16 KiB, finds it).
  /// The descriptor is read with positioned reads only, and not closed here (its owner does).
  package convenience init(
    fd descriptor: Int32, length: UInt64, overrides: [UInt64: UInt8], support: ArchiveReadSupport
  )
    throws
  {
    try self.init(support: support, pull: nil)
    view = View(descriptor: descriptor, length: length, overrides: overrides)
    let context = Unmanaged.passUnretained(self).toOpaque()
    archive_read_set_callback_data(archive, context)
    archive_read_set_read_callback(archive) { _, context, buffer in
      let reader = Unmanaged<ArchiveReader>.fromOpaque(context!).takeUnretainedValue()
      guard var view = reader.view else { return -1 }
      let count = Int(min(UInt64(64 * 1024), view.length - min(view.length, view.position)))
      reader.current = ContiguousArray(repeating: 0, count: count)
      let got = reader.current.withUnsafeMutableBytes {
        pread(view.descriptor, $0.baseAddress, count, off_t(view.position))
      }
      guard got >= 0 else { return -1 }
      for (offset, byte) in view.overrides where offset >= view.position && offset < view.position + UInt64(got) {
        reader.current[Int(offset - view.position)] = byte
      }
      view.position += UInt64(got)
      reader.view = view
      reader.current.withUnsafeBytes { buffer!.pointee = $0.baseAddress }
      return got
    }
    archive_read_set_seek_callback(archive) { _, context, offset, whence in
      let reader = Unmanaged<ArchiveReader>.fromOpaque(context!).takeUnretainedValue()
      guard var view = reader.view else { return -1 }
      let base: Int64
      switch whence {
      case SEEK_SET: base = 0
      case SEEK_CUR: base = Int64(view.position)
      case SEEK_END: base = Int64(view.length)
      default: return -1
      }
      let target = base + offset
      guard target >= 0 else { return -1 }
      view.position = UInt64(target)
      reader.view = view
      return target
    }
    guard archive_read_open1(archive) == ARCHIVE_OK else {
      throw error("archive_read_open1", fallback: "unreadable archive")
    }
  }

  private struct View {
    var descriptor: Int32
    var length: UInt64
    var overrides: [UInt64: UInt8]
    var position: UInt64 = 0
  }
  private var view: View?

  /// Opens the archive file open as `fd`, read from its start (the descriptor is not closed
  /// here; its owner closes it). libarchive moves the descriptor's offset: share it only with
  /// positioned reads.
  package convenience init(fd: Int32, support: ArchiveReadSupport) throws {
    try self.init(support: support, pull: nil)
    guard lseek(fd, 0, SEEK_SET) == 0, archive_read_open_fd(archive, fd, 64 * 1024) == ARCHIVE_OK else {
      throw error("archive_read_open_fd", fallback: "unreadable archive")
    }
  }

  /// Opens a stream pulled chunk by chunk (`pull` returns nil at its end; what it throws is
  /// what the reader's calls throw).
  package convenience init(support: ArchiveReadSupport, pulling pull: @escaping () throws -> [UInt8]?) throws {
    try self.init(support: support, pull: pull)
    let context = Unmanaged.passUnretained(self).toOpaque()
    let status = archive_read_open(
      archive, context, nil,
      { _, context, buffer in
        let reader = Unmanaged<ArchiveReader>.fromOpaque(context!).takeUnretainedValue()
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
    guard status == ARCHIVE_OK else { throw error("archive_read_open", fallback: "unreadable archive") }
  }

  deinit { archive_read_free(archive) }

  /// The failure of `call`: what the pull closure threw, else libarchive's error.
  private func error(_ call: String, fallback: String) -> any Error {
    if let pullError { return pullError }
    let message = archive_error_string(archive).map { String(cString: $0) } ?? fallback
    return LibArchiveError(call: call, code: archive_errno(archive), message)
  }

  /// The next entry's header; nil at the end. A warning from libarchive is not an error.
  package func nextHeader() throws -> ArchiveEntryHeader? {
    var entryPointer: OpaquePointer?
    let status = archive_read_next_header(archive, &entryPointer)
    if let pullError { throw pullError }
    if status == ARCHIVE_EOF { return nil }
    guard status == ARCHIVE_OK || status == ARCHIVE_WARN, let e = entryPointer else {
      throw error("archive_read_next_header", fallback: "unreadable archive")
    }
    var pathname: [UInt8] = []
    // In the C locale libarchive cannot convert a name flagged UTF-8 to the locale's charset and
    // gives no locale name; the UTF-8 form is still there.
    if let name = archive_entry_pathname(e) ?? archive_entry_pathname_utf8(e) {
      pathname = Array(
        UnsafeBufferPointer(start: UnsafeRawPointer(name).assumingMemoryBound(to: UInt8.self), count: strlen(name)))
    }
    return ArchiveEntryHeader(
      pathname: pathname,
      hardLinkTarget: archive_entry_hardlink(e).map { String(cString: $0) },
      symlinkTarget: archive_entry_symlink(e).map { String(cString: $0) },
      fileType: UInt32(archive_entry_filetype(e)),
      permissions: UInt32(archive_entry_perm(e)),
      size: archive_entry_size_is_set(e) != 0 ? archive_entry_size(e) : nil,
      isEncrypted: archive_entry_is_encrypted(e) != 0)
  }

  /// Reads the current entry's data into `buffer`; 0 at its end.
  package func readData(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
    let n = archive_read_data(archive, buffer.baseAddress, buffer.count)
    if let pullError { throw pullError }
    guard n >= 0 else { throw error("archive_read_data", fallback: "cannot read the data") }
    return n
  }

  /// How many filters the stream passed through (the last is the identity filter).
  package var filterCount: Int { Int(archive_filter_count(archive)) }

  /// Filter `index` of the stream (0 is the outermost).
  package func filter(_ index: Int) -> ArchiveFilter {
    switch archive_filter_code(archive, Int32(index)) {
    case ARCHIVE_FILTER_NONE: return .none
    case ARCHIVE_FILTER_GZIP: return .gzip
    case ARCHIVE_FILTER_BZIP2: return .bzip2
    case ARCHIVE_FILTER_XZ: return .xz
    case ARCHIVE_FILTER_LZMA: return .lzma
    default: return .other
    }
  }
}

/// A compression filter libarchive found on a stream.
package enum ArchiveFilter: Sendable {
  case none, gzip, bzip2, xz, lzma, other
}

/// libarchive's `AE_IF*` file types (macros Swift cannot import).
package enum ArchiveFileType {
  package static let regular: UInt32 = 0o100000
  package static let directory: UInt32 = 0o040000
  package static let symlink: UInt32 = 0o120000
  package static let fifo: UInt32 = 0o010000
  package static let characterDevice: UInt32 = 0o020000
  package static let blockDevice: UInt32 = 0o060000
  package static let socket: UInt32 = 0o140000
}
