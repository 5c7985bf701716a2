import Foundation
import XAR

/// `install`: what an app should do after a download. The content lands in
/// `DOCS/<product>/<version>/`, then `DOCS/<product>/current` (a symlink) switches to it in one
/// rename, so a reader of `current` never sees a mix of two versions.
public enum Install {
  public struct Options: Sendable {
    /// Keep at most this many versions (the current one included) after the switch.
    public var keep: Int?
    public var allowDowngrade = false
    public var validation = ValidationOptions()
    /// Bounds on what the reader accepts.
    public var limits = XARReader.Limits()
    public init() {}
  }

  public enum Action: String, Codable, Sendable {
    /// A new version was installed and made current.
    case installed
    /// This version (same package) was already current; nothing changed.
    case alreadyCurrent = "already-current"
    /// Refused: lower than the current version.
    case refusedDowngrade = "refused-downgrade"
    /// The package broke a rule; nothing changed.
    case invalid
  }

  /// The small record kept per installed version.
  public struct Record: Codable, Equatable, Sendable {
    public var productIdentifier: String
    public var contentVersion: String
    public var package: String
    public var sha256: String
    public var installedAt: String
  }

  public struct Result {
    public var action: Action
    public var inspection: InspectionResult?
    public var productIdentifier: String?
    public var version: ContentVersion?
    public var previous: ContentVersion?
    /// `DOCS/<product>/<version>` when installed.
    public var path: String?
    public var removed: [String] = []
    public var sha256: String?
  }

  public static let currentLink = "current"
  public static let recordFolder = ".pkgtool"

  /// The version `current` points at in `productFolder`, if any.
  public static func currentVersion(in productFolder: DirectoryHandle) -> ContentVersion? {
    guard let target = try? productFolder.readLink(currentLink) else { return nil }
    return ContentVersion(target)
  }

  public static func run(package: String, into documents: String, options: Options) throws -> Result {
    guard Paths.isDirectory(documents) else {
      throw OperationError("'\(documents)' is not an existing folder", hint: "--into names the app's documents folder; create it first")
    }
    let packageFile: FileDescriptor
    do { packageFile = try FileDescriptor.open(reading: package) } catch { throw OperationError.wrap(error) }
    // Who and what, from the plist, before anything is written.
    let info: ContentInfo
    do {
      let source = try PackageOpener.open(package, limits: options.limits)
      guard source.format != .directory else { throw OperationError("'\(package)' is a folder, not a package") }
      guard let bytes = try ContentInfoLocator.bytes(in: source) else {
        let inspection = try Validation.run(path: package, options: options.validation, limits: options.limits)
        return Result(action: .invalid, inspection: inspection)
      }
      info = try ContentInfo(decoding: bytes)
    } catch is ContentInfoError, is XARError, is LibArchiveError, PackageOpener.OpenError.notAPackage {
      let inspection = try Validation.run(path: package, options: options.validation, limits: options.limits)
      return Result(action: .invalid, inspection: inspection)
    } catch {
      throw OperationError.wrap(error)
    }
    let sha = try Build.sha256(of: packageFile)
    let product = info.productIdentifier
    let version = info.contentVersion
    let docs = try DirectoryHandle(path: documents)
    let productPath = documents + "/" + product
    let existingFolder = docs.exists(product) ? try docs.openDirectory(product) : nil
    let previous = existingFolder.flatMap { currentVersion(in: $0) }
    var result = Result(action: .installed, productIdentifier: product, version: version, previous: previous, sha256: sha)

    if let folder = existingFolder, let previous, previous == version, let record = readRecord(folder, version),
      record.sha256 == sha, folder.exists(version.description)
    {
      result.action = .alreadyCurrent
      result.path = productPath + "/" + version.description
      result.removed = try prune(folder, keep: options.keep, current: version)
      return result
    }
    if let previous, version < previous, !options.allowDowngrade {
      result.action = .refusedDowngrade
      return result
    }

    // Unpack into a staging folder in DOCS (same file system), then move its Contents/ into place.
    StagingFolder.removeStale(in: docs, for: product)
    let stagingName = ".\(product).pkgtool-stage-\(getpid())-\(String(UInt32.random(in: 0...UInt32.max), radix: 16))"
    var unpackOptions = Unpack.Options()
    unpackOptions.validation = options.validation
    unpackOptions.limits = options.limits
    let unpacked = try Unpack.run(package: package, destination: documents + "/" + stagingName, options: unpackOptions)
    result.inspection = unpacked.inspection
    guard unpacked.output != nil else {
      result.action = .invalid
      return result
    }
    defer { try? docs.removeTree(stagingName) }
    if !docs.exists(product) { try docs.createDirectory(product, mode: 0o755) }
    let productFolder = try docs.openDirectory(product)
    StagingFolder.removeStale(in: productFolder, for: version.description)
    StagingFolder.removeStale(in: productFolder, for: currentLink)
    let staged = try docs.openDirectory(stagingName)
    if !staged.exists("Contents") { try staged.createDirectory("Contents") }
    let versionName = version.description
    if productFolder.exists(versionName) {
      // Same version from another package: swap the folder, the old one goes after.
      let old = ".\(versionName).pkgtool-old-\(getpid())-\(String(UInt32.random(in: 0...UInt32.max), radix: 16))"
      try productFolder.rename(versionName, to: old, in: productFolder)
      try staged.rename("Contents", to: versionName, in: productFolder)
      try? productFolder.removeTree(old)
    } else {
      try staged.rename("Contents", to: versionName, in: productFolder)
    }
    try writeRecord(productFolder, Record(productIdentifier: product, contentVersion: versionName, package: Paths.name(of: package), sha256: sha, installedAt: ISO8601DateFormatter().string(from: Date())))
    // The switch: a new symlink renamed over `current`, atomically.
    let temporaryLink = ".\(currentLink).pkgtool-link-\(getpid())-\(String(UInt32.random(in: 0...UInt32.max), radix: 16))"
    try productFolder.createSymlink(temporaryLink, target: versionName)
    try productFolder.rename(temporaryLink, to: currentLink, in: productFolder)
    productFolder.sync()
    result.path = productPath + "/" + versionName
    result.removed = try prune(productFolder, keep: options.keep, current: version)
    return result
  }

  /// The record of an installed version.
  public static func readRecord(_ productFolder: DirectoryHandle, _ version: ContentVersion) -> Record? {
    guard let folder = try? productFolder.openDirectory(recordFolder),
      let file = try? folder.openFile("\(version).json"),
      let bytes = try? file.read(count: 1 << 16, at: 0)
    else { return nil }
    return try? JSONDecoder().decode(Record.self, from: Data(bytes))
  }

  private static func writeRecord(_ productFolder: DirectoryHandle, _ record: Record) throws {
    if !productFolder.exists(recordFolder) { try productFolder.createDirectory(recordFolder) }
    let folder = try productFolder.openDirectory(recordFolder)
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
    let bytes = Array(try encoder.encode(record)) + [10]
    let temporary = ".\(record.contentVersion).json.pkgtool-tmp-\(getpid())-\(String(UInt32.random(in: 0...UInt32.max), radix: 16))"
    let file = try folder.createFile(temporary)
    try file.write(bytes)
    try file.sync()
    try folder.rename(temporary, to: "\(record.contentVersion).json", in: folder)
  }

  /// Removes versions beyond the newest `keep` (never the current one); returns their names.
  static func prune(_ productFolder: DirectoryHandle, keep: Int?, current: ContentVersion) throws -> [String] {
    guard let keep else { return [] }
    let versions = try productFolder.list().compactMap { name, _ -> ContentVersion? in
      guard let v = ContentVersion(name), v.description == name, Paths.isDirectoryMode((try? productFolder.status(name))?.st_mode ?? 0) else { return nil }
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
