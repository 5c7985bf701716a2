import SystemIO

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// The package view of a folder: `ContentInfo.plist` (read, overridden or generated) and
/// `Contents/`, junk left out, hard links as plain files, modes normalized (0644 files,
/// 0755 folders), never following symlinks. Entries come sorted by name bytes, so the order
/// never depends on the file system.
///
/// `validate`, `info` and `diff` read a project folder through the same view, so a project and
/// the package built from it get the same verdict.
package final class ProjectSource: EntrySource {
  package let format = PackageFormat.directory
  package let location: String
  package let packageSize: UInt64? = nil
  /// The product and version the package gets.
  package let contentInfo: ContentInfo
  /// The plist bytes that go into the package.
  let plistBytes: [UInt8]
  /// True for a content project; false for a plain folder (everything goes under Contents/).
  package let isProject: Bool
  /// What `build` leaves out, known once the walk is over.
  package private(set) var leftOut: [LeftOutPath] = []

  package var index: PackageIndex? {
    var index = PackageIndex()
    index.isContentProject = true
    index.leftOut = leftOut
    index.expectedDataSize = { self.expectedDataSize }
    return index
  }
  /// The output package, left out of the walk when it is written inside the folder.
  var excludedOutput: (device: UInt64, inode: UInt64, name: String)?
  /// The folder's `.pkgtoolignore` (when it has one), then the `--exclude` patterns.
  package private(set) var exclusions = ExclusionPatterns()

  /// True when `directory` is a content project: its `ContentInfo.plist` is a regular file.
  package static func isProject(_ directory: String) -> Bool {
    Paths.isRegularFile(directory + "/" + ContentInfo.fileName)
  }

  /// - Parameters:
  ///   - productIdentifier: for a plain folder, the product; for a project, overrides the plist's.
  ///   - contentVersion: for a plain folder, the version; for a project, overrides the plist's.
  ///   - exclude: patterns (gitignore syntax) of paths to leave out, after the folder's own
  ///     `.pkgtoolignore` (so they win over it); see ``ExclusionPatterns``.
  package init(
    directory: String, productIdentifier: String? = nil, contentVersion: String? = nil, exclude: [String] = []
  ) throws {
    let options = (productIdentifier: productIdentifier, contentVersion: contentVersion)
    location = directory
    let root = try DirectoryHandle(path: directory)
    isProject = root.exists(ContentInfo.fileName)
    exclusions = try ProjectSource.exclusions(in: root, directory: directory, extra: exclude, isProject: isProject)
    if isProject {
      let file: FileDescriptor
      do { file = try root.openFile(ContentInfo.fileName) } catch { throw OperationError.wrap(error) }
      let bytes = try file.read(count: PropertyList.maxEncodedSize + 1, at: 0)
      var info: ContentInfo
      do {
        info = try ContentInfo(decoding: bytes)
      } catch {
        // The content-info rule reports every problem; a name is still needed for the output.
        contentInfo = ContentInfo(
          productIdentifier: options.productIdentifier ?? "invalid",
          contentVersion: options.contentVersion.flatMap(ContentVersion.init) ?? ContentVersion(components: [0]))
        plistBytes = bytes
        return
      }
      var changed = false
      if let product = options.productIdentifier, product != info.productIdentifier {
        info.productIdentifier = product
        changed = true
      }
      if let text = options.contentVersion {
        guard let version = ContentVersion(text) else {
          throw OperationError("--content-version: \(ContentVersion.problem(with: text)!)")
        }
        info.contentVersion = version
        changed = true
      }
      contentInfo = info
      plistBytes = changed ? info.encoded() : bytes
    } else {
      guard let product = options.productIdentifier, let versionText = options.contentVersion else {
        throw OperationError(
          "'\(directory)' has no ContentInfo.plist",
          hint: "pass --product-id and --content-version to package a plain folder, or run `pkgtool init`")
      }
      if let problem = ProductIdentifier.problem(with: product) { throw OperationError("--product-id: \(problem)") }
      guard let version = ContentVersion(versionText) else {
        throw OperationError("--content-version: \(ContentVersion.problem(with: versionText)!)")
      }
      contentInfo = ContentInfo(productIdentifier: product, contentVersion: version)
      plistBytes = contentInfo.encoded()
    }
  }

  /// The patterns of `root`'s `.pkgtoolignore` and then `extra`; refuses a pattern that cannot
  /// be used, an ignore file that is not a readable regular file, and patterns that would leave
  /// out `ContentInfo.plist` or `Contents/` of a project.
  static func exclusions(in root: DirectoryHandle, directory: String, extra: [String], isProject: Bool) throws
    -> ExclusionPatterns
  {
    var patterns = ExclusionPatterns()
    let fileName = ExclusionPatterns.fileName
    let shown = directory.hasSuffix("/") ? directory + fileName : directory + "/" + fileName
    do {
      if root.exists(fileName) {
        let info = try root.status(fileName)
        guard info.st_mode & S_IFMT == S_IFREG else {
          throw OperationError(
            "'\(shown)' is not a regular file", hint: "make \(fileName) a plain text file of patterns, or remove it")
        }
        guard info.st_size <= ExclusionPatterns.maxFileSize else {
          throw OperationError(
            "'\(shown)' is larger than \(ExclusionPatterns.maxFileSize / 1024) KiB",
            hint: "an ignore file holds patterns, one a line")
        }
        let bytes = try root.openFile(fileName).read(count: ExclusionPatterns.maxFileSize + 1, at: 0)
        try patterns.add(fileBytes: bytes, origin: "'\(shown)'")
      }
      for pattern in extra { try patterns.add(pattern, origin: "--exclude") }
    } catch let error as ExclusionPatterns.PatternError {
      throw OperationError("\(error)", hint: "see `pkgtool build --help` for the pattern syntax (gitignore's)")
    } catch let error as OperationError {
      throw error
    } catch {
      throw OperationError.wrap(error)
    }
    if isProject {
      for (path, isDirectory) in [(ContentInfo.fileName, false), ("Contents", true)] {
        guard let pattern = patterns.decidingPattern(for: path, isDirectory: isDirectory), !pattern.negated else {
          continue
        }
        throw OperationError(
          "\(pattern.origin): the pattern '\(pattern.text)' would leave out \(path)\(isDirectory ? "/" : ""), which every package needs",
          hint: isDirectory
            ? "exclude paths inside it instead, such as Contents/drafts/"
            : "anchor the pattern under Contents/ (e.g. Contents/**/*.plist), or add !/\(path) after it")
      }
    }
    return patterns
  }

  package func entries() throws -> PackageReader {
    leftOut = []
    return Entries(self)
  }

  /// The plist, then `Contents` and the walk of the content folder under it; what was left out
  /// is known once the walk is over.
  private final class Entries: PackageReader {
    private let source: ProjectSource
    private var started = false
    private var walker: DirectorySource?
    private var walk: PackageReader?
    private var ignoreFile: String?
    private var ended = false

    init(_ source: ProjectSource) { self.source = source }

    func next() throws -> (entry: PackageEntry, data: EntryData?)? {
      if !started {
        started = true
        return (
          PackageEntry(path: ContentInfo.fileName, kind: .file, mode: 0o644, size: UInt64(source.plistBytes.count)),
          MemoryBytes(source.plistBytes)
        )
      }
      guard !ended else { return nil }
      guard let walk else { return try startWalk() }
      guard let (entry, data) = try walk.next() else {
        ended = true
        let prefix = source.isProject ? "Contents/" : ""
        source.leftOut += ignoreFile.map { [LeftOutPath(path: $0, reason: .ignoreFile)] } ?? []
        source.leftOut += (walker?.excluded ?? []).map { LeftOutPath(path: prefix + $0, reason: .excluded) }
        source.leftOut += (walker?.skipped ?? []).map { LeftOutPath(path: prefix + $0, reason: .junk) }
        return nil
      }
      var e = entry
      e.path = "Contents/" + entry.path
      switch e.kind {
      case .file: e.mode = 0o644
      case .directory, .symlink: e.mode = 0o755
      default: break  // special files keep their kind and mode: the rules refuse them
      }
      return (e, data)
    }

    /// Lists what the project's root holds besides the content, and gives `Contents`.
    private func startWalk() throws -> (entry: PackageEntry, data: EntryData?)? {
      let location = source.location
      let contentRoot = source.isProject ? location + "/Contents" : location
      if source.isProject {
        let root = try DirectoryHandle(path: location)
        // The package being written at the root (`-o P/x.pkg`) and its temporaries are neither
        // content nor something the user left there: they are not listed (a rebuild warned of
        // its own output, and a build of its own hidden heap file).
        var here = stat()
        let output = source.excludedOutput.flatMap { out in
          fstat(root.fd, &here) == 0 && UInt64(here.st_dev) == out.device && UInt64(here.st_ino) == out.inode
            ? out.name : nil
        }
        for (name, _) in try root.list() where name != ContentInfo.fileName && name != "Contents" {
          if let output, name == output || name.hasPrefix(TemporaryName.prefix(of: output)) { continue }
          source.leftOut.append(LeftOutPath(path: name, reason: source.rootReason(name, in: root)))
        }
        ended = true
        guard root.exists("Contents") else { return nil }  // the layout rule reports it
        let info = try root.status("Contents")
        guard Paths.isDirectoryMode(info.st_mode) else {
          return (PackageEntry(path: "Contents", kind: .file, mode: 0o644), nil)
        }
        ended = false
      }
      let walker = DirectorySource(path: contentRoot, skipJunk: true, hardLinksAsFiles: true)
      walker.excludedOutput = source.excludedOutput
      walker.exclusions = source.exclusions
      walker.exclusionPrefix = source.isProject ? "Contents/" : ""
      // A plain folder's root is its content: its ignore file is the one name the walk skips.
      if !source.isProject, let root = try? DirectoryHandle(path: location), root.exists(ExclusionPatterns.fileName) {
        ignoreFile = ExclusionPatterns.fileName
        walker.skippedRootName = ExclusionPatterns.fileName
      }
      self.walker = walker
      walk = try walker.entries()
      return (PackageEntry(path: "Contents", kind: .directory, mode: 0o755), nil)
    }
  }

  /// Why `name`, at a project's root beside ContentInfo.plist and Contents/, is left out.
  fileprivate func rootReason(_ name: String, in root: DirectoryHandle) -> LeftOutPath.Reason {
    if name == ExclusionPatterns.fileName { return .ignoreFile }
    if !exclusions.isEmpty {
      let isDirectory = (try? root.status(name)).map { $0.st_mode & S_IFMT == S_IFDIR } ?? false
      if exclusions.excludes(name, isDirectory: isDirectory) { return .excluded }
    }
    return JunkFileRule.isJunk(Substring(name)) ? .junk : .outsideContent
  }
}
