/// What a file's first bytes say it is, whatever its name.
package enum FileSignature {
  /// The kind of executable code `head` starts with, or nil.
  ///
  /// Mach-O (32/64-bit, both byte orders), universal binaries (fat and fat64, told apart from
  /// Java class files by the architecture count), ELF, PE (`MZ` with a `PE\0\0` header where
  /// `e_lfanew` points), `!<arch>` static libraries and `#!` scripts.
  package static func executableKind(_ bytes: [UInt8]) -> String? { executableKind(bytes[...]) }

  /// ``executableKind(_:)-([UInt8])`` over a slice (the inspector's read buffer, not copied).
  package static func executableKind(_ bytes: ArraySlice<UInt8>) -> String? {
    let head = Array(bytes.prefix(0x40))
    guard head.count >= 2 else { return nil }
    if head[0] == 0x23 && head[1] == 0x21 { return "a script (#!)" }
    guard head.count >= 4 else { return nil }
    let be = UInt32(head[0]) << 24 | UInt32(head[1]) << 16 | UInt32(head[2]) << 8 | UInt32(head[3])
    switch be {
    case 0xFEED_FACE, 0xCEFA_EDFE: return "a Mach-O executable (32-bit)"
    case 0xFEED_FACF, 0xCFFA_EDFE: return "a Mach-O executable (64-bit)"
    case 0xCAFE_BABF: return "a universal (fat64) Mach-O binary"
    case 0xCAFE_BABE, 0xBEBA_FECA:
      // Java class files share this magic; their next word is the version (45 and up), a fat
      // header's is the architecture count (a handful).
      guard head.count >= 8 else { return nil }
      let word =
        be == 0xCAFE_BABE
        ? UInt32(head[4]) << 24 | UInt32(head[5]) << 16 | UInt32(head[6]) << 8 | UInt32(head[7])
        : UInt32(head[7]) << 24 | UInt32(head[6]) << 16 | UInt32(head[5]) << 8 | UInt32(head[4])
      return word > 0 && word < 45 ? "a universal (fat) Mach-O binary" : nil
    case 0x7F45_4C46: return "an ELF executable"
    default: break
    }
    if head.starts(with: Array("!<arch>\n".utf8)) { return "a static library (!<arch>)" }
    if head[0] == 0x4D && head[1] == 0x5A && head.count >= 0x40 {
      let offset = Int(head[0x3C]) | Int(head[0x3D]) << 8 | Int(head[0x3E]) << 16 | Int(head[0x3F]) << 24
      let at = bytes.startIndex + offset
      if offset >= 0x40, offset <= bytes.count - 4,
        bytes[at] == 0x50, bytes[at + 1] == 0x45, bytes[at + 2] == 0, bytes[at + 3] == 0
      {
        return "a Windows PE executable"
      }
    }
    return nil
  }

  /// True when `head` starts a format that is already compressed, so deflating it again would
  /// waste time for nothing: PNG, JPEG, GIF, WebP, MP3, AAC, M4A/MP4/MOV/HEIC, OGG, FLAC, zip,
  /// gzip, bzip2, xz, 7z, zstd, WOFF/WOFF2.
  package static func isCompressed(_ head: [UInt8]) -> Bool { head.withUnsafeBytes { isCompressed($0) } }

  /// ``isCompressed(_:)-([UInt8])`` over the first bytes read (not copied: it runs per file).
  package static func isCompressed(_ head: UnsafeRawBufferPointer) -> Bool {
    func has(_ magic: [UInt8], at offset: Int) -> Bool {
      guard head.count >= offset + magic.count else { return false }
      for (i, byte) in magic.enumerated() where head[offset + i] != byte { return false }
      return true
    }
    for (offset, magic) in compressedMagics where has(magic, at: offset) { return true }
    if has(Array("RIFF".utf8), at: 0) && has(Array("WEBP".utf8), at: 8) { return true }
    guard head.count >= 2, head[0] == 0xFF else { return false }
    if (head[1] & 0xF6) == 0xF0 { return true }  // AAC ADTS
    return (head[1] & 0xE0) == 0xE0 && (head[1] & 0x06) != 0  // MPEG audio frame sync
  }

  /// (offset, magic) of the already-compressed formats that a fixed prefix identifies.
  private static let compressedMagics: [(Int, [UInt8])] =
    [
      (0, [0x89, 0x50, 0x4E, 0x47]), (0, [0xFF, 0xD8, 0xFF]), (0, [0x50, 0x4B, 0x03, 0x04]), (0, [0x1F, 0x8B]),
      (0, [0xFD, 0x37, 0x7A, 0x58, 0x5A, 0x00]), (0, [0x37, 0x7A, 0xBC, 0xAF, 0x27, 0x1C]),
      (0, [0x28, 0xB5, 0x2F, 0xFD]),
    ]
    + [
      (0, "GIF8"), (0, "ID3"), (0, "OggS"), (0, "fLaC"), (0, "BZh"), (0, "wOFF"), (0, "wOF2"),
      (4, "ftyp"), (4, "moov"), (4, "mdat"), (4, "wide"),
    ].map { ($0.0, Array($0.1.utf8)) }
}
