import SystemIO
import XAR

/// `unpack`: what a client does with a download. Every rule runs while extracting into a
/// private staging folder beside the destination; on any error finding the staging folder is
/// removed and the destination never appears (or, with `force`, stays as it was).
public enum Unpack {
  /// How to unpack.
  public struct Options: Sendable {
    /// Replace an existing destination (atomically; kept intact on failure).
    public var force = false
    /// How the package is validated while it is read.
    public var validation = ValidationOptions()
    /// Threads writing files. One by default: on ext4, creating files from several threads
    /// contends in the kernel and measured slower (docs/performance.md).
    public var threads = 1
    /// Bounds on what the reader accepts.
    public var limits = ReaderLimits()
    /// Inspect a broken download: extract every entry no rule found an error in, even when the
    /// package as a whole fails (layout, content-info, no-executable, size, a damaged tail).
    /// Entries with an error are skipped and listed; the sink still refuses anything unsafe
    /// (paths, symlinks, special files) on its own. The command still exits 1.
    public var keepGoing = false
    /// A catalog already verified with the publisher's key: the package must be one of its
    /// entries, byte for byte (size, SHA-256, product, version), or nothing is unpacked.
    public var catalog: Catalog?
    /// The name messages give the package when the path is a private copy: the URL it was
    /// downloaded from (never the temporary's path).
    public var displayName: String?
    /// Read a plain XAR while its TOC is parsed (``StreamingXARPackageSource``); off, it is
    /// parsed whole first. Same verdict and files either way (tests compare them).
    package var whileParsing = true
    /// The defaults: a new destination, one writer thread.
    public init() {}

    /// How unpack reads a package. A broken download is opened even when it was cut off
    /// (`keepGoing`): the entries before the cut are read, those past it listed. Otherwise a
    /// plain XAR is read while its TOC is parsed: the files of a package of many small ones are
    /// created while the parser reads on, and the whole TOC's checks settle the verdict at the
    /// end. This thread writes every file: the workers decode large ones too.
    var readPolicy: ReadPolicy {
      var policy = ReadPolicy.rules(limits)
      policy.streaming = whileParsing
      policy.keepGoing = keepGoing
      policy.decodeAheadUpTo = .max
      return policy
    }
  }

  /// What an unpack did.
  public struct Result {
    /// The rules' findings over the package.
    public var inspection: InspectionResult
    /// The destination, when it was written.
    public var output: String?
    /// Files written.
    public var fileCount: Int
    /// The bytes of the files written: the package's content size, unless `keepGoing` skipped
    /// some files.
    public var byteCount: UInt64 = 0
  }

  /// Unpacks the package at `package` into the folder `destination`.
  public static func run(package: String, destination: String, options: Options, progress: ProgressHandler? = nil)
    throws -> Result
  {
    try run(package: package, file: nil, destination: destination, options: options, progress: progress)
  }

  /// As ``run(package:destination:options:progress:)``, for the package already open as `file`
  /// (standard input, spooled: `package` then only names it).
  package static func run(
    package: String, file given: FileDescriptor?, destination: String, options: Options,
    progress: ProgressHandler? = nil
  ) throws -> Result {
    let parentPath = Paths.parent(of: destination)
    let name = Paths.name(of: destination)
    guard !name.isEmpty, name != ".", name != "..", name != "/" else {
      throw OperationError("'\(destination)' cannot be a destination", hint: "name a new folder, e.g. -o unpacked")
    }
    if Paths.status(destination) != nil && !options.force {
      throw OperationError(
        "'\(destination)' already exists", hint: "pass --force to replace it, or -o a new folder", code: .outputExists)
    }
    if given == nil && Paths.isDirectory(package) {
      throw OperationError(
        "'\(package)' is a folder, not a package", hint: "unpack takes a .pkg, a flat package or a zip",
        code: .inputUnsuitable)
    }
    // Opened once: the catalog's hash, the index and every file's data are read through this
    // one descriptor, so a file renamed over the path meanwhile is never read.
    let file: FileDescriptor
    do { file = try given ?? FileDescriptor.open(regularFile: package) } catch { throw OperationError.wrap(error) }
    let stamp = try file.changeStamp()
    if let catalog = options.catalog {
      _ = try catalog.check(file: file, name: options.displayName)
    }
    /// Publishes what was staged as the destination, or reports why nothing was.
    func published(_ staged: Staged, discarding: Bool = false) throws -> Result {
      guard let staging = staged.staging, !discarding else {
        staged.staging?.discard()
        return Result(inspection: staged.inspection, output: nil, fileCount: 0, byteCount: 0)
      }
      // Written to while it was read: what was hashed may not be what was unpacked.
      guard (try? file.changeStamp()) == stamp else {
        staging.discard()
        throw OperationError(
          "'\(package)' changed while it was being unpacked; nothing was written", hint: "unpack it again",
          code: .inputChanged)
      }
      do {
        try staging.publish(as: name, replace: options.force)
      } catch {
        staging.discard()
        throw OperationError.wrap(error)
      }
      return Result(
        inspection: staged.inspection, output: destination, fileCount: staged.fileCount, byteCount: staged.byteCount)
    }
    let source: EntrySource
    do { source = try PackageOpener.open(.file(file), options.readPolicy) } catch { throw OperationError.wrap(error) }
    if source.format == .directory {
      throw OperationError(
        "'\(package)' is a folder, not a package", hint: "unpack takes a .pkg, a flat package or a zip",
        code: .inputUnsuitable)
    }
    if Paths.status(destination) != nil && !options.force {
      throw OperationError(
        "'\(destination)' already exists", hint: "pass --force to replace it, or -o a new folder", code: .outputExists)
    }
    let parent: DirectoryHandle
    do {
      parent = try DirectoryHandle(path: parentPath)
    } catch {
      throw OperationError(
        "cannot unpack into '\(destination)': the folder '\(parentPath)' does not exist or cannot be opened",
        hint: "create it first", code: .outputUnwritable)
    }
    let staged = try stage(source, in: parent, for: name, options: options, output: destination, progress: progress)
    // --keep-going on a file whose index could not be read (a zip cut off before its central
    // directory): nothing was read, so no empty folder is left to look at.
    let nothingRead = staged.inspection.entryCount == 0 && staged.inspection.integrityFailed
    return try published(staged, discarding: source.isUnreadable || nothingRead)
  }

  /// What ``stage(_:in:for:options:output:progress:)`` made: the report, and the staging folder
  /// holding the unpacked content when every rule passed (nil otherwise; nothing is left then).
  struct Staged {
    var inspection: InspectionResult
    var staging: PendingFolder?
    var fileCount: Int
    var byteCount: UInt64 = 0
  }

  /// Runs every rule over `source` while extracting it into a new staging folder in `parent`
  /// (named after `name`). Everything is created relative to `parent`'s handle; nothing is
  /// published. `output` names the final destination in error messages.
  static func stage(
    _ source: EntrySource, in parent: DirectoryHandle, for name: String, options: Options, output: String,
    progress: ProgressHandler? = nil
  ) throws -> Staged {
    let staging: PendingFolder
    do {
      staging = try PendingFolder(in: parent, for: name, purpose: "unpack")
    } catch {
      throw OperationError.wrap(error)
    }
    // Folders are made ahead of the files, as libarchive's order makes bsdtar do: see
    // FolderReserve for why (ext4 re-filling the block groups a deleted output just freed).
    let reserve = FolderReserve(beside: name, in: parent)
    defer { reserve.discard() }
    let sink = SafeDirectorySink(root: staging.handle, threads: options.threads, reserve: reserve)
    let context = RuleContext(options: options.validation, packageFileName: Paths.name(of: source.location))
    let inspector = PackageInspector(context: context)
    inspector.progress = progress
    inspector.skipEntriesWithErrors = options.keepGoing
    var inspection: InspectionResult
    do {
      inspection = try inspector.run(source, into: sink)
      if options.keepGoing || !inspection.failed(strict: options.validation.strict) {
        if options.keepGoing {
          // A link to an entry that was skipped would dangle here although the package holds
          // its target: it is skipped too, saying why.
          let skipped = Set(inspection.skippedEntries.map(\.path))
          for link in sink.forgetSymlinks(leadingTo: skipped) {
            inspection.skippedEntries.append(
              SkippedEntry(path: link.path, reason: "its target '\(link.target)' was skipped; the link was not created")
            )
          }
        }
        for path in try sink.commitSymlinks() {
          if !inspection.findings.contains(where: {
            $0.ruleID == NoExternalSymlinkRule.description.id && $0.path == path
          }) {
            inspection.findings.append(NoExternalSymlinkRule.finding(forRefusedSymlink: path))
          }
          if options.keepGoing {
            inspection.skippedEntries.append(
              SkippedEntry(path: path, reason: "the symlink does not stay inside Contents/; it was not created"))
          }
        }
      }
      try sink.waitForWrites()
    } catch {
      try? sink.waitForWrites()
      staging.discard()
      throw OperationError.writing(output, error)
    }
    guard options.keepGoing || !inspection.failed(strict: options.validation.strict) else {
      staging.discard()
      return Staged(inspection: inspection, staging: nil, fileCount: 0)
    }
    return Staged(inspection: inspection, staging: staging, fileCount: sink.fileCount, byteCount: sink.byteCount)
  }
}
