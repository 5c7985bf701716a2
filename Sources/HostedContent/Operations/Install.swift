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
    /// Threads writing files (see ``Unpack/Options/threads``).
    public var threads = 1
    /// How long to wait, in seconds, for another install into the same product folder.
    public var lockTimeout: Double = 60
    /// A catalog already verified with the publisher's key (``CatalogFile/verify(_:publicKey:)``):
    /// the package must be one of its entries, byte for byte, and the catalog must not be older
    /// than the last one an install of this product used.
    public var catalog: Catalog?
    /// The version of the root the catalog was verified under (``RootFile/verifyChain(_:now:)``),
    /// when there was one: a version lower than the highest an install of this product was
    /// given is refused (a rollback to a root whose keys may have been retired).
    public var rootVersion: Int64?
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
  public static let catalogSequenceFile = ProductFolder.catalogSequenceFile
  /// The file in the record folder holding the highest root version an install was given.
  public static let rootVersionFile = ProductFolder.rootVersionFile
  /// The symlink in a product folder that names the current version.
  public static let currentLink = ProductFolder.currentLink
  /// The folder in a product folder that holds install records.
  public static let recordFolder = ProductFolder.recordFolder
  /// The file in the product's record folder (`.pkgtool/lock`) that serializes installs.
  public static let lockFile = ProductFolder.lockFile

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
      // A plain XAR is read as its TOC streams, as unpack reads it.
      var unpack = Unpack.Options()
      unpack.limits = options.limits
      source = try PackageOpener.open(.file(packageFile), unpack.readPolicy)
      guard let bytes = try ContentInfoLocator.bytes(in: source) else { return try invalid(packageFile, options) }
      info = try ContentInfo(decoding: bytes)
    } catch let error as SystemError {
      throw OperationError.wrap(error)
    } catch PackageOpener.OpenError.unreadable(let error) {
      throw OperationError.wrap(error)
    } catch {
      // Any other failure is the package's bytes, whichever reader met it (XAR, Apple Archive,
      // zip, cpio, the plist), as PackageInspector judges a read: the package broke a rule, and
      // the validation says which. (A hand-kept list of codec errors here missed Apple
      // Archive's: a cut .aar exited 2.)
      return try invalid(packageFile, options)
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
    // The plist came from a TOC still being parsed (on its own thread, while the file was
    // hashed): nothing is decided from it, and nothing in DOCS touched, before the whole TOC
    // stands. A damaged package is invalid whatever its plist says.
    if let refusal = source.index?.refusal?() {
      if let error = refusal as? SystemError { throw OperationError.wrap(error) }
      return try invalid(packageFile, options)
    }
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
    // every rule, so a refused package leaves nothing behind. The lock is held to the very end,
    // whichever way the function returns.
    var productFolder: ProductFolder?
    defer { withExtendedLifetime(productFolder) {} }
    func lockProductFolder() throws -> ProductFolder {
      let folder = try ProductFolder.open(product, in: docs, path: productPath, lockTimeout: options.lockTimeout)
      productFolder = folder
      return folder
    }
    /// The answer when nothing needs installing, given the locked product folder.
    func decided(_ folder: ProductFolder) throws -> Result? {
      let seen = try folder.rootVersion
      if let given = options.rootVersion, let seen, given < seen {
        result.action = .refusedByCatalog
        result.catalogProblem =
          "the root's version \(given) is lower than \(seen), the highest given for \(product): an old root replayed (rollback)"
        return result
      }
      if options.catalog != nil, options.rootVersion == nil, let seen {
        // One key cannot stand for a root that may have retired it.
        result.action = .refusedByCatalog
        result.catalogProblem =
          "\(product) was installed under root version \(seen); check this catalog with --root (the root's files), not --public-key"
        return result
      }
      if let catalog = options.catalog, let used = try folder.catalogSequence, catalog.sequence < used {
        result.action = .refusedByCatalog
        result.catalogProblem =
          "the catalog's sequence \(catalog.sequence) is lower than \(used), the last one used for \(product): an old catalog replayed"
        return result
      }
      let previous = folder.currentVersion
      result.previous = previous
      if let previous, previous == version, folder.hasVersion(versionName), folder.record(for: version)?.sha256 == sha {
        result.action = .alreadyCurrent
        result.path = productPath + "/" + versionName
        result.removed = try folder.prune(keep: options.keep, current: version)
        return result
      }
      if let previous, version < previous, !options.allowDowngrade {
        result.action = .refusedDowngrade
        return result
      }
      return nil
    }
    try ProductFolder.checkName(product, in: docs, documentsPath: documents)
    if docs.exists(product), let answer = try decided(try lockProductFolder()) { return answer }

    // Unpack into a staging folder in DOCS (same file system), through DOCS's handle.
    var unpackOptions = Unpack.Options()
    unpackOptions.validation = options.validation
    unpackOptions.limits = options.limits
    unpackOptions.threads = options.threads
    let staged = try Unpack.stage(
      source, in: docs, for: product, options: unpackOptions, output: productPath + "/" + versionName,
      progress: progress)
    result.inspection = staged.inspection
    guard let staging = staged.staging else {
      result.action = .invalid
      return result
    }
    defer { staging.discard() }
    if productFolder == nil, let answer = try decided(try lockProductFolder()) { return answer }
    guard let productFolder else { throw OperationError("cannot open '\(productPath)'") }
    productFolder.removeStale(for: versionName)
    let oldRecord = productFolder.hasVersion(versionName) ? productFolder.record(for: version) : nil

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
      if try productFolder.publish("Contents", of: staging, as: versionName), oldRecord?.sha256 != sha {
        result.action = .replaced
        result.replacedSHA256 = oldRecord?.sha256
      }
      try productFolder.write(
        Record(
          productIdentifier: product, contentVersion: versionName, package: Paths.name(of: package), sha256: sha,
          installedAt: ISO8601DateFormatter().string(from: Date())))
      if let catalog = options.catalog { try productFolder.raiseCatalogSequence(to: catalog.sequence) }
      if let rootVersion = options.rootVersion { try productFolder.raiseRootVersion(to: rootVersion) }
      try productFolder.switchCurrent(to: versionName)
    } catch let error as SystemError {
      throw OperationError.writing(productPath, error)
    }
    result.path = productPath + "/" + versionName
    result.removed = try productFolder.prune(keep: options.keep, current: version)
    return result
  }

  private static func invalid(_ package: FileDescriptor, _ options: Options) throws -> Result {
    let inspection = try Validation.run(
      path: package.path, file: package, options: options.validation, limits: options.limits)
    return Result(action: .invalid, inspection: inspection)
  }

  /// The record of an installed version, in the product folder open as `productFolder`.
  package static func readRecord(_ productFolder: DirectoryHandle, _ version: ContentVersion) -> Record? {
    ProductFolder(handle: productFolder, path: "").record(for: version)
  }
}
