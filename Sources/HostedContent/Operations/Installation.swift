import ArchiveIO
import Foundation
import SystemIO
import XAR

/// One ``Install/run(package:into:options:progress:)``, in steps: who and what (the plist, read
/// before anything is written), the package's checks (names, hash, index, catalog), the answers
/// of the documents folder's trust record (a replay, a rollback) and of the product folder
/// (already current, a downgrade), the content staged, then published and switched to.
struct Installation {
  typealias Result = Install.Result
  let package: String
  /// The package, open once: the hash, the plist, the catalog check and every file's data.
  let file: FileDescriptor
  let documents: String
  let options: Install.Options

  /// What the package is, once its plist was read and checked.
  private struct Identity {
    var product: String
    var version: ContentVersion
    var sha256: String
    /// `DOCS/<product>`.
    var productPath: String
    /// The version as a folder name.
    var versionName: String { version.description }
  }

  func run(progress: ProgressHandler?) throws -> Result {
    let stamp = try file.changeStamp()
    let source: EntrySource
    let info: ContentInfo
    switch try readContentInfo() {
    case .next(let read): (source, info) = read
    case .answer(let answer): return answer
    }
    let identity: Identity
    switch try checked(source, info) {
    case .next(let checked): identity = checked
    case .answer(let answer): return answer
    }
    let docs: DirectoryHandle
    do { docs = try DirectoryHandle(path: documents) } catch { throw OperationError.wrap(error) }
    // What a killed install left in --into (a product folder being made) goes first.
    PendingFolder.removeStale(in: docs, for: identity.product)
    var result = Result(
      action: .installed, productIdentifier: identity.product, version: identity.version, sha256: identity.sha256)

    // An existing product folder is locked first, so the quick answers (already current, a
    // downgrade) come before any unpacking. A new one is made only once the package has passed
    // every rule, so a refused package leaves nothing behind. The lock is held to the very end,
    // whichever way the function returns.
    var productFolder: ProductFolder?
    defer { withExtendedLifetime(productFolder) {} }
    func lockProductFolder() throws -> ProductFolder {
      let folder = try ProductFolder.open(
        identity.product, in: docs, path: identity.productPath, lockTimeout: options.lockTimeout)
      productFolder = folder
      return folder
    }
    try ProductFolder.checkName(identity.product, in: docs, documentsPath: documents)
    // What the folder remembers of the catalog's publisher answers first, before a product
    // folder is locked or made (it is asked again, under its own lock, before anything is
    // published).
    let trust = InstallFolder(handle: docs, path: documents)
    if options.catalog != nil, let problem = trustProblem(try trust.record()) {
      result.action = .refusedByCatalog
      result.catalogProblem = problem
      return result
    }
    if docs.exists(identity.product), try decided(try lockProductFolder(), &result, identity) { return result }
    // Unpack into a staging folder in DOCS (same file system), through DOCS's handle.
    var unpackOptions = Unpack.Options()
    unpackOptions.validation = options.validation
    unpackOptions.limits = options.limits
    unpackOptions.threads = options.threads
    let staged = try Unpack.stage(
      source, in: docs, for: identity.product, options: unpackOptions,
      output: identity.productPath + "/" + identity.versionName, progress: progress)
    result.inspection = staged.inspection
    guard let staging = staged.staging else {
      result.action = .invalid
      return result
    }
    defer { staging.discard() }
    // Asked again before a new product folder is made: another product's install may have raised
    // the publisher's record while this one unpacked, and a refusal must leave no folder behind.
    if productFolder == nil, options.catalog != nil, let problem = trustProblem(try trust.record()) {
      result.action = .refusedByCatalog
      result.catalogProblem = problem
      return result
    }
    if productFolder == nil, try decided(try lockProductFolder(), &result, identity) { return result }
    guard let productFolder else { throw OperationError("cannot open '\(identity.productPath)'") }
    return try publish(staging, into: productFolder, identity, result, stamp: stamp, trust: trust)
  }

  /// A step's outcome: go on with a value, or an answer given before anything in DOCS is touched.
  private enum Step<Value> {
    case next(Value)
    case answer(Result)
  }

  /// Who and what, from the plist, before anything is written: the source (a plain XAR read as
  /// its TOC streams, as unpack reads it) and its `ContentInfo`; the answer for an invalid package.
  private func readContentInfo() throws -> Step<(EntrySource, ContentInfo)> {
    do {
      var unpack = Unpack.Options()
      unpack.limits = options.limits
      let source = try PackageOpener.open(.file(file), unpack.readPolicy)
      guard let bytes = try ContentInfoLocator.bytes(in: source) else {
        return .answer(try Install.invalid(file, options))
      }
      return .next((source, try ContentInfo(decoding: bytes)))
    } catch let error as SystemError {
      throw OperationError.wrap(error)
    } catch PackageOpener.OpenError.unreadable(let error) {
      throw OperationError.wrap(error)
    } catch {
      // Any other failure is the package's bytes, whichever reader met it (XAR, Apple Archive,
      // zip, cpio, the plist), as the inspector judges a read: the package broke a rule, and
      // the validation says which. (A hand-kept list of codec errors here missed Apple
      // Archive's: a cut .aar exited 2.) Should the validation find nothing wrong after all,
      // the failure was not the package's: it is the command's, as it was met.
      let invalid = try Install.invalid(file, options)
      guard invalid.inspection?.failed(strict: options.validation.strict) ?? true else {
        throw OperationError.wrap(error)
      }
      return .answer(invalid)
    }
  }

  /// The package's identity once its names, its index and the catalog are checked; or the
  /// answer when one of them refuses it.
  private func checked(_ source: EntrySource, _ info: ContentInfo) throws -> Step<Identity> {
    let product = info.productIdentifier
    let version = info.contentVersion
    let versionName = version.description
    // ContentInfo checked both already; they become folder names, so check again here.
    guard ProductIdentifier.problem(with: product) == nil, ContentVersion(versionName)?.description == versionName
    else {
      return .answer(try Install.invalid(file, options))
    }
    let sha = try PackageDigest.sha256(of: file)
    // The plist came from a TOC still being parsed (on its own thread, while the file was
    // hashed): nothing is decided from it, and nothing in DOCS touched, before the whole TOC
    // stands. A damaged package is invalid whatever its plist says.
    if let refusal = source.index?.refusal?() {
      if let error = refusal as? SystemError { throw OperationError.wrap(error) }
      return .answer(try Install.invalid(file, options))
    }
    if let catalog = options.catalog {
      do {
        _ = try catalog.check(sha256: sha, size: try file.size(), info: info, name: options.displayName ?? package)
      } catch let refusal as CatalogError {
        return .answer(
          Result(
            action: .refusedByCatalog, productIdentifier: product, version: version, sha256: sha,
            catalogProblem: refusal.description))
      }
    }
    return .next(
      Identity(
        product: product, version: version, sha256: sha, productPath: documents + "/" + product))
  }

  /// True when nothing needs installing, given the locked product folder: `result` is then the
  /// answer. (It learns the version installed before, either way.)
  private func decided(_ folder: ProductFolder, _ result: inout Result, _ identity: Identity) throws -> Bool {
    let previous = folder.currentVersion
    result.previous = previous
    let version = identity.version
    if let previous, previous == version, folder.hasVersion(identity.versionName),
      folder.record(for: version)?.sha256 == identity.sha256
    {
      result.action = .alreadyCurrent
      result.path = identity.productPath + "/" + identity.versionName
      result.removed = try folder.prune(keep: options.keep, current: version)
      return true
    }
    if let previous, version < previous, !options.allowDowngrade {
      result.action = .refusedDowngrade
      return true
    }
    return false
  }

  /// Why the catalog (and its root) cannot be accepted, given what the folder remembers of its
  /// publisher (`DOCS/.pkgtool/trust.json`, for every product); nil when it can.
  private func trustProblem(_ record: TrustRecord) -> String? {
    guard let catalog = options.catalog, let publisher = options.publisher else { return nil }
    let (seen, rootVersionInFolder) = record.remembered(of: publisher)
    if let given = publisher.rootVersion {
      if let newest = seen.rootVersion, given < newest {
        return
          "the root's version \(given) is lower than \(newest), the newest '\(documents)' accepted from this publisher (for any product): an old root replayed (rollback)"
      }
    } else if let newest = rootVersionInFolder {
      // One key cannot stand for a root that may have retired it.
      return
        "content in '\(documents)' was installed under root version \(newest); check this catalog with --root (the root's files), not --public-key"
    }
    if let used = seen.catalogSequence, catalog.sequence < used {
      return
        "the catalog's sequence \(catalog.sequence) is lower than \(used), the highest '\(documents)' used from this publisher (for any product): an old catalog replayed"
    }
    return nil
  }

  /// Puts the staged version in the product folder, records it and switches `current` to it,
  /// once the package is known not to have changed while it was read.
  private func publish(
    _ staging: PendingFolder, into productFolder: ProductFolder, _ identity: Identity, _ result: Result,
    stamp: [Int64], trust: InstallFolder
  ) throws -> Result {
    var result = result
    let (version, versionName, sha) = (identity.version, identity.versionName, identity.sha256)
    productFolder.removeStale(for: versionName)
    let oldRecord = productFolder.hasVersion(versionName) ? productFolder.record(for: version) : nil

    // Written to while it was read: what was hashed may not be what was unpacked.
    guard (try? file.changeStamp()) == stamp else {
      throw OperationError(
        "'\(package)' changed while it was being installed", hint: "install it again", code: .inputChanged)
    }
    // The plist that was written must say what the one read first said.
    guard let writtenPlist = try? staging.handle.openFile(ContentInfo.fileName),
      let written = try? ContentInfo(decoding: writtenPlist.read(count: PropertyList.maxEncodedSize, at: 0)),
      written.productIdentifier == identity.product, written.contentVersion == version
    else {
      throw OperationError(
        "'\(package)' changed while it was being installed", hint: "install it again", code: .inputChanged)
    }
    if !staging.handle.exists("Contents") { try staging.handle.createDirectory("Contents") }
    try? staging.handle.setMode("Contents", 0o755)
    // What the folder remembers of the publisher is checked again and raised under its lock,
    // before anything is published: another product's install may have raised it meanwhile.
    if let catalog = options.catalog, let publisher = options.publisher,
      let problem = try trust.accept(
        publisher, catalogSequence: catalog.sequence, lockTimeout: options.lockTimeout, check: trustProblem)
    {
      result.action = .refusedByCatalog
      result.catalogProblem = problem
      return result
    }

    do {
      // The same version from another package is swapped out in one step, and goes with the
      // staging folder.
      if try productFolder.publish("Contents", of: staging, as: versionName), oldRecord?.sha256 != sha {
        result.action = .replaced
        result.replacedSHA256 = oldRecord?.sha256
      }
      try productFolder.write(
        Install.Record(
          productIdentifier: identity.product, contentVersion: versionName, package: Paths.name(of: package),
          sha256: sha, installedAt: ISO8601DateFormatter().string(from: Date())))
      try productFolder.switchCurrent(to: versionName)
    } catch let error as SystemError {
      throw OperationError.writing(identity.productPath, error)
    }
    result.path = identity.productPath + "/" + versionName
    result.removed = try productFolder.prune(keep: options.keep, current: version)
    return result
  }
}
