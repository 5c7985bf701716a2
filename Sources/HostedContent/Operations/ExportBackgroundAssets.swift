import AppleArchive
import SystemIO

/// `export background-assets`: a hosted-content package (or project) as an asset-pack source
/// folder for Apple's `ba-package`: the package's `Contents/` folder (symlinks and hard links
/// inside it written as copies of their targets, junk left out), and beside it a `Manifest.json` whose file selectors cover
/// exactly those files. The folder is checked with the
/// asset-pack rules before it appears; on any error it never does.
public enum ExportBackgroundAssets {
  /// What the asset pack's manifest says, and how the input is checked.
  public struct Options: Sendable {
    /// Nil: derived from the product identifier, each `.` made a `-` (App Store Connect
    /// refuses dots in an asset-pack ID): `com.example.book` becomes `com-example-book`.
    public var assetPackID: String?
    /// The manifest's form: 1.x (`directory` selectors, the default) or 2.x (`sourceRoot` `.`
    /// and a `fileSource`/`fileDestination` selector mapping `Contents` to `Contents`).
    public var manifestForm = AssetPackManifest.Form.v1
    /// When the system downloads the pack.
    public var policy: AssetPackManifest.Policy = .prefetch
    /// For `essential` and `prefetch`.
    public var installationEvents: [AssetPackManifest.InstallationEvent] = [.firstInstallation, .subsequentUpdate]
    /// The platforms the pack is for.
    public var platforms = ["iOS"]
    /// How the input is validated first.
    public var validation = ValidationOptions()
    /// What the package reader accepts.
    public var limits = ReaderLimits()
    /// Replace an existing folder at the destination (swapped atomically, the old one removed),
    /// or an existing archive when the destination is one.
    public var force = false
    /// How an Apple Archive destination (a name ending in `.aar`) is compressed: LZFSE, what
    /// Apple's `aa` uses by default.
    public var archiveCompression = ArchiveCompression.lzfse
    /// Threads that compress an archive's blocks (default: one per processor); the same bytes
    /// for any number.
    public var threads = Machine.processorCount

    /// How the entries of an exported `.aar` are stored.
    public enum ArchiveCompression: String, Sendable, CaseIterable {
      /// `pbze` blocks of LZFSE (pkgtool's own encoder).
      case lzfse
      /// `pbzz` blocks of zlib.
      case zlib
      /// `pbzx` blocks of LZMA (xz).
      case lzma
      /// Raw entries.
      case none
    }
    /// The defaults: prefetch at first installation and on updates, iOS.
    public init() {}
  }

  /// The steps of an export, in order; each reports its own progress (see
  /// ``run(source:to:options:progress:)``). The raw value names it for people.
  public enum Step: String, Sendable, CaseIterable {
    /// The package (or project) read, checked by its rules and written into a folder.
    case unpacking = "unpacking"
    /// The folder checked as an asset pack (its files hashed, for an archive).
    case checking = "checking the asset pack"
    /// The Apple Archive written, its blocks compressed.
    case writing = "writing the archive"
    /// The archive read back through the asset-pack rules.
    case readingBack = "reading the archive back"
  }

  /// True when `destination` names an Apple Archive (`.aar`, any case): the export then writes
  /// the asset pack as one archive instead of a folder.
  public static func writesArchive(_ destination: String) -> Bool {
    Paths.name(of: destination).lowercased().hasSuffix(".aar")
  }

  /// What an export did.
  public struct Result {
    /// The folder (or `.aar` archive) written; nil when a rule failed.
    public var output: String?
    /// For an archive: its size in bytes and SHA-256.
    public var archiveSize: UInt64?
    /// See ``archiveSize``.
    public var archiveSHA256: String?
    /// The package's (or project's) inspection.
    public var inspection: InspectionResult
    /// The exported folder's inspection under the asset-pack rules, when it got that far.
    public var assetPackInspection: InspectionResult?
    /// The manifest written.
    public var manifest: AssetPackManifest?
    /// Files exported.
    public var fileCount = 0
    /// Symlinks of the package (all inside Contents/, as unpack checked) written as copies of
    /// their target files: an asset pack carries no links.
    public var replacedSymlinks: [String] = []
    /// Hard links of the package (second names of a file) written as copies of their file.
    public var replacedHardLinks: [String] = []
    /// Junk (see the `junk-file` rule) of the package, left out of the asset pack.
    public var leftOutJunk: [String] = []
  }

  /// What ``replaceLinksWithCopies(in:under:written:limit:)`` did.
  struct LinkCopies {
    var symlinks: [String] = []
    var hardLinks: [String] = []
    var junk: [String] = []
  }

  /// Copies would take the content past the limit: nothing more is written.
  struct OverBudget: Error {
    /// The content's size with the copies made so far and the next one.
    var size: UInt64
  }

  /// Replaces each symlink and each hard link under `root/relative` (made by the safe unpack, so
  /// each resolves inside it) with a copy of the file it leads to, then removes junk; a link to a
  /// folder stays, for the asset-pack rules to refuse. Each copy is counted before it is made:
  /// with `written` bytes already there, the content may not pass `limit` (a small package of
  /// many links to one large file would otherwise write far more than `--max-size`); throws
  /// ``OverBudget``.
  static func replaceLinksWithCopies(in root: String, under relative: String, written: UInt64, limit: UInt64)
    throws -> LinkCopies
  {
    var symlinks: [String] = []
    var hardLinks: [String] = []
    let walk = DirectorySource(path: root + "/" + relative, skipJunk: true)
    try walk.forEachEntry { entry, _ in
      if entry.kind == .symlink { symlinks.append(entry.path) }
      if entry.kind == .hardLink { hardLinks.append(entry.path) }
    }
    var copies = LinkCopies()
    var total = written
    for (link, isHardLink) in symlinks.map({ ($0, false) }) + hardLinks.map({ ($0, true) }) {
      let full = root + "/" + relative + "/" + link
      guard Paths.isRegularFile(full, followingLinks: true) else { continue }
      let size: UInt64
      do { size = try FileDescriptor.open(regularFile: full).size() } catch { throw OperationError.wrap(error) }
      let (sum, overflow) = total.addingReportingOverflow(size)
      guard !overflow, sum <= limit else { throw OverBudget(size: overflow ? .max : sum) }
      total = sum
      // Written beside, then renamed over the name: the link (of either kind) becomes a file.
      do { try PendingFile.copy(full, over: full) } catch { throw OperationError.wrap(error) }
      if isHardLink {
        copies.hardLinks.append(relative + "/" + link)
      } else {
        copies.symlinks.append(relative + "/" + link)
      }
    }
    // Junk goes after the copies: a link to a junk file (`ds -> .DS_Store`) is a file of the
    // package, copied from it (removed first, the link was left dangling and the export refused).
    for junk in walk.skipped {
      let full = root + "/" + relative + "/" + junk
      do { try DirectoryHandle(path: Paths.parent(of: full)).removeTree(Paths.name(of: full)) } catch {
        throw OperationError.wrap(error)
      }
      copies.junk.append(relative + "/" + junk)
    }
    return copies
  }

  /// Refuses a destination that exists (unless `--force` replaces one of its kind) or lies
  /// inside the project `source` it is exported from.
  private static func checkDestination(_ destination: String, archive: Bool, source path: String, options: Options)
    throws
  {
    if archive, Paths.status(destination) != nil {
      guard options.force, Paths.isRegularFile(destination) else {
        throw OperationError(
          "'\(destination)' already exists",
          hint: options.force ? "--force replaces a file only" : "export to a new name, or pass --force to replace it",
          code: .outputExists)
      }
    } else if let existing = Paths.status(destination) {
      guard options.force, Paths.isDirectoryMode(existing.st_mode) else {
        throw OperationError(
          "'\(destination)' already exists",
          hint: options.force
            ? "--force replaces a folder only" : "export into a new folder, or pass --force to replace it",
          code: .outputExists)
      }
    }
    // The pack never lands inside the project it comes from: the next export would take it in.
    if Paths.isDirectory(path), Paths.isWithin(Paths.parent(of: destination), folder: path) {
      throw OperationError(
        "'\(destination)' is inside '\(path)', the project being exported",
        hint: "export beside the project, for example -o ../\(Paths.name(of: destination))")
    }
  }

  /// The package or content project at `path`, opened for the rules; refuses an asset-pack folder
  /// and a folder without `ContentInfo.plist`.
  private static func exportedSource(_ path: String, options: Options) throws -> EntrySource {
    let source: EntrySource
    do { source = try PackageOpener.open(.path(path), .inspection(options.limits)) } catch {
      throw OperationError.wrap(error)
    }
    guard source.format != .assetPack else {
      throw OperationError(
        "'\(path)' is already an asset-pack folder", hint: "pkgtool validate checks it", code: .inputUnsuitable)
    }
    if source.format == .directory && source.index?.isContentProject != true {
      throw OperationError(
        "'\(path)' is a folder without ContentInfo.plist",
        hint: "export a package, or a project made with pkgtool init", code: .inputUnsuitable)
    }
    return source
  }

  /// The manifest of the pack made from the content of `info`'s product.
  private static func manifest(for info: ContentInfo, options: Options) -> AssetPackManifest {
    let selectors: [AssetPackManifest.Selector] =
      options.manifestForm == .v2 ? [.copy(source: "Contents", destination: "Contents")] : [.directory("Contents")]
    return AssetPackManifest(
      assetPackID: options.assetPackID ?? AssetPackManifest.suggestedAssetPackID(from: info.productIdentifier),
      policy: options.policy, installationEvents: options.installationEvents, fileSelectors: selectors,
      platforms: options.platforms, form: options.manifestForm, sourceRoot: options.manifestForm == .v2 ? "." : nil)
  }

  /// Validates the package or project at `path`, then writes its content and a `Manifest.json` as an asset-pack folder at `destination` (whole or not at all).
  ///
  /// `progress`, when given, is asked for a handler as each ``Step`` starts (the steps of a
  /// folder export end with ``Step/checking``); each handler counts that step's bytes of
  /// content, with a total when it is known.
  public static func run(
    source path: String, to destination: String, options: Options, progress: ((Step) -> ProgressHandler?)? = nil
  ) throws -> Result {
    let parentPath = Paths.parent(of: destination)
    let name = Paths.name(of: destination)
    guard !name.isEmpty, name != ".", name != "..", name != "/" else {
      throw OperationError("'\(destination)' cannot be a destination", hint: "name a new folder, e.g. -o MyPack")
    }
    let archive = writesArchive(destination)
    try checkDestination(destination, archive: archive, source: path, options: options)
    let parent: DirectoryHandle
    do { parent = try DirectoryHandle(path: parentPath) } catch {
      throw OperationError(
        "cannot write '\(destination)': the folder '\(parentPath)' does not exist", hint: "create it first",
        code: .outputUnwritable)
    }
    if let id = options.assetPackID, let problem = AssetPackManifest.problem(withAssetPackID: id) {
      throw OperationError("--asset-pack-id: \(problem)", code: .invalidArgument)
    }
    let source = try exportedSource(path, options: options)
    var unpack = Unpack.Options()
    unpack.validation = options.validation
    unpack.limits = options.limits
    let staged = try Unpack.stage(
      source, in: parent, for: name, options: unpack, output: destination, progress: progress?(.unpacking))
    var result = Result(inspection: staged.inspection)
    guard let staging = staged.staging, let info = staged.inspection.contentInfo else { return result }
    defer { staging.discard() }
    let folder = staging.handle

    // Contents/ stays as it is, so the app finds each file at the same relative path as
    // before; the plist stays behind; the manifest goes beside Contents/ (it can never collide
    // with a content file, whatever its case).
    try folder.removeTree(ContentInfo.fileName)
    if !folder.exists("Contents") { try folder.createDirectory("Contents") }
    do {
      let copies = try replaceLinksWithCopies(
        in: parentPath + "/" + staging.name, under: "Contents", written: staged.inspection.contentSize,
        limit: options.validation.maxSize)
      result.replacedSymlinks = copies.symlinks
      result.replacedHardLinks = copies.hardLinks
      result.leftOutJunk = copies.junk
    } catch let over as OverBudget {
      result.inspection.findings.append(
        SizeLimitRule.finding(derivedSize: over.size, limit: options.validation.maxSize))
      return result
    }
    let manifest = manifest(for: info, options: options)
    try folder.createFile(AssetPackManifest.fileName).write(manifest.encoded)
    result.manifest = manifest

    // Checked as an asset pack, through the same rules `validate` runs on such a folder (the
    // files' SHA-256 taken on the way, for an archive's headers).
    var digests: [String: String] = [:]
    let check = try Validation.run(
      path: parentPath + "/" + staging.name, options: options.validation, limits: options.limits,
      progress: progress?(.checking), onFileDigest: archive ? { digests[$0] = $1 } : nil)
    result.assetPackInspection = check
    guard !check.failed(strict: options.validation.strict) else { return result }
    result.fileCount = check.fileCount - 1  // the manifest
    if archive {
      let written = try writeArchive(
        of: parentPath + "/" + staging.name, digests: digests, to: destination, expected: check, options: options,
        progress: progress)
      result.archiveSize = written.size
      result.archiveSHA256 = written.sha256
    } else {
      do { try staging.publish(as: name, replace: options.force) } catch { throw OperationError.wrap(error) }
    }
    result.output = destination
    return result
  }

  /// Writes the checked asset-pack folder at `folder` as an Apple Archive at `destination`
  /// (whole or not at all): its entries in ``DirectorySource``'s order (depth first, names
  /// sorted by their bytes), through an ``AppleArchiveSink``. Before it is put in place, the
  /// archive is read back through ``AppleArchiveSource`` and the asset-pack rules, and must show
  /// the same entries and bytes as the folder (`expected`). `progress` is asked for a handler
  /// for ``Step/writing`` and for ``Step/readingBack``.
  static func writeArchive(
    of folder: String, digests: [String: String], to destination: String, expected: InspectionResult,
    options: Options, progress: ((Step) -> ProgressHandler?)? = nil
  ) throws -> WrittenPackage {
    let compression: AppleArchiveCompression
    switch options.archiveCompression {
    case .lzfse: compression = .lzfse
    case .zlib: compression = .zlib
    case .lzma: compression = .lzma
    case .none: compression = .none
    }
    let sink: AppleArchiveSink
    do {
      sink = try AppleArchiveSink(
        path: destination, overwrite: options.force, compression: compression, threads: options.threads)
    } catch {
      throw OperationError.writing(destination, error)
    }
    defer { sink.discard() }
    var copier = EntryDataCopier(chunkSize: PackageInspector.chunkSize, maxSize: .max)
    let writing = progress?(.writing)
    do {
      try DirectorySource(path: folder, format: .assetPack).forEachEntry { entry, data in
        var entry = entry
        if entry.kind == .file, let digest = digests[entry.path] {
          entry.storage = PackageEntry.Storage(storedSize: entry.size, encoding: "none", checksum: "sha256:" + digest)
        }
        if let refusal = try sink.begin(entry) {
          throw OperationError("'\(entry.path.debugEscaped)' cannot go into the archive: \(refusal)")
        }
        if let data {
          let first = try copier.readFirst(data, declared: entry.size)
          try copier.copy(
            data, of: entry, initial: first, to: { try sink.write($0) },
            each: { _, produced in writing?(produced, expected.contentSize) })
        }
        try sink.end(entry)
      }
    } catch let error as OperationError {
      throw error
    } catch let error as SystemError {
      throw OperationError.writing(destination, error)
    } catch {
      throw OperationError(
        "the asset pack could not be written as '\(destination)': \(error); nothing was written",
        hint: "export it again; if it fails again, report it as a pkgtool bug", code: .outputUnwritable)
    }
    do { try sink.finishWriting() } catch { throw OperationError.writing(destination, error) }
    // Read back as any reader of the .aar will: the same rules, the same entries.
    // (The archive does not declare its total; the folder's is the same.)
    let reading = progress?(.readingBack).map { handler -> ProgressHandler in
      { done, total in handler(done, total ?? expected.contentSize) }
    }
    let back = try Validation.run(
      path: destination, file: sink.pendingFile, options: options.validation, limits: options.limits,
      progress: reading)
    guard !back.failed(strict: options.validation.strict), back.entryCount == expected.entryCount,
      back.fileCount == expected.fileCount, back.contentSize == expected.contentSize
    else {
      let why = back.findings.first.map { $0.message } ?? "its entries differ from the folder's"
      throw OperationError(
        "the archive written for '\(destination)' did not read back as the asset pack: \(why); nothing was written",
        hint: "report it as a pkgtool bug; exporting to a folder (no .aar) still works", code: .outputUnwritable)
    }
    do { return try sink.commit() } catch { throw OperationError.writing(destination, error) }
  }
}
