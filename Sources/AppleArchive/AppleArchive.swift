/// Apple Archive (`.aar`): entries (`AA01`/`YAA1` headers and their blobs) and the `pbz*`
/// compression framing. Knows nothing of plists or rules, like the XAR target.
///
/// ``AppleArchiveReader`` pulls entries and their data; ``AppleArchiveWriter`` writes them.
/// `docs/format.md` ("Apple Archive") says which readings of the format this codec takes.
package enum AppleArchive {
  /// The block size Apple's `aa` tool uses, and the writer's default: 4 MiB.
  package static let defaultBlockSize = 4 << 20
}

/// How the entries of an archive are stored.
package enum AppleArchiveCompression: Equatable, Sendable, CaseIterable {
  /// Raw entries, no framing.
  case none
  /// `pbze`: each block one LZFSE stream.
  case lzfse
  /// `pbzz`: each block one zlib (RFC 1950) stream.
  case zlib
  /// `pbzx`: each block one xz stream.
  case lzma

  /// The algorithm letter after `pbz`; nil for `.none`.
  package var letter: UInt8? {
    switch self {
    case .none: return nil
    case .lzfse: return UInt8(ascii: "e")
    case .zlib: return UInt8(ascii: "z")
    case .lzma: return UInt8(ascii: "x")
    }
  }

  /// The name messages use.
  package var name: String {
    switch self {
    case .none: return "none"
    case .lzfse: return "LZFSE"
    case .zlib: return "zlib"
    case .lzma: return "LZMA"
    }
  }
}

/// Bounds on what a reader accepts; every breach is its own ``AppleArchiveError``.
package struct AppleArchiveLimits: Equatable, Sendable {
  /// The largest entry header, in bytes (the format's own bound is 65535).
  package var maxHeaderSize = 16_384
  /// The longest path or link target, in bytes.
  package var maxPathBytes = 1_024
  /// The most bytes the payload may decode to, headers and blobs together (a work budget).
  package var maxDecodedTotal: UInt64 = 4 << 30
  /// The most a block may expand: raw size over compressed size.
  package var maxRatio: UInt64 = 8_192
  /// The largest block size a framing may declare (at most 1 GiB: a block is held whole).
  package var maxBlockSize: UInt64 = 64 << 20
  /// The most entries.
  package var maxEntries = 1_000_000

  /// The defaults.
  package init() {}
}
