import SystemIO
import XAR

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// `build`: a content project or plain folder into a reproducible, rule-checked package.
public enum Build {
  /// What to write.
  public enum Format: String, CaseIterable, Sendable {
    /// A XAR package (`.pkg`), what App Store Connect takes.
    case xar
    /// The zip a client downloads and unpacks.
    case zip
  }

  /// What to build and where.
  public struct Options: Sendable {
    /// Where the package goes; nil: `<product id>-<version>.pkg` (or `.zip`) in `outputFolder`.
    public var output: String?
    /// Where the default-named package goes when `output` is nil.
    public var outputFolder = "."
    /// For a plain folder: the product. For a project: overrides the plist's.
    public var productIdentifier: String?
    /// For a plain folder: the version. For a project: overrides the plist's.
    public var contentVersion: String?
    /// XAR package or delivery zip.
    public var format: Format = .xar
    /// Patterns (gitignore syntax) of paths to leave out, after the folder's `.pkgtoolignore`
    /// (see ``ExclusionPatterns``); matched case-sensitively against the stored names.
    public var exclude: [String] = []
    /// How hard to deflate what is worth deflating.
    public var compression: CompressionLevel = .default
    /// Replace an existing package at the output path.
    public var force = false
    /// Check everything and say what would be written; write nothing.
    public var dryRun = false
    /// Keep every entry in the result (for listings); costs memory on huge trees.
    public var listEntries = false
    /// The size limit, the product ID to require, `--strict`.
    public var validation = ValidationOptions()
    /// Every time written, in seconds since 1970 (`SOURCE_DATE_EPOCH`); nil: one fixed,
    /// documented time (2000-01-01T00:00:00Z).
    public var sourceDateEpoch: Int64?
    /// Threads compressing files (XAR only). The package is the same for any value.
    public var jobs = Build.Options.defaultJobs

    /// One per core.
    public static var defaultJobs: Int { Machine.processorCount }

    /// The defaults: a XAR in the working folder, default compression, one job per core.
    public init() {}

    /// The seconds of `SOURCE_DATE_EPOCH` when it is set and valid.
    public static func sourceDateEpoch(fromEnvironment value: String?) throws -> Int64? {
      guard let value, !value.isEmpty else { return nil }
      guard let seconds = Int64(value), seconds >= 0 else {
        throw OperationError(
          "SOURCE_DATE_EPOCH='\(value)' is not a non-negative number of seconds",
          hint: "unset it or set it to, e.g., $(git log -1 --format=%ct)", code: .invalidArgument)
      }
      return seconds
    }
  }

  /// What a build did (or, with `dryRun` or findings, would have done).
  public struct Result {
    /// The package written; nil when nothing was written.
    public var output: String?
    /// Where it would go.
    public var plannedOutput: String
    /// The rules' findings over what was packaged.
    public var inspection: InspectionResult
    /// Every entry in the package, in order.
    public var entries: [PackageEntry]
    /// Paths left out: junk, what the exclusion patterns match (a folder stands for what it
    /// holds), the ignore file, and for projects anything beside ContentInfo.plist and Contents/.
    public var leftOut: [LeftOutPath]
    /// Files in the package.
    public var fileCount: Int
    /// The package file's size, when one was written.
    public var packageSize: UInt64?
    /// SHA-256 of the package file.
    public var sha256: String?
    /// Files stored as they are because they were already compressed.
    public var storedFiles: Int
    /// Files stored as they are because deflating them made them no smaller.
    public var storedUnshrunkFiles = 0
    /// Files stored as they are because a sample of their bytes (their first 16 KiB and 32 KiB
    /// from their middle) did not deflate to 98% of its size or less; only files of 256 KiB
    /// or more are sampled.
    public var storedIncompressibleFiles = 0
    /// Those files' bytes.
    public var storedIncompressibleBytes: UInt64 = 0
    /// Files of a zip that would have been stored but are deflated, because their bytes hold a
    /// zip signature (a nested zip, for one): a streaming reader finds the end of stored data
    /// by such a signature, since libarchive puts the sizes after the data.
    public var deflatedForSignatureFiles = 0
  }

  /// True when `path` is a regular file named `.pkg` that starts as a XAR does, or named `.zip`
  /// that starts as a zip does: what a previous build could have written there, and so safe to
  /// replace. (The bytes alone were not enough: a `.docx`, `.jar` or `.epub` is a zip too.)
  static func isPackageFile(_ path: String, status: stat) -> Bool {
    let lower = path.lowercased()
    guard status.st_mode & S_IFMT == S_IFREG, lower.hasSuffix(".pkg") || lower.hasSuffix(".zip"),
      let file = try? FileDescriptor.open(regularFile: path, followSymlink: false),
      let head = try? file.read(count: 4, at: 0)
    else { return false }
    if lower.hasSuffix(".pkg") { return head == Array("xar!".utf8) }
    return head == [0x50, 0x4B, 0x03, 0x04] || head == [0x50, 0x4B, 0x05, 0x06]
  }

  /// Why `path` cannot be built: it does not exist, or it is a file, said in the words of
  /// `package-form` when it is an archive (a tar is not a package and not a build input either:
  /// its unpacked folder is).
  static func notAFolder(_ path: String) -> OperationError {
    guard Paths.status(path) != nil else {
      return OperationError(
        "'\(path)' does not exist",
        hint: "pass a content project (ContentInfo.plist + Contents/) or a folder of content",
        code: .inputUnsuitable)
    }
    let head = (try? FileDescriptor.open(regularFile: path, followSymlink: true).read(count: 512, at: 0)) ?? []
    let forms = PackageOpener.sniff(head)
    if forms.contains(.tar) {
      return OperationError(
        "'\(path)' is a tar archive: a tar is not a package, and build reads a folder, not an archive",
        hint:
          "unpack it into a folder first, then build that: mkdir MyBook && tar -xf '\(path)' -C MyBook && pkgtool build MyBook",
        code: .inputUnsuitable)
    }
    if forms.first == .zip {
      return OperationError(
        "'\(path)' is a zip: build reads a content project's folder, not an archive",
        hint:
          "if it is a zipped project folder, build the folder it holds: unzip '\(path)' && pkgtool build FOLDER; if it is a package, check it with pkgtool validate '\(path)'",
        code: .inputUnsuitable)
    }
    if let form = forms.first {
      return OperationError(
        "'\(path)' is a \(form.displayName), already built: build reads a content project's folder",
        hint: "check it with pkgtool validate '\(path)', or unpack it with pkgtool unpack '\(path)' -o FOLDER",
        code: .inputUnsuitable)
    }
    return OperationError(
      "'\(path)' is not a folder",
      hint: "pass a content project (ContentInfo.plist + Contents/) or a folder of content",
      code: .inputUnsuitable)
  }

  /// Builds `directory`. Returns findings in the result (nothing written when any is an error);
  /// throws ``OperationError`` when it cannot work at all.
  public static func run(directory: String, options: Options, progress: ProgressHandler? = nil) throws -> Result {
    guard Paths.isDirectory(directory) else { throw notAFolder(directory) }
    let source = try ProjectSource(
      directory: directory, productIdentifier: options.productIdentifier, contentVersion: options.contentVersion,
      exclude: options.exclude)
    let version = source.contentInfo.contentVersion
    let product = source.contentInfo.productIdentifier
    let ext = options.format == .xar ? "pkg" : "zip"
    let output =
      options.output ?? (options.outputFolder == "." ? "" : options.outputFolder + "/") + "\(product)-\(version).\(ext)"
    // A package written into what is packed would be packed by the next build.
    let contentRoot = ProjectSource.isProject(directory) ? directory + "/Contents" : directory
    if Paths.isWithin(Paths.parent(of: output), folder: contentRoot) {
      throw OperationError(
        "'\(output)' is inside '\(contentRoot)', the content being packaged: the next build would pack it",
        hint: "write the package outside it, for example -o ../\(Paths.name(of: output)) or into a dist/ folder")
    }
    // The package never packs itself (or its temporary) when it is written inside the folder.
    if let folder = Paths.identity(of: Paths.parent(of: output)) {
      source.excludedOutput = (folder.device, folder.inode, Paths.name(of: output))
    }
    let package = options.dryRun ? nil : try sink(for: output, options: options)
    let inspector = PackageInspector(
      context: RuleContext(
        options: options.validation, packageFileName: options.format == .xar ? Paths.name(of: output) : nil))
    inspector.recordEntries = options.listEntries || options.dryRun
    inspector.progress = progress
    var inspection: InspectionResult
    do {
      inspection = try inspector.run(source, into: package ?? NullSink())
    } catch {
      package?.discard()
      throw OperationError.writing(output, error)
    }
    let result = Result(
      output: nil, plannedOutput: output, inspection: inspection, entries: inspection.entries,
      leftOut: source.leftOut, fileCount: inspection.fileCount,
      packageSize: nil, sha256: nil, storedFiles: package?.storedCount ?? 0)
    guard let package, !inspection.failed(strict: options.validation.strict) else {
      package?.discard()
      return result
    }
    return try commit(package, as: output, result, options: options)
  }

  /// The sink that writes the package at `output`, once the place is checked: rebuilding over
  /// the package a previous run wrote is the normal case in a pipeline (the new one is renamed
  /// over it whole); anything else there is kept unless --force.
  private static func sink(for output: String, options: Options) throws -> PackageSink {
    var replacing = false
    if let existing = Paths.status(output) {
      guard options.force || Build.isPackageFile(output, status: existing) else {
        throw OperationError(
          "'\(output)' already exists and is not a package", hint: "pass --force to replace it, or -o another path",
          code: .outputExists)
      }
      replacing = true
    }
    let parent = Paths.parent(of: output)
    guard Paths.isDirectory(parent) else {
      throw OperationError(
        "cannot write '\(output)': the folder '\(parent)' does not exist", hint: "create it first",
        code: .outputUnwritable)
    }
    // Temporaries a killed build left beside this output.
    if let folder = try? DirectoryHandle(path: parent) {
      PendingFolder.removeStale(in: folder, for: Paths.name(of: output))
    }
    let time = options.sourceDateEpoch.map { XARTimestamp(secondsSinceEpoch: $0) } ?? XARWriter.defaultTimestamp
    do {
      switch options.format {
      case .xar:
        return try XARSink(
          path: output, overwrite: options.force || replacing, mtime: time, compression: options.compression,
          threads: options.jobs
        )
      case .zip:
        return try ZipSink(
          path: output, overwrite: options.force || replacing, mtime: time, compression: options.compression)
      }
    } catch {
      throw OperationError.wrap(error)
    }
  }

  /// Puts the package written in place, within the size limit: `result` with what was written,
  /// or with a `size-limit` finding when the package came out too large.
  private static func commit(_ package: PackageSink, as output: String, _ result: Result, options: Options) throws
    -> Result
  {
    var result = result
    let limit = options.validation.maxSize
    var tooLarge: UInt64?
    let check: (UInt64) throws -> Void = { size in
      if size > limit {
        tooLarge = size
        throw OperationError("package too large")
      }
    }
    let written: WrittenPackage
    do {
      written = try package.commit(checkingSize: check)
    } catch {
      package.discard()
      if let size = tooLarge {
        result.inspection.findings.append(SizeLimitRule.finding(plannedPackageSize: size, limit: limit))
        return result
      }
      throw OperationError.writing(output, error)
    }
    result.output = output
    result.storedUnshrunkFiles = package.unshrunkCount
    (result.storedIncompressibleFiles, result.storedIncompressibleBytes) = package.storedBySample
    result.deflatedForSignatureFiles = package.deflatedForSignature
    result.packageSize = written.size
    result.sha256 = written.sha256
    return result
  }

  /// SHA-256 of a whole file, hex: ``PackageDigest/sha256(of:)``, kept under this name for the
  /// tests that compare against it.
  package static func sha256(of file: FileDescriptor) throws -> String { try PackageDigest.sha256(of: file) }
}
