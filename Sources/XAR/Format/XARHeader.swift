/// The fixed header at the start of every XAR file (big-endian).
///
/// ```
/// 0  magic "xar!"          4  header size (UInt16)   6  version (UInt16) = 1
/// 8  TOC length, compressed (UInt64)                 16 TOC length, uncompressed (UInt64)
/// 24 checksum algorithm (UInt32): 0 none, 1 SHA-1, 2 MD5, 3 named (name follows, NUL-padded)
/// ```
///
/// Two lines of xar disagree on codes 3 and 4. Apple's xar (apple-oss `xar.h`) writes 3 for
/// SHA-256 and 4 for SHA-512 with the plain 28-byte header; the other line writes 3 for "other",
/// with the algorithm's name after the header (so the header is at least 32 bytes). Both are read:
/// code 3 with a 28-byte header is SHA-256, code 3 with a longer header is named.
package struct XARHeader: Equatable, Sendable {
  /// `xar!` as a big-endian integer.
  package static let magic: UInt32 = 0x7861_7221
  /// The size of the header without a checksum name.
  package static let baseSize = 28

  /// Bytes from the start of the file to the compressed TOC.
  package var headerSize: UInt16
  /// Format version; always 1.
  package var version: UInt16
  /// Length of the zlib-compressed TOC that follows the header.
  package var tocCompressedLength: UInt64
  /// Length of the TOC XML once inflated.
  package var tocUncompressedLength: UInt64
  /// How the TOC is checksummed.
  package var checksumAlgorithm: XARChecksumAlgorithm

  /// The offset in the file where the heap starts.
  package var heapStart: UInt64 { UInt64(headerSize) + tocCompressedLength }

  package init(
    tocCompressedLength: UInt64, tocUncompressedLength: UInt64,
    checksumAlgorithm: XARChecksumAlgorithm
  ) {
    self.version = 1
    self.tocCompressedLength = tocCompressedLength
    self.tocUncompressedLength = tocUncompressedLength
    self.checksumAlgorithm = checksumAlgorithm
    self.headerSize = UInt16(XARHeader.baseSize + XARHeader.nameField(for: checksumAlgorithm).count)
  }

  /// The header's bytes.
  package func encoded() -> [UInt8] {
    var bytes: [UInt8] = []
    bytes.reserveCapacity(Int(headerSize))
    bytes.appendBigEndian(XARHeader.magic)
    bytes.appendBigEndian(headerSize)
    bytes.appendBigEndian(version)
    bytes.appendBigEndian(tocCompressedLength)
    bytes.appendBigEndian(tocUncompressedLength)
    bytes.appendBigEndian(checksumAlgorithm.headerCode)
    bytes += XARHeader.nameField(for: checksumAlgorithm)
    return bytes
  }

  /// Parses and checks a header. `bytes` must hold at least the header; pass what the file has.
  package static func decode(_ bytes: [UInt8]) throws -> XARHeader {
    guard bytes.count >= baseSize else { throw XARError.truncatedHeader(available: bytes.count) }
    guard bytes.readBigEndian(UInt32.self, at: 0) == magic else { throw XARError.notXAR }
    let headerSize = bytes.readBigEndian(UInt16.self, at: 4)
    let version = bytes.readBigEndian(UInt16.self, at: 6)
    guard version == 1 else { throw XARError.unsupportedVersion(version) }
    guard headerSize >= baseSize, headerSize <= 4096 else {
      throw XARError.badHeaderSize(headerSize)
    }
    guard bytes.count >= Int(headerSize) else {
      throw XARError.truncatedHeader(available: bytes.count)
    }
    let code = bytes.readBigEndian(UInt32.self, at: 24)
    let algorithm: XARChecksumAlgorithm
    switch code {
    case 0: algorithm = XARChecksumAlgorithm.none
    case 1: algorithm = .sha1
    case 2: algorithm = .md5
    case 3 where headerSize == baseSize:
      algorithm = .sha256
    case 4 where headerSize == baseSize:
      algorithm = .sha512
    case 3:
      let nameBytes = bytes[baseSize..<Int(headerSize)].prefix { $0 != 0 }
      let name = String(decoding: nameBytes, as: UTF8.self)
      guard let named = XARChecksumAlgorithm(styleName: name) else {
        throw XARError.unsupportedChecksum(name.isEmpty ? "(no name)" : name)
      }
      algorithm = named
    default:
      throw XARError.unsupportedChecksum("code \(code)")
    }
    var header = XARHeader(
      tocCompressedLength: bytes.readBigEndian(UInt64.self, at: 8),
      tocUncompressedLength: bytes.readBigEndian(UInt64.self, at: 16),
      checksumAlgorithm: algorithm)
    header.headerSize = headerSize
    return header
  }

  private static func nameField(for algorithm: XARChecksumAlgorithm) -> [UInt8] {
    guard algorithm.headerCode == 3 else { return [] }
    // The name, NUL-terminated and padded to a multiple of 4 bytes.
    var field = Array(algorithm.styleName.utf8) + [0]
    while field.count % 4 != 0 { field.append(0) }
    return field
  }
}

extension Array where Element == UInt8 {
  mutating func appendBigEndian<T: FixedWidthInteger>(_ value: T) {
    var big = value.bigEndian
    Swift.withUnsafeBytes(of: &big) { append(contentsOf: $0) }
  }

  func readBigEndian<T: FixedWidthInteger>(_: T.Type, at offset: Int) -> T {
    var value: T = 0
    for index in 0..<MemoryLayout<T>.size {
      value = (value << 8) | T(self[offset + index])
    }
    return value
  }
}
