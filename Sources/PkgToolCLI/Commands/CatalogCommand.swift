import ArgumentParser
import Foundation
import HostedContent

struct CatalogCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "catalog",
    abstract: "Show, verify and change a signed catalog: withdraw a version, move to another server.",
    discussion: """
      A catalog lives as long as the content it lists. Every change is signed again with the \
      secret key, raises the sequence by one (so clients accept it over the old one) and sets a \
      new expiry (--expires-in, default 30d); the file is replaced whole, under the lock publish \
      takes, and nothing changes when the key or the catalog does not check (docs/catalog.md).

      A change never drops a signature unawares: when the catalog carries a signature by a key \
      not given with --key, nothing is written (exit 2, naming the key ids) unless --root shows \
      the newest root's catalog threshold is still met, or --drop-signature names each such key.

      Examples:
        pkgtool catalog show catalog.json
        pkgtool catalog verify catalog.json --public-key signing.key.pub
        pkgtool catalog remove catalog.json com.example.book 1.1 --key signing.key
        pkgtool catalog rebase catalog.json --key signing.key \\
            --base-url https://cdn2.example.com/content
        pkgtool catalog renew catalog.json --key signing.key --expires-in 30d
      """,
    subcommands: [
      CatalogShowCommand.self, CatalogVerifyCommand.self, CatalogRemoveCommand.self, CatalogRebaseCommand.self,
      CatalogRenewCommand.self,
    ])
}

/// The secret keys that sign a catalog and the roots it is signed under: `publish` and every
/// command that signs again.
struct CatalogKeyOptions: ParsableArguments {
  @Option(
    name: .customLong("key"),
    help: ArgumentHelp(
      "A secret key (KEY, from pkgtool keygen; not KEY.pub); repeat with distinct keys to meet a root's catalog threshold.",
      valueName: "key"), completion: .file())
  var keys: [String] = []

  @Option(
    name: .customLong("root"),
    help: ArgumentHelp(
      "A root file, or a folder of them: the catalog may have been signed under any of them; the new one must meet the newest's catalog threshold.",
      valueName: "root.json"), completion: .file())
  var roots: [String] = []

  func validate() throws { _ = try KeyFiles.distinct(keys) }

  /// The keys and the verified roots; a root that does not verify is an exit-1 refusal.
  func signer(for command: String) throws -> CatalogSigner {
    let keys = try KeyFiles.secrets(try KeyFiles.distinct(keys), for: command)
    return CatalogSigner(keys: keys, roots: roots.isEmpty ? [] : try RootOptions.chain(roots, for: command))
  }
}

/// The secret keys, the roots and the new lifetime, for the commands that sign again.
struct CatalogSigningOptions: ParsableArguments {
  @OptionGroup var signing: CatalogKeyOptions

  /// The keys and the verified roots; a root that does not verify is an exit-1 refusal.
  func signer(for command: String) throws -> CatalogSigner { try signing.signer(for: command) }

  @Option(
    name: .customLong("expires-in"),
    help: ArgumentHelp(
      "How long clients trust the catalog from now: a number and s, m, h or d (at most 3650d).",
      valueName: "duration"),
    transform: DurationArgument.option(range: 1...DurationArgument.longestLifetime, unitRequired: true))
  var expiresIn = DurationArgument(seconds: 30 * 86_400)

  @Option(
    name: .customLong("drop-signature"),
    help: ArgumentHelp(
      "The id of a key whose signature the catalog carries and may lose (repeat for each); without it, or --root showing the threshold is still met, a signature of a key not given with --key is kept by refusing (exit 2).",
      valueName: "key-id"))
  var dropSignatures: [String] = []

  @Flag(name: [.short, .long], help: "Print nothing but errors.") var quiet = false

  var lifetime: Int64 { expiresIn.wholeSeconds }

  func report(_ change: CatalogEditReport.Change, _ path: String, _ result: CatalogEdit.Result, signer: CatalogSigner) {
    guard !quiet else { return }
    Terminal.standardOutput(
      CatalogEditReport(result, change: change, displayPath: path, keyIDs: signer.keyIDs).text)
  }
}

struct CatalogShowCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "show",
    abstract: "Print a catalog's products, versions, sequence, expiry and signing keys.",
    discussion: """
      Shows what the file says without checking its signature; pkgtool catalog verify checks it.

      Example:
        pkgtool catalog show catalog.json --json
      """)

  @Argument(help: ArgumentHelp("The catalog file.", valueName: "catalog.json"), completion: .file()) var catalog: String
  @Flag(help: "Print the catalog as JSON.") var json = false

  func run() throws {
    let (shown, keyIDs) = try CatalogFile.unverified(contentsOf: catalog)
    let report = CatalogShowReport(shown, keyIDs: keyIDs, displayPath: catalog)
    Terminal.standardOutput(json ? report.json : report.text)
  }
}

struct CatalogVerifyCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "verify",
    abstract: "Check a catalog's signature, form and expiry with the publisher's public key.",
    discussion: """
      Exit status: 0 the catalog is valid; 1 it is not (one line says why: no signature of \
      this key, a signature that does not verify, expired, a version listed twice, …); 2 the \
      check could not run (missing file, a secret key given for the public one).

      The catalog, and each --root but the first, may be an https:// URL (plain http:// only for \
      a loopback host): it is fetched as install fetches a package (curl without .curlrc, never \
      from https to http, at most 64 MiB for a catalog and 1 MiB for a root) and then checked as \
      a file is. The root the app ships is always a file.

      Example:
        pkgtool catalog verify catalog.json --public-key signing.key.pub
        pkgtool catalog verify catalog.json --root root-1.json --root root-2.json
        pkgtool catalog verify https://cdn.example.com/content/catalog.json \\
            --root root-1.json --root https://cdn.example.com/content/root-2.json
      """)

  @Argument(
    help: ArgumentHelp("The catalog: a file, or an https:// URL.", valueName: "catalog.json"),
    completion: .file())
  var catalog: String

  @Option(
    name: .customLong("public-key"),
    help: ArgumentHelp("The publisher's public key (KEY.pub).", valueName: "key.pub"), completion: .file())
  var publicKey: String?

  @Option(
    name: .customLong("root"),
    help: ArgumentHelp(
      "Instead of --public-key: the root file the app ships, then each newer version (a folder of them, or an https:// URL of one).",
      valueName: "root.json"), completion: .file())
  var roots: [String] = []

  @Flag(name: [.short, .long], help: "Print nothing; the exit status says it.") var quiet = false

  func validate() throws {
    if (publicKey == nil) == roots.isEmpty {
      throw ValidationError("Give --public-key KEY.pub or --root ROOT.json (one of them).")
    }
    try RootOptions.validate(roots)
  }

  func run() throws {
    let trust: CatalogTrust
    let trusted: CatalogVerifyReport.Trusted
    if let publicKey {
      let key = try KeyFiles.public(publicKey, for: "catalog verify --public-key")
      trust = CatalogTrust(key: key)
      trusted = .key(id: key.keyID)
    } else {
      let root = try RootOptions.chain(roots, for: "catalog verify").last!
      trust = root.catalogTrust
      trusted = .root(root)
    }
    let verified: Catalog
    do {
      verified = try CatalogOptions.verify(catalog, trust: trust, deadline: .standard)
      if let note = try verified.checkNotExpired(), !quiet { Terminal.standardError("pkgtool: \(note)\n") }
    } catch let refusal as CatalogError {
      Terminal.standardError("pkgtool: invalid: '\(DocumentDownload.shown(catalog))': \(refusal)\n")
      throw ExitCode(1)
    }
    if !quiet {
      Terminal.standardOutput(
        CatalogVerifyReport(verified, displayPath: DocumentDownload.shown(catalog), trusted: trusted).text)
    }
  }
}

struct CatalogRemoveCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "remove",
    abstract: "Withdraw one version from a catalog, signing it again in place.",
    discussion: """
      Clients that trust the catalog no longer install those bytes; a client that already has \
      them keeps them. A product whose last version goes leaves the catalog.

      Example:
        pkgtool catalog remove catalog.json com.example.book 1.1 --key signing.key
      """)

  @Argument(help: ArgumentHelp("The catalog file.", valueName: "catalog.json"), completion: .file()) var catalog: String
  @Argument(help: ArgumentHelp("The product identifier.", valueName: "product")) var product: String
  @Argument(help: ArgumentHelp("The ContentVersion to withdraw.", valueName: "version")) var version: String
  @OptionGroup var signing: CatalogSigningOptions

  func run() throws {
    let signer = try signing.signer(for: "catalog remove")
    let result = try CatalogEdit.remove(
      product: product, version: version, from: catalog, signer: signer, lifetime: signing.lifetime,
      droppingSignatures: signing.dropSignatures)
    signing.report(.removed(product: product, version: version), catalog, result, signer: signer)
  }
}

struct CatalogRebaseCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "rebase",
    abstract: "Move every URL in a catalog to a new base URL, keeping the file names.",
    discussion: """
      For a move to another server or CDN: upload the packages there first, then rebase and \
      upload the catalog. The base URL is checked as publish --base-url is (http, https or \
      file; no user name, query or fragment).

      Example:
        pkgtool catalog rebase catalog.json --key signing.key \\
            --base-url https://cdn2.example.com/content
      """)

  @Argument(help: ArgumentHelp("The catalog file.", valueName: "catalog.json"), completion: .file()) var catalog: String

  @Option(
    name: .customLong("base-url"),
    help: ArgumentHelp("Where the packages are served now (https://…).", valueName: "url"))
  var baseURL: String

  @OptionGroup var signing: CatalogSigningOptions

  func run() throws {
    let signer = try signing.signer(for: "catalog rebase")
    let result = try CatalogEdit.rebase(
      catalog, baseURL: baseURL, signer: signer, lifetime: signing.lifetime, droppingSignatures: signing.dropSignatures)
    signing.report(.rebased, catalog, result, signer: signer)
  }
}

struct CatalogRenewCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "renew",
    abstract: "Sign a catalog again with a new expiry, changing nothing else.",
    discussion: """
      Run it on a schedule well inside the lifetime (e.g. weekly with the default 30d), so \
      clients never see an expired catalog. Works on an expired catalog too.

      Example:
        pkgtool catalog renew catalog.json --key signing.key --expires-in 30d
      """)

  @Argument(help: ArgumentHelp("The catalog file.", valueName: "catalog.json"), completion: .file()) var catalog: String
  @OptionGroup var signing: CatalogSigningOptions

  func run() throws {
    let signer = try signing.signer(for: "catalog renew")
    let result = try CatalogEdit.renew(
      catalog, signer: signer, lifetime: signing.lifetime, droppingSignatures: signing.dropSignatures)
    signing.report(.renewed, catalog, result, signer: signer)
  }
}
