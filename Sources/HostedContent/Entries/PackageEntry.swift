import SystemIO
import XAR

/// What kind of file-system object an entry is (defined once, in SystemIO, for every layer).
public typealias EntryKind = SystemIO.EntryKind

/// One entry of a package or content folder, as it passes from a source to the rules and a sink.
///
/// Holds no file data: the bytes stream once through ``EntryData`` beside it.
public struct PackageEntry: Equatable, Sendable {
  /// The relative path, `/`-separated, as the source has it (a leading `./` removed). Never
  /// trusted: `path-safety` checks it and sinks refuse anything unsafe.
  public var path: String
  /// What the entry is.
  public var kind: EntryKind
  /// Permission and special bits (`0o7777`).
  public var mode: UInt32
  /// Decoded size in bytes (0 for anything but files).
  public var size: UInt64
  /// A symlink's target, or the path a hard link names.
  public var linkTarget: String?
  /// False when the source's name bytes were not valid UTF-8 (the path then holds U+FFFD).
  public var pathIsValidUTF8: Bool
  /// How the entry is stored in the package, when the format says.
  public var storage: Storage?
  /// True for a member of a flat package's outer XAR (`Distribution`, `NAME.pkg/Bom`, …), which
  /// is not content: it is never unpacked, but any extractor of the whole file writes it, so the
  /// rules that guard the machine (paths, executables, special files, the wrapper's layout)
  /// look at it too.
  public var isWrapperMember = false

  /// How an entry's bytes are stored.
  public struct Storage: Equatable, Sendable {
    /// The bytes the data takes in the archive.
    public var storedSize: UInt64
    /// `none`, `gzip`, `bzip2`, `xz`, `deflate`, … as the format names it.
    public var encoding: String
    /// The extracted-data checksum, `algorithm:hex`.
    public var checksum: String?

    /// How an entry's data is stored.
    public init(storedSize: UInt64, encoding: String, checksum: String?) {
      self.storedSize = storedSize
      self.encoding = encoding
      self.checksum = checksum
    }
  }

  /// An entry as a source describes it.
  public init(
    path: String, kind: EntryKind, mode: UInt32, size: UInt64 = 0, linkTarget: String? = nil,
    pathIsValidUTF8: Bool = true, storage: Storage? = nil
  ) {
    self.path = path
    self.kind = kind
    self.mode = mode
    self.size = size
    self.linkTarget = linkTarget
    self.pathIsValidUTF8 = pathIsValidUTF8
    self.storage = storage
  }

  /// The path's components.
  public var components: [Substring] {
    guard pathIsASCII else { return path.split(separator: "/", omittingEmptySubsequences: false) }
    return path.utf8.split(separator: Self.slash, omittingEmptySubsequences: false).map(Substring.init)
  }

  /// The first component: what sits at the package root.
  public var rootName: Substring {
    guard pathIsASCII else { return path[..<(path.firstIndex(of: "/") ?? path.endIndex)] }
    return path[..<(path.utf8.firstIndex(of: Self.slash) ?? path.endIndex)]
  }

  /// The last component.
  public var name: Substring {
    guard pathIsASCII else {
      guard let slash = path.lastIndex(of: "/") else { return path[...] }
      return path[path.index(after: slash)...]
    }
    guard let slash = path.utf8.lastIndex(of: Self.slash) else { return path[...] }
    return path[path.utf8.index(after: slash)...]
  }

  private static let slash = UInt8(ascii: "/")

  /// True when the path is ASCII. Then every character is one byte (CR LF, the one ASCII pair
  /// that forms a single character, holds no `/`), so the path can be cut at `/` bytes directly,
  /// which is many times cheaper per entry than walking characters; otherwise a `/` followed by a
  /// combining mark is not a separator, and the character walk decides.
  private var pathIsASCII: Bool { path.utf8.allSatisfy { $0 < 0x80 } }

  /// Strips what archivers add in front of relative paths: `./` prefixes and trailing `/`.
  public static func normalizedSourcePath(_ raw: String) -> String {
    var path = Substring(raw)
    while path.hasPrefix("./") { path = path.dropFirst(2) }
    while path.count > 1 && path.hasSuffix("/") { path = path.dropLast() }
    return String(path)
  }
}

/// The bytes of one entry, readable once, in order. Returns 0 at the end; the last call is the
/// one that reports checksum or size problems. (Defined once, in SystemIO, for every layer.)
public typealias EntryData = SystemIO.ByteSource

/// Entry data that can also be read at any offset without moving its stream (a file in a
/// folder): what lets a sink look at a sample of a file before its bytes come
/// (``EntrySink/preview(_:read:)``).
protocol PositionalEntryData: EntryData {
  /// Fills up to `buffer.count` bytes from `offset`; returns how many, 0 past the end.
  func read(into buffer: UnsafeMutableRawBufferPointer, at offset: UInt64) throws -> Int
}
