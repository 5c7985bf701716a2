import ArchiveIO

// bzip2, xz and lzma streams are decoded through libarchive's "raw" format with its
// decompression filters (ArchiveIO).

/// Decodes a bzip2, xz or lzma stream pulled from a closure, through libarchive.
final class ArchiveFilterDecoder {
  private var reader: ArchiveReader?
  private let pull: () throws -> [UInt8]?
  private let expectedFilter: ArchiveFilter

  /// - Parameter pull: returns the next chunk of the encoded stream, or nil at its end.
  init(encoding: XAREncoding, pull: @escaping () throws -> [UInt8]?) {
    self.pull = pull
    switch encoding {
    case .bzip2: expectedFilter = .bzip2
    case .lzma: expectedFilter = .lzma
    default: expectedFilter = .xz
    }
  }

  /// Whether this decoder can read `encoding`.
  static func supports(_ encoding: XAREncoding) -> Bool {
    encoding == .bzip2 || encoding == .xz || encoding == .lzma
  }

  private func open() throws -> ArchiveReader {
    let reader = try ArchiveReader(support: [.raw, .bzip2, .xz, .lzma], pulling: pull)
    guard try reader.nextHeader() != nil else { throw LibArchiveError("the stream is empty") }
    // The raw format passes anything through; insist the stream is what the TOC says it is.
    guard reader.filterCount >= 2, reader.filter(0) == expectedFilter else {
      throw LibArchiveError("the data is not in the encoding the TOC names")
    }
    return reader
  }

  /// Reads decoded bytes into `buffer`; 0 at the end of the stream.
  func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
    if reader == nil { reader = try open() }
    return try reader!.readData(into: buffer)
  }
}
