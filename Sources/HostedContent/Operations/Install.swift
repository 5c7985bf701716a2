import ArchiveIO
import Foundation
import SystemIO

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
    /// than the newest one an install into the folder accepted from ``publisher``, for any
    /// product. Give ``publisher`` with it.
    public var catalog: Catalog?
    /// Whom ``catalog`` was verified as coming from: ``CatalogPublisher/init(key:)`` for one
    /// public key, ``CatalogPublisher/init(chain:)`` for the verified roots. A root version lower
    /// than the newest an install into the folder accepted from the publisher, for any product,
    /// is refused (a rollback to a root whose keys may have been retired), and so is one key in
    /// a folder that was installed into under a root.
    public var publisher: CatalogPublisher?
    /// The version of the newest root ``catalog`` was verified under, nil with one key.
    public var rootVersion: Int64? { publisher?.rootVersion }
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
    /// The package is not the catalog's (size, SHA-256, product or version), or the catalog (or
    /// its root) is older than the newest the folder accepted from the publisher; nothing changed.
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

  /// The file in a product's record folder where an earlier pkgtool kept the highest catalog
  /// sequence used for the product; read once, when ``trustFile`` is first written.
  public static let catalogSequenceFile = ProductFolder.catalogSequenceFile
  /// The file in a product's record folder where an earlier pkgtool kept the highest root
  /// version given for the product; read once, when ``trustFile`` is first written.
  public static let rootVersionFile = ProductFolder.rootVersionFile
  /// The file in the documents folder's record folder (`DOCS/.pkgtool/trust.json`) holding, per
  /// publisher, the newest root version and the highest catalog sequence an install accepted.
  public static let trustFile = InstallFolder.trustFile
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
  /// installs of the same product never interleave; the trust record of the documents folder
  /// (``trustFile``) is checked and raised under a lock of its own, so installs of two products
  /// never lose each other's raise.
  ///
  /// `progress`, when given, is called as the package is read (see ``ProgressHandler``).
  public static func run(package: String, into documents: String, options: Options, progress: ProgressHandler? = nil)
    throws -> Result
  {
    if options.catalog != nil, options.publisher == nil {
      throw OperationError(
        "a catalog was given without its publisher",
        hint: "set Install.Options.publisher to the key or the roots the catalog was verified with")
    }
    // A documents folder that does not exist yet is made (its parent must exist), and removed
    // again if nothing was installed into it.
    var madeDocuments = false
    if Paths.status(documents) == nil, Paths.isDirectory(Paths.parent(of: documents)) {
      guard mkdir(documents, 0o755) == 0 || errno == EEXIST else {
        throw OperationError(
          "cannot create '\(documents)': \(SystemError("create", path: documents).reason)", code: .outputUnwritable)
      }
      madeDocuments = true
    }
    defer { if madeDocuments { _ = rmdir(documents) } }  // only while it is still empty
    guard Paths.isDirectory(documents) else {
      throw OperationError(
        "'\(documents)' is not an existing folder", hint: "--into names the app's documents folder; create it first")
    }
    if Paths.isDirectory(package) {
      throw OperationError("'\(package)' is a folder, not a package", code: .inputUnsuitable)
    }
    // Opened once: the hash, the plist, the catalog check and every file's data are read through
    // this one descriptor, so a file renamed over the path meanwhile is never read.
    let packageFile: FileDescriptor
    do { packageFile = try FileDescriptor.open(regularFile: package) } catch { throw OperationError.wrap(error) }
    return try Installation(package: package, file: packageFile, documents: documents, options: options)
      .run(progress: progress)
  }

  static func invalid(_ package: FileDescriptor, _ options: Options) throws -> Result {
    let inspection = try Validation.run(
      path: package.path, file: package, options: options.validation, limits: options.limits)
    return Result(action: .invalid, inspection: inspection)
  }

  /// The record of an installed version, in the product folder open as `productFolder`.
  package static func readRecord(_ productFolder: DirectoryHandle, _ version: ContentVersion) -> Record? {
    ProductFolder(handle: productFolder, path: "").record(for: version)
  }
}
