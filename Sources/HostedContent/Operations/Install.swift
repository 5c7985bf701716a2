import ArchiveIO
import Foundation
import SystemIO
import XAR

/// `install`: what an app should do after a download. The content lands in
/// `DOCS/<product>/<version>/`, then `DOCS/<product>/current` (a symlink) switches to it in one
/// rename, so a reader of `current` never sees a mix of two versions.
public enum Install {
  /// How to install.
  public struct Options: Sendable {
    /// Keep at most this many versions (the current one included) after the switch.
    public var keep: Int?
    /// Install a version lower than the current one.
    public var allowDowngrade = false
    /// How the package is validated first.
    public var validation = ValidationOptions()
    /// Bounds on what the reader accepts.
    public var limits = ReaderLimits()
    /// How long to wait, in seconds, for another install into the same product folder.
    public var lockTimeout: Double = 60
    /// A catalog already verified with the publisher's key (``CatalogFile/verify(_:publicKey:)``):
    /// the package must be one of its entries, byte for byte, and the catalog must not be older
    /// than the last one an install of this product used.
    public var catalog: Catalog?
    /// The name messages give the package when the path is a private copy: the URL it was
    /// downloaded from (never the temporary's path).
    public var displayName: String?
    /// The defaults: keep every version, refuse downgrades.
    public init() {}
  }

  /// What an install did.
  public enum Action: String, Codable, Sendable {
    /// A new version was installed and made current.
    case installed
    /// The same version was installed again from a package with other bytes; the folder was
    /// swapped in one step.
    case replaced
    /// This version (same package) was already current; nothing changed.
    case alreadyCurrent = "already-current"
    /// Refused: lower than the current version.
    case refusedDowngrade = "refused-downgrade"
    /// The package broke a rule; nothing changed.
    case invalid
    /// The package is not the catalog's (size, SHA-256, product or version), or the catalog is
    /// older than the last one used; nothing changed.
    case refusedByCatalog = "refused-by-catalog"
  }

  /// The small record kept per installed version.
  public struct Record: Codable, Equatable, Sendable {
    /// The product installed.
    public var productIdentifier: String
    /// The version installed.
    public var contentVersion: String
    /// The package file's name.
    public var package: String
    /// The SHA-256 of the package file.
    public var sha256: String
    /// When, in ISO 8601.
    public var installedAt: String
  }

  /// What an install did, and what it saw.
  public struct Result {
    /// What was done.
    public var action: Action
    /// The package's inspection, when it was read.
    public var inspection: InspectionResult?
    /// The product.
    public var productIdentifier: String?
    /// The version installed (or refused).
    public var version: ContentVersion?
    /// The version `current` pointed at before.
    public var previous: ContentVersion?
    /// `DOCS/<product>/<version>` when installed.
    public var path: String?
    /// Versions removed beyond `keep`.
    public var removed: [String] = []
    /// The SHA-256 of the package file.
    public var sha256: String?
    /// With ``Action/replaced``: the SHA-256 of the package the version was installed from before.
    public var replacedSHA256: String?
    /// With ``Action/refusedByCatalog``: why.
    public var catalogProblem: String?
  }

  /// The file in the record folder holding the highest catalog sequence an install used.
  public static let catalogSequenceFile = "catalog-sequence"

  /// The symlink in a product folder that names the current version.
  public static let currentLink = "current"
  /// The folder in a product folder that holds install records.
  public static let recordFolder = ".pkgtool"
  /// The file in the product's record folder (`.pkgtool/lock`) that serializes installs.
  public static let lockFile = "lock"

  /// The version `current` points at in `productFolder`, if any.
  package static func currentVersion(in productFolder: DirectoryHandle) -> ContentVersion? {
    guard let target = try? productFolder.readLink(currentLink) else { return nil }
    return ContentVersion(target)
  }

  /// Installs `package` into the documents folder `documents`.
  ///
  /// Every name taken from the package (product and version) is checked before it becomes a
  /// folder name, and every path is opened relative to the handle of `documents`, never joined
  /// as a string. The whole decision and switch runs under a lock on the product folder, so two
  /// installs of the same product never interleave.
  ///
  /// `progress`, when given, is called as the package is read (see ``ProgressHandler``).
  public static func run(package: String, into documents: String, options: Options, progress: ProgressHandler? = nil)
    throws -> Result
  {
    // A documents folder that does not exist yet is made (its parent must exist), and removed
    // again if nothing was installed into it.
    var madeDocuments = false
    if Paths.status(documents) == nil, Paths.isDirectory(Paths.parent(of: documents)) {
      guard mkdir(documents, 0o755) == 0 || errno == EEXIST else {
        throw OperationError("cannot create '\(documents)': \(SystemError("create", path: documents).reason)")
      }
      madeDocuments = true
    }
    defer { if madeDocuments { _ = rmdir(documents) } }  // only while it is still empty
    guard Paths.isDirectory(documents) else {
      throw OperationError(
        "'\(documents)' is not an existing folder", hint: "--into names the app's documents folder; create it first")
    }
    if Paths.isDirectory(package) { throw OperationError("'\(package)' is a folder, not a package") }
    // Opened once: the hash, the plist, the catalog check and every file's data are read through
    // this one descriptor, so a file renamed over the path meanwhile is never read.
    let packageFile: FileDescriptor
    do { packageFile = try FileDescriptor.open(regularFile: package) } catch { throw OperationError.wrap(error) }
    let stamp = try packageFile.changeStamp()
    // Who and what, from the plist, before anything is written.
    let source: EntrySource
    let info: ContentInfo
    do {
      source = try PackageOpener.open(file: packageFile, limits: options.limits)
      // This thread writes every file: the workers decode large ones too.
      source.decodeLargeFilesAhead(upTo: .max)
      guard let bytes = try ContentInfoLocator.bytes(in: source) else { return try invalid(packageFile, options) }
      info = try ContentInfo(decoding: bytes)
    } catch is ContentInfoError, is XARError, is LibArchiveError, is ZipDirectory.Inconsistency, PackageOpener.OpenError
      .notAPackage
    {
      return try invalid(packageFile, options)
    } catch {
      throw OperationError.wrap(error)
    }
    let product = info.productIdentifier
    let version = info.contentVersion
    let versionName = version.description
    // ContentInfo checked both already; they become folder names, so check again here.
    guard ProductIdentifier.problem(with: product) == nil, ContentVersion(versionName)?.description == versionName
    else {
      return try invalid(packageFile, options)
    }
    let sha = try PackageDigest.sha256(of: packageFile)
    if let catalog = options.catalog {
      do {
        _ = try catalog.check(
          sha256: sha, size: try packageFile.size(), info: info, name: options.displayName ?? package)
      } catch let refusal as CatalogError {
        return Result(
          action: .refusedByCatalog, productIdentifier: product, version: version, sha256: sha,
          catalogProblem: refusal.description)
      }
    }
    let docs: DirectoryHandle
    do { docs = try DirectoryHandle(path: documents) } catch { throw OperationError.wrap(error) }
    // What a killed install left in --into (a product folder being made) goes first.
    PendingFolder.removeStale(in: docs, for: product)
    let productPath = documents + "/" + product
    var result = Result(action: .installed, productIdentifier: product, version: version, sha256: sha)

    // An existing product folder is locked first, so the quick answers (already current, a
    // downgrade) come before any unpacking. A new one is made only once the package has passed
    // every rule, so a refused package leaves nothing behind.
    var productFolder: DirectoryHandle?
    var lock: FileLock?
    // Held to the very end, whichever way the function returns.
    defer { withExtendedLifetime(lock) {} }
    func lockProductFolder() throws {
      do {
        if !docs.exists(product) {
          do { try docs.createDirectory(product, mode: 0o755) } catch let error as SystemError
            where error.code == EEXIST
          {}
        }
        let folder = try docs.openDirectory(product)
        lock = try FileLock(lockFile, in: try openRecordFolder(in: folder), timeout: options.lockTimeout)
        productFolder = folder
      } catch let busy as FileLock.Busy {
        throw OperationError("\(busy)", hint: "wait for it to finish, then install again")
      } catch let error as SystemError {
        throw OperationError(
          "cannot install into '\(productPath)': \(error.reason) (\(error.codeName))",
          hint: "it must be a folder (not a symlink) you can write")
      }
    }
    /// The answer when nothing needs installing, given the locked product folder.
    func decided(_ folder: DirectoryHandle) throws -> Result? {
      if let catalog = options.catalog, let used = readCatalogSequence(folder), catalog.sequence < used {
        result.action = .refusedByCatalog
        result.catalogProblem =
          "the catalog's sequence \(catalog.sequence) is lower than \(used), the last one used for \(product): an old catalog replayed"
        return result
      }
      let previous = currentVersion(in: folder)
      result.previous = previous
      if let previous, previous == version, folder.exists(versionName), readRecord(folder, version)?.sha256 == sha {
        result.action = .alreadyCurrent
        result.path = productPath + "/" + versionName
        result.removed = try prune(folder, keep: options.keep, current: version)
        return result
      }
      if let previous, version < previous, !options.allowDowngrade {
        result.action = .refusedDowngrade
        return result
      }
      return nil
    }
    // Product IDs that differ only by case share one folder on APFS (and NTFS): refuse to mix
    // two products, on every file system alike.
    if let other = try? docs.list().first(where: {
      !$0.name.utf8.elementsEqual(product.utf8) && NameEquivalence.areEquivalent($0.name, product)
    }) {
      throw OperationError(
        "cannot install \(product) into '\(documents)': it holds '\(other.name)', which is the same folder name on case-insensitive file systems (APFS, NTFS)",
        hint: "product IDs that differ only by case cannot share one folder; install into another folder")
    }
    if docs.exists(product) {
      try lockProductFolder()
      if let answer = try decided(productFolder!) { return answer }
    }

    // Unpack into a staging folder in DOCS (same file system), through DOCS's handle.
    var unpackOptions = Unpack.Options()
    unpackOptions.validation = options.validation
    unpackOptions.limits = options.limits
    let staged = try Unpack.stage(
      source, in: docs, for: product, options: unpackOptions, output: productPath + "/" + versionName,
      progress: progress)
    result.inspection = staged.inspection
    guard let staging = staged.staging else {
      result.action = .invalid
      return result
    }
    defer { staging.discard() }
    if productFolder == nil {
      try lockProductFolder()
      if let answer = try decided(productFolder!) { return answer }
    }
    guard let productFolder else { throw OperationError("cannot open '\(productPath)'") }
    PendingFolder.removeStale(in: productFolder, for: versionName)
    PendingFolder.removeStale(in: productFolder, for: currentLink)
    let oldRecord = productFolder.exists(versionName) ? readRecord(productFolder, version) : nil

    // Written to while it was read: what was hashed may not be what was unpacked.
    guard (try? packageFile.changeStamp()) == stamp else {
      throw OperationError("'\(package)' changed while it was being installed", hint: "install it again")
    }
    // The plist that was written must say what the one read first said.
    guard let writtenPlist = try? staging.handle.openFile(ContentInfo.fileName),
      let written = try? ContentInfo(decoding: writtenPlist.read(count: PropertyList.maxEncodedSize, at: 0)),
      written.productIdentifier == product, written.contentVersion == version
    else {
      throw OperationError("'\(package)' changed while it was being installed", hint: "install it again")
    }
    if !staging.handle.exists("Contents") { try staging.handle.createDirectory("Contents") }
    try? staging.handle.setMode("Contents", 0o755)

    do {
      // The same version from another package is swapped out in one step, and goes with the
      // staging folder.
      if try staging.publish("Contents", as: versionName, in: productFolder), oldRecord?.sha256 != sha {
        result.action = .replaced
        result.replacedSHA256 = oldRecord?.sha256
      }
      try writeRecord(
        productFolder,
        Record(
          productIdentifier: product, contentVersion: versionName, package: Paths.name(of: package), sha256: sha,
          installedAt: ISO8601DateFormatter().string(from: Date())))
      if let catalog = options.catalog, catalog.sequence > (readCatalogSequence(productFolder) ?? -1) {
        try writeRecordFile(productFolder, catalogSequenceFile, Array("\(catalog.sequence)\n".utf8))
      }
      // The switch: a new symlink renamed over `current`, atomically.
      try PendingFile.switchSymlink(currentLink, to: versionName, in: productFolder)
      productFolder.sync()
    } catch let error as SystemError {
      throw OperationError.writing(productPath, error)
    }
    result.path = productPath + "/" + versionName
    result.removed = try prune(productFolder, keep: options.keep, current: version)
    return result
  }

  private static func invalid(_ package: FileDescriptor, _ options: Options) throws -> Result {
    let inspection = try Validation.run(
      path: package.path, file: package, options: options.validation, limits: options.limits)
    return Result(action: .invalid, inspection: inspection)
  }

  /// The record of an installed version.
  package static func readRecord(_ productFolder: DirectoryHandle, _ version: ContentVersion) -> Record? {
    guard let folder = try? productFolder.openDirectory(recordFolder),
      let file = try? folder.openFile("\(version).json"),
      let bytes = try? file.read(count: 1 << 16, at: 0)
    else { return nil }
    return try? JSONDecoder().decode(Record.self, from: Data(bytes))
  }

  /// The product's record folder, made when missing.
  static func openRecordFolder(in productFolder: DirectoryHandle) throws -> DirectoryHandle {
    if !productFolder.exists(recordFolder) {
      do { try productFolder.createDirectory(recordFolder) } catch let error as SystemError where error.code == EEXIST {
      }
    }
    return try productFolder.openDirectory(recordFolder)
  }

  private static func writeRecord(_ productFolder: DirectoryHandle, _ record: Record) throws {
    try writeRecordFile(productFolder, "\(record.contentVersion).json", try JSONText.bytes(record))
  }

  /// Writes `name` in the record folder, whole or not at all.
  private static func writeRecordFile(_ productFolder: DirectoryHandle, _ name: String, _ bytes: [UInt8]) throws {
    try PendingFile.write(bytes, to: name, in: openRecordFolder(in: productFolder))
  }

  /// The highest catalog sequence an install of this product used, if any.
  package static func readCatalogSequence(_ productFolder: DirectoryHandle) -> Int64? {
    guard let folder = try? productFolder.openDirectory(recordFolder),
      let file = try? folder.openFile(catalogSequenceFile),
      let bytes = try? file.read(count: 64, at: 0)
    else { return nil }
    return Int64(String(decoding: bytes, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines))
  }

  /// Removes versions beyond the newest `keep` (never the current one); returns their names.
  static func prune(_ productFolder: DirectoryHandle, keep: Int?, current: ContentVersion) throws -> [String] {
    guard let keep else { return [] }
    let versions = try productFolder.list().compactMap { name, _ -> ContentVersion? in
      guard let v = ContentVersion(name), v.description == name,
        Paths.isDirectoryMode((try? productFolder.status(name))?.st_mode ?? 0)
      else { return nil }
      return v
    }.sorted(by: >)
    var kept = [current]
    var removed: [String] = []
    for v in versions where v != current {
      if kept.count < max(1, keep) {
        kept.append(v)
      } else {
        try productFolder.removeTree(v.description)
        if let records = try? productFolder.openDirectory(recordFolder), records.exists("\(v).json") {
          try? records.removeTree("\(v).json")
        }
        removed.append(v.description)
      }
    }
    return removed
  }
}
