import Crypto

/// Computes the hashes an entry's header declares, as its data goes by, and checks them at the end.
struct DataHasher {
  private var cksum: POSIXChecksum?
  private var sha1: Insecure.SHA1?
  private var sha256: SHA256?
  private var sha384: SHA384?
  private var sha512: SHA512?
  private let declared: AppleArchiveEntry.Hashes

  init(_ declared: AppleArchiveEntry.Hashes) {
    self.declared = declared
    if declared.crc32 != nil { cksum = POSIXChecksum() }
    if declared.sha1 != nil { sha1 = Insecure.SHA1() }
    if declared.sha256 != nil { sha256 = SHA256() }
    if declared.sha384 != nil { sha384 = SHA384() }
    if declared.sha512 != nil { sha512 = SHA512() }
  }

  mutating func update(_ bytes: UnsafeRawBufferPointer) {
    cksum?.update(bytes)
    sha1?.update(bufferPointer: bytes)
    sha256?.update(bufferPointer: bytes)
    sha384?.update(bufferPointer: bytes)
    sha512?.update(bufferPointer: bytes)
  }

  /// The first declared hash the data does not have, as (key, declared, actual) in hex.
  func mismatch() -> (key: String, declared: String, actual: String)? {
    if let cksum, let want = declared.crc32, cksum.value != want {
      return ("CKS", String(want, radix: 16), String(cksum.value, radix: 16))
    }
    func check(_ key: String, _ want: [UInt8]?, _ got: (any Digest)?) -> (String, String, String)? {
      guard let want, let got else { return nil }
      let actual = Array(got)
      return actual == want ? nil : (key, AppleArchiveError.hex(want), AppleArchiveError.hex(actual))
    }
    return check("SH1", declared.sha1, sha1?.finalize()) ?? check("SH2", declared.sha256, sha256?.finalize())
      ?? check("SH3", declared.sha384, sha384?.finalize()) ?? check("SH5", declared.sha512, sha512?.finalize())
  }
}

/// The POSIX 1003.2 `cksum` CRC (polynomial 0x04C11DB7, most significant bit first, the length
/// folded in at the end): what Apple's headers call CRC32 for the `CKS` field.
package struct POSIXChecksum {
  private var crc: UInt32 = 0
  private var length: UInt64 = 0
  private static let table: [UInt32] = (0..<256).map { i -> UInt32 in
    var c = UInt32(i) << 24
    for _ in 0..<8 { c = c & 0x8000_0000 != 0 ? (c << 1) ^ 0x04C1_1DB7 : c << 1 }
    return c
  }

  /// A checksum of no bytes yet.
  package init() {}

  /// Adds bytes.
  package mutating func update(_ bytes: UnsafeRawBufferPointer) {
    let table = POSIXChecksum.table
    for b in bytes { crc = (crc << 8) ^ table[Int((crc >> 24) ^ UInt32(b))] }
    length += UInt64(bytes.count)
  }

  /// The checksum of the bytes so far (what `cksum` prints first).
  package var value: UInt32 {
    let table = POSIXChecksum.table
    var c = crc
    var n = length
    while n != 0 {
      c = (c << 8) ^ table[Int((c >> 24) ^ UInt32(n & 0xFF))]
      n >>= 8
    }
    return ~c
  }
}
