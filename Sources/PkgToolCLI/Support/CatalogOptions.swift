import ArgumentParser
import Foundation
import HostedContent

/// `--catalog` with `--public-key` or `--root`, for install and unpack.
struct CatalogOptions: ParsableArguments {
  @Option(
    help: ArgumentHelp(
      "A signed catalog (from pkgtool publish): the package must be one of its entries, byte for byte.",
      valueName: "catalog.json"))
  var catalog: String?

  @Option(
    name: .customLong("public-key"),
    help: ArgumentHelp("The publisher's public key (KEY.pub) that must have signed the catalog.", valueName: "key.pub"))
  var publicKey: String?

  @Option(
    name: .customLong("root"),
    help: ArgumentHelp(
      "Instead of --public-key: the root the app ships, then each newer version (repeat, or a folder of them); the catalog must meet the newest's catalog threshold.",
      valueName: "root.json"))
  var roots: [String] = []

  func validate() throws {
    if catalog != nil, (publicKey == nil) == roots.isEmpty {
      throw ValidationError(
        "--catalog goes with --public-key or --root (one of them): a catalog is trusted only with the keys that signed it."
      )
    }
    if catalog == nil, publicKey != nil || !roots.isEmpty {
      throw ValidationError(
        "--\(publicKey != nil ? "public-key" : "root") goes with --catalog: it says who must have signed the catalog.")
    }
  }

  /// The verified catalog, or nil when none was given. A catalog that does not verify is an
  /// exit-1 refusal.
  func verified(for command: String) throws -> Catalog? { try verifiedWithPublisher(for: command)?.catalog }

  /// The verified catalog and whom it was verified as coming from (the key, or the chain of
  /// roots), or nil when no catalog was given. A root or catalog that does not verify is an
  /// exit-1 refusal.
  func verifiedWithPublisher(for command: String) throws -> (catalog: Catalog, publisher: CatalogPublisher)? {
    guard let catalog else { return nil }
    let trust: CatalogTrust
    let publisher: CatalogPublisher
    if let publicKey {
      let key = try KeyFiles.public(publicKey, for: "\(command) --public-key")
      trust = CatalogTrust(key: key)
      publisher = CatalogPublisher(key: key)
    } else {
      let chain = try RootOptions.chain(roots, for: command)
      trust = chain[chain.count - 1].catalogTrust
      publisher = try CatalogPublisher(chain: chain)
    }
    do {
      let verified = try CatalogFile.verify(contentsOf: catalog, trust: trust)
      if let note = try verified.checkNotExpired() { Terminal.standardError("pkgtool: \(note)\n") }
      return (verified, publisher)
    } catch let refusal as CatalogError {
      Terminal.standardError("pkgtool: refused: the catalog '\(catalog)' cannot be trusted: \(refusal)\n")
      throw ExitCode(1)
    }
  }
}

/// Reading chains of roots for a command.
enum RootOptions {
  /// The verified chain of `arguments` (files and folders), oldest first; a root that does not
  /// verify is an exit-1 refusal with one line.
  static func chain(_ arguments: [String], for command: String) throws -> [Root] {
    do { return try RootFile.verifyChain(arguments) } catch let refusal as CatalogError {
      Terminal.standardError("pkgtool: refused: the root cannot be trusted: \(refusal)\n")
      throw ExitCode(1)
    }
  }
}
