import SystemIO
import XAR

/// `info`: what a package is and holds.
public enum PackageInfo {
  /// One entry as `info --files` lists it.
  public struct FileRow: Codable, Equatable, Sendable {
    /// The entry's path.
    public var path: String
    /// What it is (`file`, `directory`, `symlink`, …).
    public var kind: String
    /// Its size unpacked.
    public var size: UInt64
    /// Its size in the archive, when the format says.
    public var storedSize: UInt64?
    /// How its data is stored (`gzip`, `none`, …), when the format says.
    public var encoding: String?
    /// Its permission bits, in octal.
    public var mode: String
    /// SHA-256 of the content (the same in every format), for files.
    public var sha256: String?
    /// A symlink's target or a hard link's file.
    public var linkTarget: String?
  }

  /// What `info` reports about a package.
  public struct Summary: Encodable {
    /// The package's path.
    public var path: String
    /// Its format (`xar`, `flat-package`, `zip`, …).
    public var format: String
    /// The product, when ContentInfo.plist could be read.
    public var productIdentifier: String?
    /// The version, when ContentInfo.plist could be read.
    public var contentVersion: String?
    /// An asset pack's ID (a folder or an `.aar`), as its `Manifest.json` declares it.
    public var assetPackID: String?
    /// Entries of every kind.
    public var entryCount: Int
    /// Files.
    public var fileCount: Int
    /// The sum of file sizes.
    public var contentSize: UInt64
    /// The package file's size.
    public var packageSize: UInt64?
    /// The bytes the files take in the package (compressed or stored), for formats that say.
    public var storedSize: UInt64?
    /// ``storedSize`` as a percentage of ``contentSize``: how much compression saved.
    public var storedPercent: Double?
    /// Package bytes that are not file data: header, table of contents, per-entry headers.
    public var overheadSize: UInt64?
    /// How the format checks its data: `sha1`, `crc32`, `none`.
    public var checksumStyle: String
    /// The SHA-256 of the package file.
    public var sha256: String?
    /// True when no rule found an error.
    public var valid: Bool
    /// What the rules found.
    public var findings: [Finding]
    /// Every entry; absent unless asked for (`--files`).
    public var files: [FileRow]?
    /// True when the input could not be read as a package at all (it is not one, or its index
    /// is damaged): `info` then reports like `validate` and exits 1.
    public var unreadable: Bool
    /// The inspection behind it, for the report lines.
    public var inspection: InspectionResult

    enum CodingKeys: String, CodingKey {
      case path, format, productIdentifier, contentVersion, assetPackID, entryCount, fileCount, contentSize,
        packageSize, storedSize,
        storedPercent, overheadSize, checksumStyle, sha256, valid, findings, files
    }
  }

  /// Reads everything (every checksum verified) and describes it.
  public static func run(path: String, includeFiles: Bool, options: ValidationOptions = ValidationOptions()) throws
    -> Summary
  {
    try run(path: path, file: nil, includeFiles: includeFiles, options: options)
  }

  /// As ``run(path:includeFiles:options:)``, for the package already open as `file` (standard
  /// input, spooled: `path` then only names it).
  package static func run(
    path: String, file given: FileDescriptor?, includeFiles: Bool, options: ValidationOptions = ValidationOptions()
  ) throws -> Summary {
    // A package file is opened once: the bytes described are the bytes hashed.
    let file = given ?? (Paths.isDirectory(path) ? nil : try? FileDescriptor.open(regularFile: path))
    // A plain XAR is read as its TOC streams, as validate reads it: a TOC refused at its end
    // gives the verdict of a file that is not a package, and no rows.
    let source: EntrySource
    do {
      source = try PackageOpener.open(file.map(PackageInput.file) ?? .path(path), .rules())
    } catch { throw OperationError.wrap(error) }
    // A package file is hashed, on a thread of its own while the pass below reads it; a folder
    // (content or asset pack) has no such digest.
    let packageDigest: PackageDigest.Running?
    if let file {
      packageDigest = PackageDigest.start(of: file)
    } else if !Paths.isDirectory(path) {
      packageDigest = PackageDigest.start(of: try FileDescriptor.open(regularFile: path))
    } else {
      packageDigest = nil
    }
    var digests: [String: String] = [:]
    let inspector = PackageInspector(
      context: RuleContext(options: options, packageFileName: source.format == .directory ? nil : Paths.name(of: path)))
    inspector.recordEntries = true
    // Each file's SHA-256 is shown only in the list of files: without it, no pass over the
    // content is spent on it.
    if includeFiles { inspector.onFileDigest = { entry, digest in digests[entry.path] = digest } }
    let result = try inspector.run(source)
    // A TOC refused once it was parsed whole is no package, whose checksums are no style.
    let checksumStyle = result.indexRefused ? "none" : source.index?.checksumStyle ?? "none"
    let sha = try packageDigest?.value()
    let rows = result.entries.map { e in
      FileRow(
        path: e.path, kind: e.kind.rawValue, size: e.size, storedSize: e.storage?.storedSize,
        encoding: e.storage?.encoding,
        mode: String(repeating: "0", count: max(0, 4 - String(e.mode, radix: 8).count)) + String(e.mode, radix: 8),
        sha256: digests[e.path], linkTarget: e.linkTarget)
    }
    // Only readers that know each entry's stored size (XAR) give a compression figure; a zip or
    // a flat package's payload has none to add up.
    let stored: UInt64? =
      source.format == .directory || source.format == .unknown || !result.entries.contains(where: { $0.storage != nil })
      ? nil : result.entries.reduce(0) { $0 + ($1.storage?.storedSize ?? 0) }
    return Summary(
      path: path, format: result.format.rawValue, productIdentifier: result.contentInfo?.productIdentifier,
      contentVersion: result.contentInfo?.contentVersion.description, assetPackID: result.assetPackID,
      entryCount: result.entryCount,
      fileCount: result.entries.filter { $0.kind == .file }.count, contentSize: result.contentSize,
      packageSize: result.packageSize, storedSize: stored,
      storedPercent: stored.flatMap { s in
        result.contentSize > 0 ? (Double(s) * 1000 / Double(result.contentSize)).rounded() / 10 : nil
      },
      overheadSize: stored.flatMap { s in result.packageSize.map { $0 >= s ? $0 - s : 0 } },
      checksumStyle: checksumStyle, sha256: sha, valid: !result.failed(strict: options.strict),
      findings: result.findings,
      files: includeFiles ? rows : nil,
      unreadable: source.isUnreadable
        || result.findings.contains { $0.ruleID == ArchiveIntegrityRule.description.id && $0.severity == .error },
      inspection: result)
  }

  /// The XAR table of contents of the package at `path`, as stored (inflated): for plain XAR
  /// packages and the outer XAR of flat packages. Holds the whole TOC; see
  /// ``tableOfContents(path:limits:to:)`` to stream it.
  public static func tableOfContents(path: String, limits: ReaderLimits = ReaderLimits()) throws -> [UInt8] {
    var xml: [UInt8] = []
    try tableOfContents(path: path, limits: limits) { xml += $0 }
    return xml
  }

  /// Streams the XAR table of contents of the package at `path`, as stored (inflated), to
  /// `write` chunk by chunk as it inflates, so memory stays bounded whatever the TOC's size (which
  /// `limits` bounds, as for every other command).
  public static func tableOfContents(
    path: String, limits: ReaderLimits = ReaderLimits(), to write: ([UInt8]) throws -> Void
  ) throws {
    let source: EntrySource
    do { source = try PackageOpener.open(.path(path), ReadPolicy(limits: limits)) } catch {
      throw OperationError.wrap(error)
    }
    guard let reader = source.index?.tableOfContents else {
      throw OperationError(
        "'\(path)' is a \(source.format.displayName); only XAR packages have a table of contents",
        hint: "pkgtool info --files lists the entries of any package", code: .inputUnsuitable)
    }
    do {
      try reader.writeTOC(to: write)
    } catch let error as XARError {
      throw OperationError("cannot read the table of contents of '\(path)': \(error)", code: .inputUnreadable)
    }
  }

  /// Largest entry ``cat(path:entryPath:limits:check:to:)`` keeps in memory between checking it
  /// and writing it; a larger one is read twice.
  package static let catInMemoryLimit = 8 << 20

  /// Streams the bytes of the file `entryPath` in the package (or folder) at `path` to
  /// `write`, once the package's own reader has read the whole entry and verified it
  /// (checksums, where the format has them, and sizes): nothing reaches `write` from an entry
  /// that turns out damaged. `check` sees every byte before any is written (e.g. to refuse
  /// binary data on a terminal). An entry over ``catInMemoryLimit`` is read twice through the
  /// same open file: once to verify, once to write (checked again on the way).
  public static func cat(
    path: String, entryPath: String, limits: ReaderLimits = ReaderLimits(),
    check: ((UnsafeRawBufferPointer) throws -> Void)? = nil,
    to write: (UnsafeRawBufferPointer) throws -> Void
  ) throws {
    try cat(path: path, file: nil, entryPath: entryPath, limits: limits, check: check, to: write)
  }

  /// As ``cat(path:entryPath:limits:check:to:)``, for the package already open as `file`
  /// (standard input, spooled: `path` then only names it).
  package static func cat(
    path: String, file given: FileDescriptor?, entryPath: String, limits: ReaderLimits = ReaderLimits(),
    check: ((UnsafeRawBufferPointer) throws -> Void)? = nil,
    to write: (UnsafeRawBufferPointer) throws -> Void
  ) throws {
    let source: EntrySource
    do {
      // Opened once: both passes read this descriptor.
      let input: PackageInput =
        try given.map(PackageInput.file)
        ?? (Paths.isDirectory(path) ? .path(path) : .file(FileDescriptor.open(regularFile: path)))
      source = try PackageOpener.open(input, ReadPolicy(limits: limits))
    } catch { throw OperationError.wrap(error) }
    /// Reads the entry to its end through the reader, handing each chunk to `body`.
    func readEntry(_ body: (UnsafeRawBufferPointer) throws -> Void) throws -> PackageEntry? {
      do {
        let reader = try source.entries()
        while let (entry, data) = try reader.next() {
          guard entry.path == entryPath, !entry.isWrapperMember else { continue }
          guard entry.kind == .file, let data else { return entry }
          var buffer = [UInt8](repeating: 0, count: 256 * 1024)
          while true {
            let n = try buffer.withUnsafeMutableBytes { try data.read(into: $0) }
            if n == 0 { break }
            try buffer.withUnsafeBytes { try body(UnsafeRawBufferPointer(rebasing: $0[..<n])) }
          }
          return entry
        }
      } catch let error as OperationError {
        throw error
      } catch let error as SystemError {
        throw OperationError.wrap(error)
      } catch {
        throw OperationError(
          "cannot read '\(entryPath)' from '\(path)': \(error)", hint: "run pkgtool validate on it",
          code: .inputUnreadable)
      }
      return nil
    }
    // First pass: every byte read and verified, and checked, before any is written.
    var kept: [UInt8]? = []
    let found = try readEntry { chunk in
      try check?(chunk)
      if kept != nil {
        if kept!.count + chunk.count <= catInMemoryLimit { kept! += chunk } else { kept = nil }
      }
    }
    guard let entry = found else {
      throw OperationError("'\(path)' has no entry '\(entryPath)'", hint: "pkgtool info \(path) --files lists them")
    }
    guard entry.kind == .file else {
      throw OperationError(
        "'\(entryPath)' is a \(entry.kind.rawValue)\(entry.linkTarget.map { " (→ \($0))" } ?? ""), not a file")
    }
    if let kept {
      try kept.withUnsafeBytes { try write($0) }
      return
    }
    // Second pass, for a large entry: the same reader over the same descriptor.
    _ = try readEntry { chunk in
      try check?(chunk)
      try write(chunk)
    }
  }
}

/// `diff`: what changed between two packages (or folders) of a product.
public enum PackageDiff {
  /// One path that differs between the two packages.
  public struct Change: Codable, Equatable, Sendable {
    /// The path.
    public var path: String
    /// What it is in the newer package (or the older, when removed).
    public var kind: String
    /// Its size in the older package.
    public var oldSize: UInt64?
    /// Its size in the newer package.
    public var newSize: UInt64?
    /// What differs for a changed entry: `content`, `mode`, `link`, `kind`.
    public var what: [String]
  }

  /// How two packages differ.
  public struct Result: Codable, Sendable {
    /// The older package's path.
    public var old: String
    /// The newer package's path.
    public var new: String
    /// The older package's product.
    public var oldProduct: String?
    /// The newer package's product.
    public var newProduct: String?
    /// The older package's version.
    public var oldVersion: String?
    /// The newer package's version.
    public var newVersion: String?
    /// The older asset pack's ID (a folder or an `.aar`).
    public var oldAssetPackID: String?
    /// The newer asset pack's ID.
    public var newAssetPackID: String?
    /// Paths only in the newer package.
    public var added: [Change]
    /// Paths only in the older package.
    public var removed: [Change]
    /// Paths in both whose kind, size, mode, target or bytes differ.
    public var changed: [Change]
    /// The older package's content size.
    public var oldContentSize: UInt64
    /// The newer package's content size.
    public var newContentSize: UInt64
    /// New content size minus old.
    public var sizeDelta: Int64
    /// What a person should know about the change: a `ContentVersion` that goes down, content
    /// that differs under the same `ContentVersion` (devices that have that version never fetch
    /// it again).
    public var warnings: [String] = []

    /// True when the newer `ContentVersion` is lower than the older one (`2.0 → 1.0`).
    public var versionDecreased: Bool {
      guard let oldVersion, let newVersion, let a = ContentVersion(oldVersion), let b = ContentVersion(newVersion)
      else {
        return false
      }
      return b < a
    }

    /// True when the content (or product) differs but `ContentVersion` is the same.
    public var contentChangedWithoutNewVersion: Bool {
      (!added.isEmpty || !removed.isEmpty || !changed.isEmpty) && oldVersion != nil && oldVersion == newVersion
    }
  }

  /// Compares the packages (or folders) `old` and `new` by their entries and content digests.
  public static func run(old: String, new: String) throws -> Result {
    let a = try PackageInfo.run(path: old, includeFiles: true)
    let b = try PackageInfo.run(path: new, includeFiles: true)
    let oldRows = Dictionary((a.files ?? []).map { ($0.path, $0) }, uniquingKeysWith: { first, _ in first })
    let newRows = Dictionary((b.files ?? []).map { ($0.path, $0) }, uniquingKeysWith: { first, _ in first })
    var added: [Change] = []
    var removed: [Change] = []
    var changed: [Change] = []
    for row in b.files ?? [] where oldRows[row.path] == nil {
      added.append(Change(path: row.path, kind: row.kind, oldSize: nil, newSize: row.size, what: []))
    }
    for row in a.files ?? [] {
      guard let other = newRows[row.path] else {
        removed.append(Change(path: row.path, kind: row.kind, oldSize: row.size, newSize: nil, what: []))
        continue
      }
      var what: [String] = []
      if row.kind != other.kind { what.append("kind") }
      if row.sha256 != other.sha256 || row.size != other.size { what.append("content") }
      if row.mode != other.mode { what.append("mode") }
      if row.linkTarget != other.linkTarget { what.append("link") }
      if !what.isEmpty {
        changed.append(Change(path: row.path, kind: other.kind, oldSize: row.size, newSize: other.size, what: what))
      }
    }
    var result = Result(
      old: old, new: new, oldProduct: a.productIdentifier, newProduct: b.productIdentifier,
      oldVersion: a.contentVersion, newVersion: b.contentVersion, oldAssetPackID: a.assetPackID,
      newAssetPackID: b.assetPackID, added: added, removed: removed, changed: changed,
      oldContentSize: a.contentSize, newContentSize: b.contentSize,
      sizeDelta: Int64(clamping: b.contentSize) - Int64(clamping: a.contentSize))
    if result.versionDecreased, let from = result.oldVersion, let to = result.newVersion {
      result.warnings.append(
        "ContentVersion goes down, \(from) → \(to): the store refuses an update that does not raise it, and devices that have \(from) never fetch \(to) (swap the two if they are the other way round, or raise it with pkgtool bump --set)"
      )
    }
    if result.contentChangedWithoutNewVersion, let version = result.newVersion {
      result.warnings.append(
        "the content differs but ContentVersion is \(version) in both: devices that have \(version) never fetch it again (raise it with pkgtool bump)"
      )
    }
    result.warnings += assetPackWarnings(old: a.format, new: b.format, removed: removed, changed: changed)
    return result
  }

  /// Between two versions of an asset pack (folders or `.aar`): files removed or changed in
  /// place. An asset-pack update reaches apps that are already installed, and those may still
  /// open the old paths or expect the old bytes.
  static func assetPackWarnings(old: String, new: String, removed: [Change], changed: [Change]) -> [String] {
    let packs: Set<String> = [PackageFormat.assetPack.rawValue, PackageFormat.appleArchive.rawValue]
    guard packs.contains(old), packs.contains(new) else { return [] }
    func listed(_ paths: [String]) -> String {
      let shown = paths.prefix(5).map { "'\($0.debugEscaped)'" }.joined(separator: ", ")
      return paths.count > 5 ? shown + " and \(paths.count - 5) more" : shown
    }
    var warnings: [String] = []
    let gone = removed.filter { $0.kind == EntryKind.file.rawValue }.map(\.path)
    if !gone.isEmpty {
      warnings.append(
        "\(gone.count) \(gone.count == 1 ? "file is" : "files are") removed from the asset pack (\(listed(gone))): the update reaches apps already installed, which may still open them; keep them until every app version in use stops reading them"
      )
    }
    let edited = changed.filter { $0.what.contains("content") || $0.what.contains("kind") }.map(\.path)
    if !edited.isEmpty {
      warnings.append(
        "\(edited.count) \(edited.count == 1 ? "file changes" : "files change") in place (\(listed(edited))): apps already installed get the new bytes under the old path; make sure every app version in use reads them"
      )
    }
    return warnings
  }
}
