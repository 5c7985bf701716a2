import SystemIO
import XAR

/// The version of pkgtool, written into reports.
public enum PkgTool {
  /// This build's version.
  public static let version = "0.1.0"
}

/// `validate`: every rule over a package or folder, nothing written.
public enum Validation {
  /// Validates the package file or content folder at `path`.
  ///
  /// - Parameters:
  ///   - path: a package file (XAR, flat package, delivery zip), a content project or a folder.
  ///   - options: the size limit, the product ID the package must carry, `--strict`.
  ///   - against: a previous package (or folder) of the same product; its version must be lower.
  ///   - limits: what the reader accepts before it refuses the package.
  ///   - rules: the rules to run, in order: ``RuleCatalog/all`` by default; add your own
  ///     ``Rule`` types to check house conventions too.
  ///   - recordEntries: keep every entry in the result (``InspectionResult/entries``).
  ///   - progress: called with the bytes read so far and the total when known (``ProgressHandler``).
  ///   - onFileDigest: called with each file's path and the SHA-256 of its content.
  ///   - exclude: for a content project, patterns of paths `build --exclude` would leave out
  ///     (after its `.pkgtoolignore`); an error for any other input.
  /// - Returns: the findings and what was seen; a damaged package is a finding, not an error.
  /// - Throws: ``OperationError`` when `path` cannot be read at all.
  public static func run(
    path: String, options: ValidationOptions, against: String? = nil, limits: ReaderLimits = ReaderLimits(),
    rules: [any Rule.Type] = RuleCatalog.all, recordEntries: Bool = false, progress: ProgressHandler? = nil,
    onFileDigest: ((String, String) -> Void)? = nil, exclude: [String] = []
  ) throws -> InspectionResult {
    if !exclude.isEmpty {
      // Exclusions shape what build packs from a project; a package already holds what it holds.
      guard Paths.isDirectory(path) && ProjectSource.isProject(path) else {
        throw OperationError(
          "--exclude: '\(path)' is \(Paths.isDirectory(path) ? "a folder without ContentInfo.plist" : "a package"); exclusions apply to content projects only",
          hint: "leave --exclude out to validate it as it is", code: .invalidArgument)
      }
    }
    // A package file is opened once, and every read goes through that descriptor.
    let file = Paths.isDirectory(path) ? nil : try? FileDescriptor.open(regularFile: path)
    return try run(
      path: path, file: file, options: options, against: against, limits: limits, rules: rules,
      recordEntries: recordEntries, progress: progress, onFileDigest: onFileDigest, exclude: exclude)
  }

  /// As ``run(path:options:against:limits:rules:recordEntries:progress:onFileDigest:exclude:)``, for the
  /// package file already open as `file` (nil: `path` is opened, e.g. a folder), so that an
  /// operation can validate and hash the very same file.
  package static func run(
    path: String, file: FileDescriptor?, options: ValidationOptions, against: String? = nil,
    limits: ReaderLimits = ReaderLimits(), rules: [any Rule.Type] = RuleCatalog.all, recordEntries: Bool = false,
    progress: ProgressHandler? = nil, onFileDigest: ((String, String) -> Void)? = nil, exclude: [String] = []
  ) throws -> InspectionResult {
    let previous = try against.map { try previousContentInfo(at: $0) }
    func inspector(for source: EntrySource) -> PackageInspector {
      let context = RuleContext(
        options: options, packageFileName: source.format == .directory ? nil : Paths.name(of: path), previous: previous)
      let inspector = PackageInspector(context: context, rules: rules)
      inspector.recordEntries = recordEntries
      inspector.progress = progress
      if let onFileDigest { inspector.onFileDigest = { entry, digest in onFileDigest(entry.path, digest) } }
      return inspector
    }
    if !exclude.isEmpty {
      let project = try ProjectSource(directory: path, exclude: exclude)
      return try inspector(for: project).run(project)
    }
    // A plain XAR may be read while its TOC is parsed, and the whole TOC's checks settle the
    // verdict at the end; digests reported as they come cannot be taken back (the opener then
    // reads the TOC whole first). Validate only checks each file: large files up to a bound are
    // decoded by the workers too (docs/performance.md), and its work per file is light.
    var policy = ReadPolicy.rules(limits)
    policy.digestsInEntryOrder = onFileDigest != nil
    policy.decodeAheadUpTo = ReadPolicy.partsLimitForChecking
    policy.callerWorkIsLight = true
    let source: EntrySource
    do {
      source = try PackageOpener.open(file.map(PackageInput.file) ?? .path(path), policy)
    } catch {
      throw OperationError.wrap(error)
    }
    return try inspector(for: source).run(source)
  }

  /// The `ContentInfo` of the package or folder at `path`, for `--against`.
  public static func previousContentInfo(at path: String) throws -> ContentInfo {
    do {
      guard let bytes = try ContentInfoLocator.bytes(in: try PackageOpener.open(.path(path))) else {
        throw OperationError(
          "--against: '\(path)' has no ContentInfo.plist",
          hint: "--against needs the previous package of the same product", code: .invalidArgument)
      }
      return try ContentInfo(decoding: bytes)
    } catch let error as ContentInfoError {
      throw OperationError(
        "--against: the ContentInfo.plist of '\(path)' is not valid: \(error)", code: .invalidArgument)
    } catch let error as OperationError where error.message.hasPrefix("--against") {
      throw error
    } catch {
      // Every error about the previous package names the option it came from.
      var wrapped = OperationError.wrap(error)
      wrapped.message = "--against: " + wrapped.message
      throw wrapped
    }
  }
}

/// Finds `ContentInfo.plist` in a source without reading the rest.
package enum ContentInfoLocator {
  /// The plist's bytes, or nil when the source has none at its root.
  package static func bytes(in source: EntrySource) throws -> [UInt8]? {
    if let fromIndex = source.index?.contentInfo {
      return try fromIndex(UInt64(PropertyList.maxEncodedSize))
    }
    let reader = try source.entries()
    while let (entry, data) = try reader.next() {
      guard entry.path == ContentInfo.fileName, entry.kind == .file, let data else { continue }
      guard entry.size <= UInt64(PropertyList.maxEncodedSize) else {
        throw OperationError("ContentInfo.plist is too large")
      }
      var bytes: [UInt8] = []
      var buffer = [UInt8](repeating: 0, count: 64 * 1024)
      while true {
        let n = try buffer.withUnsafeMutableBytes { try data.read(into: $0) }
        if n == 0 { break }
        bytes += buffer[..<n]
        guard bytes.count <= PropertyList.maxEncodedSize else {
          throw OperationError("ContentInfo.plist is too large")
        }
      }
      return bytes
    }
    return nil
  }
}
