import SystemIO

/// A time as Apple Archive stores it (`S`: seconds; `T`: seconds and nanoseconds).
package struct AppleArchiveTime: Equatable, Sendable {
  /// Seconds since 1970-01-01 UTC.
  package var seconds: Int64
  /// Nanoseconds, 0 to 999,999,999.
  package var nanoseconds: UInt32

  /// A time of `seconds` since 1970 and `nanoseconds` (under 10^9).
  package init(seconds: Int64, nanoseconds: UInt32 = 0) {
    self.seconds = seconds
    self.nanoseconds = nanoseconds
  }
}

/// One entry's header, as read: what it is, where, and what its fields declare.
package struct AppleArchiveEntry: Equatable, Sendable {
  /// The entry type (`TYP1`), Apple's letters.
  package enum Kind: UInt8, Equatable, Sendable, CaseIterable {
    /// A regular file (`F`).
    case file = 0x46
    /// A directory (`D`).
    case directory = 0x44
    /// A symbolic link (`L`).
    case symlink = 0x4C
    /// A FIFO (`P`).
    case fifo = 0x50
    /// A character device (`C`).
    case charDevice = 0x43
    /// A block device (`B`).
    case blockDevice = 0x42
    /// A socket (`S`).
    case socket = 0x53
    /// A whiteout (`W`).
    case whiteout = 0x57
    /// A door (`R`).
    case door = 0x52
    /// A port (`T`).
    case port = 0x54
    /// Metadata, not a file-system object (`M`).
    case metadata = 0x4D

    /// The name messages use.
    package var name: String {
      switch self {
      case .file: return "regular file"
      case .directory: return "directory"
      case .symlink: return "symbolic link"
      case .fifo: return "FIFO"
      case .charDevice: return "character device"
      case .blockDevice: return "block device"
      case .socket: return "socket"
      case .whiteout: return "whiteout"
      case .door: return "door"
      case .port: return "port"
      case .metadata: return "metadata"
      }
    }

    /// The kind in the one vocabulary every layer shares; a whiteout, door, port or metadata
    /// entry is ``EntryKind/other``.
    package var entryKind: EntryKind {
      switch self {
      case .file: return .file
      case .directory: return .directory
      case .symlink: return .symlink
      case .fifo: return .fifo
      case .charDevice: return .characterDevice
      case .blockDevice: return .blockDevice
      case .socket: return .socket
      case .whiteout, .door, .port, .metadata: return .other
      }
    }
  }

  /// The data hashes a header declares (all optional).
  package struct Hashes: Equatable, Sendable {
    /// `CKS`: the POSIX `cksum` CRC of the data.
    package var crc32: UInt32?
    /// `SH1`, `SH2`, `SH3`, `SH5`: SHA-1, SHA-256, SHA-384, SHA-512 of the data.
    package var sha1: [UInt8]?
    /// See ``sha1``.
    package var sha256: [UInt8]?
    /// See ``sha1``.
    package var sha384: [UInt8]?
    /// See ``sha1``.
    package var sha512: [UInt8]?

    /// No hash declared.
    package init() {}

    /// True when no hash is declared.
    package var isEmpty: Bool { crc32 == nil && sha1 == nil && sha256 == nil && sha384 == nil && sha512 == nil }
  }

  /// The 1-based number of the entry in the archive.
  package var number: Int
  /// Where the header starts in the decoded payload (for a raw archive, the file offset).
  package var payloadOffset: UInt64
  /// The header's size in bytes, magic and size included.
  package var headerSize: Int
  /// True for the legacy `YAA1` magic.
  package var legacyMagic: Bool
  /// What the entry is.
  package var kind: Kind
  /// `PAT`, as stored; empty only for the root directory.
  package var path: [UInt8]
  /// `LNK`: a symbolic link's target.
  package var linkTarget: [UInt8]?
  /// `MOD`: the permission bits (low 12 bits of `st_mode`).
  package var mode: UInt64?
  /// `UID`, `GID`, `FLG`, `DEV`.
  package var uid: UInt64?
  /// See ``uid``.
  package var gid: UInt64?
  /// See ``uid``.
  package var flags: UInt64?
  /// See ``uid``.
  package var device: UInt64?
  /// `MTM`, `CTM`, `BTM`.
  package var modificationTime: AppleArchiveTime?
  /// See ``modificationTime``.
  package var creationTime: AppleArchiveTime?
  /// See ``modificationTime``.
  package var backupTime: AppleArchiveTime?
  /// `DAT`: the size of the data blob; nil when the header has none.
  package var dataSize: UInt64?
  /// `SIZ`: the declared data size, when present (checked against ``dataSize``).
  package var declaredSize: UInt64?
  /// `XAT` and `ACL`: the sizes of the extended-attribute and access-control blobs.
  package var xattrSize: UInt64?
  /// See ``xattrSize``.
  package var aclSize: UInt64?
  /// Declared hashes of the data.
  package var hashes = Hashes()
  /// Every field of the header, key and subtype (`"TYP1"`, `"PATP"`, …), in order.
  package var fieldKeys: [String] = []
  /// The blobs after the header, in field order: key and size.
  package var blobs: [Blob] = []

  /// One blob after the header.
  package struct Blob: Equatable, Sendable {
    /// `DAT`, `XAT`, `ACL`, `YAF` or `YEC`.
    package var key: String
    /// Its size in bytes.
    package var size: UInt64
  }

  /// The path as text, for messages (escaped where it is not printable UTF-8).
  package var printablePath: String { AppleArchiveError.printable(path) }
}
