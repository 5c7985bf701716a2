import CArchive

// The one file of this module that calls libarchive: bzip2, xz and lzma streams are decoded
// through libarchive's "raw" format with its decompression filters.

/// Decodes a bzip2, xz or lzma stream pulled from a closure, through libarchive.
final class ArchiveFilterDecoder {
  private var archive: OpaquePointer?
  private let pull: () throws -> [UInt8]?
  private let expectedFilter: Int32
  private var current = ContiguousArray<UInt8>()
  private var pullError: Error?
  private var opened = false

  /// - Parameter pull: returns the next chunk of the encoded stream, or nil at its end.
  init(encoding: XAREncoding, pull: @escaping () throws -> [UInt8]?) {
    self.pull = pull
    switch encoding {
    case .bzip2: expectedFilter = ARCHIVE_FILTER_BZIP2
    case .lzma: expectedFilter = ARCHIVE_FILTER_LZMA
    default: expectedFilter = ARCHIVE_FILTER_XZ
    }
  }

  /// Whether this decoder can read `encoding`.
  static func supports(_ encoding: XAREncoding) -> Bool {
    encoding == .bzip2 || encoding == .xz || encoding == .lzma
  }

  deinit {
    if let archive { archive_read_free(archive) }
  }

  private func open() throws {
    guard let a = archive_read_new() else { throw ZlibError(message: "libarchive: out of memory") }
    archive = a
    archive_read_support_filter_bzip2(a)
    archive_read_support_filter_xz(a)
    archive_read_support_filter_lzma(a)
    archive_read_support_format_raw(a)
    let context = Unmanaged.passUnretained(self).toOpaque()
    let status = archive_read_open(
      a, context, nil,
      { _, context, buffer in
        let decoder = Unmanaged<ArchiveFilterDecoder>.fromOpaque(context!).takeUnretainedValue()
        do {
          guard let chunk = try decoder.pull() else { return 0 }
          decoder.current = ContiguousArray(chunk)
          decoder.current.withUnsafeBytes { buffer!.pointee = $0.baseAddress }
          return decoder.current.count
        } catch {
          decoder.pullError = error
          return -1
        }
      }, nil)
    if let pullError { throw pullError }
    guard status == ARCHIVE_OK else { throw ZlibError(message: message(a)) }
    var entry: OpaquePointer?
    let headerStatus = archive_read_next_header(a, &entry)
    if let pullError { throw pullError }
    guard headerStatus == ARCHIVE_OK else { throw ZlibError(message: message(a)) }
    // The raw format passes anything through; insist the stream is what the TOC says it is.
    guard archive_filter_count(a) >= 2, archive_filter_code(a, 0) == expectedFilter else {
      throw ZlibError(message: "the data is not in the encoding the TOC names")
    }
    opened = true
  }

  /// Reads decoded bytes into `buffer`; 0 at the end of the stream.
  func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
    if !opened { try open() }
    let n = archive_read_data(archive, buffer.baseAddress, buffer.count)
    if let pullError { throw pullError }
    guard n >= 0 else { throw ZlibError(message: message(archive)) }
    return n
  }

  private func message(_ a: OpaquePointer?) -> String {
    guard let a, let text = archive_error_string(a) else { return "cannot decode the stream" }
    return String(cString: text)
  }
}
