import ArgumentParser
import Foundation
import HostedContent

/// `--catalog` with `--public-key` or `--root`, for install and unpack.
struct CatalogOptions: ParsableArguments {
  @Option(
    help: ArgumentHelp(
      "A signed catalog (from pkgtool publish), a file or an https:// URL: the package must be one of its entries, byte for byte.",
      valueName: "catalog.json"), completion: .file())
  var catalog: String?

  @Option(
    name: .customLong("public-key"),
    help: ArgumentHelp("The publisher's public key (KEY.pub) that must have signed the catalog.", valueName: "key.pub"),
    completion: .file())
  var publicKey: String?

  @Option(
    name: .customLong("root"),
    help: ArgumentHelp(
      "Instead of --public-key: the root the app ships, then each newer version (repeat; a folder of them, or an https:// URL of one); the catalog must meet the newest's catalog threshold.",
      valueName: "root.json"), completion: .file())
  var roots: [String] = []

  func validate() throws {
    if catalog != nil, (publicKey == nil) == roots.isEmpty {
      throw ValidationError(
        "--catalog goes with --public-key or --root (one of them): a catalog is trusted only with the keys that signed it."
      )
    }
    try RootOptions.validate(roots)
    if catalog == nil, publicKey != nil || !roots.isEmpty {
      throw ValidationError(
        "--\(publicKey != nil ? "public-key" : "root") goes with --catalog: it says who must have signed the catalog.")
    }
  }

  /// The verified catalog, or nil when none was given. A catalog that does not verify is an
  /// exit-1 refusal.
  func verified(for command: String, deadline: ResumingDownload.Deadline) throws -> Catalog? {
    try verifiedWithPublisher(for: command, deadline: deadline)?.catalog
  }

  /// The verified catalog and whom it was verified as coming from (the key, or the chain of
  /// roots), or nil when no catalog was given. A root or catalog that does not verify is an
  /// exit-1 refusal.
  /// A catalog or root given by URL is fetched within `deadline` (``DocumentDownload``).
  func verifiedWithPublisher(for command: String, deadline: ResumingDownload.Deadline) throws -> (
    catalog: Catalog, publisher: CatalogPublisher
  )? {
    guard let catalog else { return nil }
    let trust: CatalogTrust
    let publisher: CatalogPublisher
    if let publicKey {
      let key = try KeyFiles.public(publicKey, for: "\(command) --public-key")
      trust = CatalogTrust(key: key)
      publisher = CatalogPublisher(key: key)
    } else {
      let chain = try RootOptions.chain(roots, for: command, deadline: deadline)
      trust = chain[chain.count - 1].catalogTrust
      publisher = try CatalogPublisher(chain: chain)
    }
    do {
      let verified = try CatalogOptions.verify(catalog, trust: trust, deadline: deadline)
      if let note = try verified.checkNotExpired() { Terminal.standardError("pkgtool: \(note)\n") }
      return (verified, publisher)
    } catch let refusal as CatalogError {
      Terminal.standardError(
        "pkgtool: refused: the catalog '\(DocumentDownload.shown(catalog))' cannot be trusted: \(refusal)\n")
      throw ExitCode(1)
    }
  }

  /// The catalog at `location` (a path, or an http(s) URL fetched first), verified with `trust`.
  static func verify(_ location: String, trust: CatalogTrust, deadline: ResumingDownload.Deadline) throws -> Catalog {
    guard DocumentDownload.isURL(location) else { return try CatalogFile.verify(contentsOf: location, trust: trust) }
    return try CatalogFile.verify(DocumentDownload.fetch(location, kind: .catalog, deadline: deadline), trust: trust)
  }
}

/// Reading chains of roots for a command.
enum RootOptions {
  /// The verified chain of `arguments` (files and folders), oldest first; a root that does not
  /// verify is an exit-1 refusal with one line.
  /// An http(s) URL among `arguments` is fetched first (``DocumentDownload``, within
  /// `deadline`); the others are files and folders.
  static func chain(_ arguments: [String], for command: String, deadline: ResumingDownload.Deadline = .standard)
    throws -> [Root]
  {
    do {
      guard arguments.contains(where: DocumentDownload.isURL) else { return try RootFile.verifyChain(arguments) }
      var parsed: [RootFile.Parsed] = []
      for argument in arguments {
        if DocumentDownload.isURL(argument) {
          let bytes = try DocumentDownload.fetch(argument, kind: .root, deadline: deadline)
          parsed.append(try RootFile.parse(bytes, name: DocumentDownload.shown(argument)))
        } else {
          parsed += try RootFile.paths([argument]).map(RootFile.parse(contentsOf:))
        }
      }
      return try RootFile.verifyChain(parsed: parsed)
    } catch let refusal as CatalogError {
      Terminal.standardError("pkgtool: refused: the root cannot be trusted: \(refusal)\n")
      throw ExitCode(1)
    }
  }

  /// Refuses `--root` given only as URLs: the lowest version is the anchor of trust, the root
  /// the app ships, and is never taken from a server (newer versions may be: each must be
  /// signed by the one before it).
  static func validate(_ arguments: [String]) throws {
    if !arguments.isEmpty, arguments.allSatisfy(DocumentDownload.isURL) {
      throw ValidationError(
        "--root needs the root the app ships as a file (the anchor of trust is never fetched); a URL may give only the newer versions: --root root-1.json --root https://…/root-2.json"
      )
    }
  }
}
