import SystemIO

extension EntryKind {
  /// The name used in a TOC's `<type>`; nil for ``EntryKind/other`` (the TOC's own name is kept
  /// in ``XAREntry/otherTypeName``).
  package var xarTypeName: String? {
    switch self {
    case .file: return "file"
    case .directory: return "directory"
    case .symlink: return "symlink"
    case .hardLink: return "hardlink"
    case .fifo: return "fifo"
    case .characterDevice: return "character special"
    case .blockDevice: return "block special"
    case .socket: return "socket"
    case .other: return nil
    }
  }

  /// The kind a TOC's `<type>` names; ``EntryKind/other`` for a name this reader does not know.
  package init(xarTypeName typeName: String) {
    switch typeName {
    case "file": self = .file
    case "directory": self = .directory
    case "symlink": self = .symlink
    case "hardlink": self = .hardLink
    case "fifo": self = .fifo
    case "character special": self = .characterDevice
    case "block special": self = .blockDevice
    case "socket": self = .socket
    default: self = .other
    }
  }
}

/// How a file's bytes are stored in the heap.
package enum XAREncoding: Equatable, Hashable, Sendable {
  /// Stored as they are (`application/octet-stream`).
  case none
  /// A zlib stream (`application/x-gzip`, despite the name).
  case gzip
  /// `application/x-bzip2`.
  case bzip2
  /// `application/x-xz`.
  case xz
  /// `application/x-lzma`.
  case lzma
  /// A style this reader cannot decode, kept verbatim.
  case unknown(String)

  /// The MIME-like name written in `<encoding style="…">`.
  package var style: String {
    switch self {
    case .none: return "application/octet-stream"
    case .gzip: return "application/x-gzip"
    case .bzip2: return "application/x-bzip2"
    case .xz: return "application/x-xz"
    case .lzma: return "application/x-lzma"
    case .unknown(let s): return s
    }
  }

  init(style: String) {
    switch style {
    case "application/octet-stream", "": self = .none
    case "application/x-gzip", "application/zlib", "application/x-zlib": self = .gzip
    case "application/x-bzip2": self = .bzip2
    case "application/x-xz": self = .xz
    case "application/x-lzma": self = .lzma
    default: self = .unknown(style)
    }
  }
}

/// Where a file's bytes are in the heap and how to check them.
package struct XARData: Equatable, Hashable, Sendable {
  /// Offset from the start of the heap.
  package var offset: UInt64
  /// Stored (possibly compressed) length.
  package var length: UInt64
  /// Length once decoded: the file's size.
  package var size: UInt64
  package var encoding: XAREncoding
  /// Checksum of the stored bytes.
  package var archivedChecksum: XARChecksum?
  /// Checksum of the decoded bytes.
  package var extractedChecksum: XARChecksum?

  package init(
    offset: UInt64, length: UInt64, size: UInt64, encoding: XAREncoding,
    archivedChecksum: XARChecksum?, extractedChecksum: XARChecksum?
  ) {
    self.offset = offset
    self.length = length
    self.size = size
    self.encoding = encoding
    self.archivedChecksum = archivedChecksum
    self.extractedChecksum = extractedChecksum
  }
}

/// One `<file>` of a TOC, with its full path.
package struct XAREntry: Equatable, Sendable {
  /// The TOC's `id` attribute.
  package var id: String
  /// Names from the root down, joined with `/`. Names are never empty and never hold `/` or NUL.
  package var path: String
  package var kind: EntryKind
  /// For ``EntryKind/other``: the `<type>` the TOC gives, verbatim.
  package var otherTypeName: String?
  /// Permission bits, as in `<mode>` (octal in the TOC); nil if the TOC has none.
  package var mode: UInt32?
  package var uid: UInt64?
  package var gid: UInt64?
  package var user: String?
  package var group: String?
  package var mtime: XARTimestamp?
  /// A symlink's target, verbatim.
  package var linkTarget: String?
  /// For ``EntryKind/hardLink``: the path of the entry that holds the data.
  package var hardLinkTarget: String?
  /// Present for files (and hard-link originals) with data in the heap.
  package var data: XARData?
  /// The line of the TOC where the `<file>` starts, for messages.
  package var tocLine: Int

  package init(
    id: String, path: String, kind: EntryKind, otherTypeName: String? = nil, mode: UInt32? = nil, uid: UInt64? = nil,
    gid: UInt64? = nil, user: String? = nil, group: String? = nil, mtime: XARTimestamp? = nil,
    linkTarget: String? = nil, hardLinkTarget: String? = nil, data: XARData? = nil,
    tocLine: Int = 0
  ) {
    self.id = id
    self.path = path
    self.kind = kind
    self.otherTypeName = kind == .other ? otherTypeName : nil
    self.mode = mode
    self.uid = uid
    self.gid = gid
    self.user = user
    self.group = group
    self.mtime = mtime
    self.linkTarget = linkTarget
    self.hardLinkTarget = hardLinkTarget
    self.data = data
    self.tocLine = tocLine
  }

  /// The `<type>` as the TOC gives it.
  package var typeName: String { kind.xarTypeName ?? otherTypeName ?? "" }

  /// The decoded size of the entry's data, 0 if it has none.
  package var size: UInt64 { data?.size ?? 0 }
}
