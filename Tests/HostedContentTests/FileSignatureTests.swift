import HostedContent
import Testing

/// The magic bytes that make build store a file as it is (already compressed) instead of
/// deflating it again, each one, and the near misses that must still be deflated.
@Suite struct FileSignatureTests {
  static let compressed: [(String, [UInt8])] = [
    ("PNG", [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A]), ("JPEG", [0xFF, 0xD8, 0xFF, 0xE0]),
    ("GIF", Array("GIF89a".utf8)), ("WebP", Array("RIFF\u{0}\u{0}\u{0}\u{0}WEBPVP8 ".utf8)),
    ("MP3 with ID3", Array("ID3\u{3}".utf8)), ("OGG", Array("OggS".utf8)), ("FLAC", Array("fLaC".utf8)),
    ("AAC ADTS", [0xFF, 0xF1, 0x50]), ("MPEG audio", [0xFF, 0xFB, 0x90]),
    ("MP4", [0, 0, 0, 0x18] + Array("ftypmp42".utf8)), ("MOV", [0, 0, 0, 8] + Array("moov".utf8)),
    ("mdat", [0, 0, 0, 8] + Array("mdat".utf8)), ("wide", [0, 0, 0, 8] + Array("wide".utf8)),
    ("zip", [0x50, 0x4B, 0x03, 0x04]), ("gzip", [0x1F, 0x8B, 0x08]), ("bzip2", Array("BZh9".utf8)),
    ("xz", [0xFD, 0x37, 0x7A, 0x58, 0x5A, 0x00]), ("7z", [0x37, 0x7A, 0xBC, 0xAF, 0x27, 0x1C]),
    ("zstd", [0x28, 0xB5, 0x2F, 0xFD]), ("WOFF", Array("wOFF".utf8)), ("WOFF2", Array("wOF2".utf8)),
  ]

  @Test(arguments: compressed) func storedFormats(_ format: (String, [UInt8])) {
    #expect(FileSignature.isCompressed(format.1), "\(format.0)")
    #expect(format.1.withUnsafeBytes { FileSignature.isCompressed($0) }, "\(format.0)")
  }

  @Test func nearMissesAreDeflated() {
    let misses: [[UInt8]] = [
      [], [0x89, 0x50, 0x4E], Array("RIFF\u{0}\u{0}\u{0}\u{0}WAVE".utf8), Array("GIF".utf8),
      [0xFF, 0xD8], [0xFF, 0xE1], [0xFF], [0x1F], Array("{\"json\": 1}".utf8), Array("ftyp".utf8),
      [0x50, 0x4B, 0x05, 0x06], Array("wOF".utf8), Array("BZ".utf8),
    ]
    for head in misses { #expect(!FileSignature.isCompressed(head), "\(head)") }
  }
}
