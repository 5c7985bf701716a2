import SystemIO
import XAR

/// The shape a package comes in, found from its bytes.
public enum PackageFormat: String, Codable, Sendable {
  /// A XAR with `ContentInfo.plist` and `Contents/` at its root: what pkgtool writes.
  case xar
  /// An Apple flat package (`productbuild --content`): a XAR whose `NAME.pkg/Payload` is a
  /// compressed cpio archive holding the content.
  case flatPackage = "flat-package"
  /// The zip a client downloads.
  case zip
  /// A tar archive (what some pipelines hand over).
  case tar
  /// A content folder on disk.
  case directory
  /// A Background Assets asset-pack source folder: `Manifest.json` and the files it selects.
  case assetPack = "asset-pack"
  /// An Apple Archive (`.aar`): a Background Assets asset pack, raw `AA01` entries or `pbz*`
  /// compressed blocks of them.
  case appleArchive = "apple-archive"
  /// A file that is none of these (or whose index cannot be read at all).
  case unknown

  /// How people call it.
  public var displayName: String {
    switch self {
    case .xar: return "XAR package"
    case .flatPackage: return "flat package (productbuild)"
    case .zip: return "zip"
    case .tar: return "tar"
    case .directory: return "content folder"
    case .assetPack: return "asset-pack folder (Background Assets)"
    case .appleArchive: return "Apple Archive (.aar)"
    case .unknown: return "not a package"
    }
  }
}

/// One pass over a package's entries, pulled one at a time (``EntrySource/entries()``): the
/// caller asks for the next entry when it wants it, and may stop at any point.
package protocol PackageReader: AnyObject {
  /// The next entry, in the source's order, and for a file its data, readable until the next
  /// call; nil after the last entry. Throws when the source is damaged (an `archive-integrity`
  /// problem) or an I/O error happens; the pass is over then.
  func next() throws -> (entry: PackageEntry, data: EntryData?)?
}

/// A package or folder, opened: the facts operations ask of it, and its entries, read on
/// demand through a ``PackageReader`` (each with its bytes readable once). After the last entry
/// (or wherever reading stopped), ``indexRefusal()`` gives a verdict the index only settles at
/// the end.
///
/// Rules never know which source they are fed from.
package protocol EntrySource: AnyObject {
  var format: PackageFormat { get }
  /// The package file or folder, for messages.
  var location: String { get }
  /// The package file's size; nil for folders.
  var packageSize: UInt64? { get }
  /// Starts a pass over the entries, in the source's order. Each call starts again from the
  /// first entry (a stream that can be read once, an Apple Archive, reads on where it was).
  /// Throws as ``PackageReader/next()`` does.
  func entries() throws -> PackageReader
  /// Other formats the file's bytes also parse as (found by ``PackageOpener``); the entries
  /// come from ``format``'s view.
  var otherForms: [PackageFormat] { get }
  /// Paths of a project folder that `build` leaves out (known once the walk is over); empty for
  /// packages.
  var leftOut: [LeftOutPath] { get }
  /// How many entries will come, when the source knows before it starts (a XAR's TOC); lets the
  /// run size its path index once.
  var entryCountHint: Int? { get }
  /// The bytes the files' data will add up to (decoded), for a progress display: a XAR's and a
  /// zip's declared sizes, a folder's file sizes; nil when unknown (a flat package's cpio
  /// payload declares its sizes only as it is read). May cost a walk: asked once, and only when
  /// progress is shown (see ``ProgressHandler``).
  var expectedDataSize: UInt64? { get }
  /// True when ``expectedDataSize`` may turn from nil to a value while the entries are read (a
  /// TOC still being parsed): then it is asked again now and then.
  var expectedDataSizeMayArrive: Bool { get }
  /// Where the package file was cut off, when it was opened anyway (a plain XAR read for
  /// `unpack --keep-going`): the entries whose data lies past the cut throw when read.
  var truncation: XARTruncation? { get }
  /// Every entry's path in the package's own index (a XAR's TOC, a zip's central directory),
  /// when it has one and it was read: what `--keep-going` lists as not read when reading stops.
  var indexedPaths: [String]? { get }
  /// True when the file is not a package at all (its index could not be read): only the
  /// `archive-integrity` rule applies, and nothing is written from it.
  var isUnreadable: Bool { get }
  /// True for a content project folder (`ContentInfo.plist` and `Contents/`).
  var isContentProject: Bool { get }
  /// Asks the source to decode files up to `size` bytes ahead of the caller, on its decode
  /// threads, when it has them (a plain XAR): for a caller with work of its own per file (unpack
  /// writes every file; validate only reads them, and gains nothing past a bound). Others ignore it.
  func decodeLargeFilesAhead(upTo size: UInt64)
  /// Tells the source that the caller's own work per file is light (validate, which checks each
  /// file; not unpack, which writes each one): where the index is still being parsed on a thread of its own and the processors
  /// are too few for the parser, the caller and decode threads at once, the caller then decodes
  /// each file itself until the index is whole, and the decode threads start after. Others
  /// ignore it.
  func callerWorkIsLight()
  /// `ContentInfo.plist`'s bytes (at most `limit`) straight from the package's index, without
  /// reading the other entries; nil when this source has no such index, and the caller reads
  /// the entries instead. `.some(nil)`: the index has no plist at the root.
  func contentInfoFromIndex(limit: UInt64) throws -> [UInt8]??
  /// How the package checks its files' bytes, for people (`sha1`, `crc32`, `none`, …).
  var checksumStyle: String { get }
  /// Asked once the entries are read, or reading stopped: why the package's index is refused
  /// after all, for a source that checks its whole index only at the end (a plain XAR read as its
  /// TOC streams, ``StreamingXARPackageSource``). The run's verdict is then that of a file whose
  /// index cannot be read (``UnreadablePackageSource``), whatever the rules saw. Nil for every
  /// other source, and when the index stands.
  func indexRefusal() -> (any Error)?
  /// The XAR reader of a package that has a XAR table of contents (a plain XAR, or a flat
  /// package's outer XAR); nil for every other source.
  var tableOfContentsReader: XARReader? { get }
}

extension EntrySource {
  /// Calls `visit` for every entry, in the source's order: a whole pass (``entries()``).
  /// `data` (files only) is valid only during the call.
  package func forEachEntry(_ visit: (PackageEntry, EntryData?) throws -> Void) throws {
    let reader = try entries()
    while let (entry, data) = try reader.next() { try visit(entry, data) }
  }

  package var otherForms: [PackageFormat] { [] }
  package var leftOut: [LeftOutPath] { [] }
  package var entryCountHint: Int? { nil }
  package var expectedDataSize: UInt64? { nil }
  package var expectedDataSizeMayArrive: Bool { false }
  package var truncation: XARTruncation? { nil }
  package var indexedPaths: [String]? { nil }
  package var isUnreadable: Bool { false }
  package var isContentProject: Bool { false }
  package func decodeLargeFilesAhead(upTo size: UInt64) {}
  package func callerWorkIsLight() {}
  package func contentInfoFromIndex(limit: UInt64) throws -> [UInt8]?? { nil }
  package var checksumStyle: String { "none" }
  package var tableOfContentsReader: XARReader? { nil }
  package func indexRefusal() -> (any Error)? { nil }
}

/// A path in a project folder that `build` does not put in the package.
public struct LeftOutPath: Sendable, Equatable {
  /// Why it is left out.
  public enum Reason: String, Sendable {
    /// Junk (see the `junk-file` rule), anywhere in the tree.
    case junk
    /// At the project's root, beside `ContentInfo.plist` and `Contents/`.
    case outsideContent
    /// Matched by an `--exclude` pattern or a line of `.pkgtoolignore` (a folder stands for
    /// everything in it).
    case excluded
    /// The project's `.pkgtoolignore`, never packaged.
    case ignoreFile
  }
  /// Relative to the project folder.
  public var path: String
  /// Why it is left out.
  public var reason: Reason
  package init(path: String, reason: Reason) {
    self.path = path
    self.reason = reason
  }
}
