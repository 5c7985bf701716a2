import SystemIO

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

/// A package or folder, opened: what every format has (its format, where it is, its size) and
/// its entries, read on demand through a ``PackageReader`` (each with its bytes readable once).
/// What only some formats know travels in one value, ``index``.
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
  /// What the source knows beyond its entries (its own index, a walk's leftovers, its
  /// verdict at the end): nil when it knows nothing more. Asked again, it gives what is known
  /// then (a zip's names once its central directory was read, a walk's leftovers once it is over).
  var index: PackageIndex? { get }
}

extension EntrySource {
  /// Calls `visit` for every entry, in the source's order: a whole pass (``entries()``).
  /// `data` (files only) is valid only during the call.
  package func forEachEntry(_ visit: (PackageEntry, EntryData?) throws -> Void) throws {
    let reader = try entries()
    while let (entry, data) = try reader.next() { try visit(entry, data) }
  }

  /// True when the file is not a package at all (see ``PackageIndex/unreadable``).
  package var isUnreadable: Bool { index?.unreadable != nil }
}

/// What only some formats know about a package, beyond its entries: the facts a package's own
/// index (a XAR's TOC, a zip's central directory) or a folder's walk gives. Every fact has the
/// value of a source that does not know it by default, so a source sets only what it knows.
///
/// Facts that cost something to find (a walk, a list of every path) are functions, asked only
/// when they are needed.
package struct PackageIndex {
  /// Other formats the file's bytes also parse as (found by ``PackageOpener``); the entries
  /// come from the source's own format's view.
  package var otherForms: [PackageFormat] = []
  /// Paths of a project folder that `build` leaves out (known once the walk is over).
  package var leftOut: [LeftOutPath] = []
  /// How many entries will come, when the source knows before it starts (a XAR's TOC); lets the
  /// run size its path index once.
  package var entryCountHint: Int?
  /// The bytes the files' data will add up to (decoded), for a progress display: a XAR's and a
  /// zip's declared sizes, a folder's file sizes; nil when unknown (a flat package's cpio
  /// payload declares its sizes only as it is read). May cost a walk: asked once, and only when
  /// progress is shown (see ``ProgressHandler``).
  package var expectedDataSize: (() -> UInt64?)?
  /// True when ``expectedDataSize`` may turn from nil to a value while the entries are read (a
  /// TOC still being parsed): then it is asked again now and then.
  package var expectedDataSizeMayArrive = false
  /// Where the package file was cut off, when it was opened anyway (a plain XAR read for
  /// `unpack --keep-going`): the entries whose data lies past the cut throw when read.
  package var truncation: Truncation?
  /// Every entry's path in the package's own index (a XAR's TOC, a zip's central directory,
  /// once read): what `--keep-going` lists as not read when reading stops.
  package var indexedPaths: (() -> [String]?)?
  /// Why the file is not a package at all (its index could not be read), when it is not: only
  /// the `archive-integrity` rule applies, and nothing is written from it.
  package var unreadable: String?
  /// True for a content project folder (`ContentInfo.plist` and `Contents/`).
  package var isContentProject = false
  /// `ContentInfo.plist`'s bytes (at most the limit given) straight from the package's index,
  /// without reading the other entries (nil: the index has no plist at the root); absent when
  /// the source has no such index, and the caller reads the entries instead.
  package var contentInfo: ((_ limit: UInt64) throws -> [UInt8]?)?
  /// How the package checks its files' bytes, for people (`sha1`, `crc32`, `none`, …).
  package var checksumStyle = "none"
  /// Asked once the entries are read, or reading stopped: why the package's index is refused
  /// after all, for a source that checks its whole index only at the end (a plain XAR read as its
  /// TOC streams, ``StreamingXARPackageSource``); nil when the index stands. The run's verdict
  /// is then that of a file whose index cannot be read, whatever the rules saw.
  package var refusal: (() -> (any Error)?)?
  /// The package's table of contents as stored, for a package that has one (a plain XAR, or a
  /// flat package's outer XAR).
  package var tableOfContents: (any TableOfContents)?

  package init() {}
}

/// Where a package file was cut off, when it was opened anyway: it ends at byte ``fileSize``,
/// its index describes ``describedSize`` bytes.
package struct Truncation: Equatable, Sendable {
  /// The bytes the file has.
  package var fileSize: UInt64
  /// The bytes its index describes.
  package var describedSize: UInt64
}

/// A package's own table of contents, as stored (inflated): what `info --toc` writes.
package protocol TableOfContents: AnyObject {
  /// Writes the table of contents to `write`, chunk by chunk as it inflates, with the same checks
  /// as opening the package.
  func writeTOC(to write: ([UInt8]) throws -> Void) throws
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
