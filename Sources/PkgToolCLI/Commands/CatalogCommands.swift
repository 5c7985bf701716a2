import ArgumentParser
import Foundation
import HostedContent

struct KeygenCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "keygen",
    abstract: "Make an Ed25519 key pair for signing catalogs.",
    discussion: """
      Writes the private key to KEY (created 0600, never printed, never overwritten) and the \\
      public key to KEY.pub. Keep KEY out of the repository; ship KEY.pub (or the base64 line it \\
      holds) in the app, which checks every catalog with it.

      Examples:
        pkgtool keygen -o ~/.keys/content-signing
        pkgtool publish dist/*.pkg --key ~/.keys/content-signing \\\\
            --base-url https://cdn.example.com/content -o catalog.json
      """)

  @Option(name: [.short, .long], help: ArgumentHelp("The private key file to create (KEY.pub is made beside it).", valueName: "key"))
  var output: String

  @Flag(name: [.short, .long], help: "Print nothing.")
  var quiet = false

  func run() throws {
    let key = CatalogSigningKey()
    try key.write(to: output)
    if !quiet {
      Terminal.standardOutput("wrote \(output) (private, 0600) and \(output).pub\npublic key \(key.publicKey.base64) (id \(key.publicKey.keyID))\n")
    }
  }
}

struct PublishCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "publish",
    abstract: "Validate packages and add them to a signed catalog, for hosting them yourself.",
    discussion: """
      Each package is validated first; if any breaks a rule, nothing is written. The catalog \\
      lists, per product, every version with its URL (--base-url plus the file name), size, \\
      SHA-256, ContentVersion and --min-app-version, and carries an Ed25519 signature over its \\
      canonical JSON (docs/catalog.md). Publishing again to the same file keeps the old entries \\
      in a stable order and raises the catalog's sequence number; a version already published \\
      from other bytes is refused. Upload the packages and then the catalog.

      Examples:
        pkgtool publish dist/com.example.book-1.1.pkg --key signing.key \\\\
            --base-url https://cdn.example.com/content -o catalog.json
        pkgtool install https://cdn.example.com/content/com.example.book-1.1.pkg \\\\
            --catalog catalog.json --public-key signing.key.pub --into Docs

      Exit status: 0 written (or nothing new), 1 a package broke a rule, 2 could not publish.
      """)

  @Argument(help: ArgumentHelp("The package files to publish.", valueName: "package"))
  var packages: [String]

  @Option(help: ArgumentHelp("The private key (from pkgtool keygen).", valueName: "key"))
  var key: String

  @Option(name: .customLong("base-url"), help: ArgumentHelp("Where the packages will be served (https://…).", valueName: "url"))
  var baseURL: String

  @Option(name: [.short, .long], help: ArgumentHelp("The catalog to write or extend.", valueName: "catalog.json"))
  var output: String

  @Option(name: .customLong("min-app-version"), help: ArgumentHelp("The lowest app version that can use these packages.", valueName: "version"))
  var minimumAppVersion: String?

  @Flag(help: "Print the result as JSON.") var json = false
  @Flag(name: [.short, .long], help: "Print nothing but errors.") var quiet = false

  @OptionGroup var rules: RuleOptions
  @OptionGroup(title: "Limits") var limits: ReaderLimitOptions

  func validate() throws {
    if packages.isEmpty { throw ValidationError("Name at least one package to publish.") }
  }

  struct Summary: Encodable {
    var catalog: String
    var written: Bool
    var sequence: Int64
    var added: [String]
    var products: Int
  }

  func run() throws {
    let signingKey = try CatalogSigningKey(contentsOf: key)
    var options = Publish.Options(baseURL: baseURL)
    options.minimumAppVersion = minimumAppVersion
    options.validation = rules.validationOptions
    options.limits = limits.limits
    let result = try Publish.run(packages: packages, key: signingKey, output: output, options: options)
    if !result.refused.isEmpty {
      for (path, inspection) in result.refused {
        Terminal.standardOutput(findingLines(inspection, displayPath: path, strict: rules.strict))
      }
      Terminal.standardError("pkgtool: publish refused: \(result.refused.count) package(s) broke a rule; '\(output)' was not changed\n")
      throw ExitCode(1)
    }
    if json {
      Terminal.standardOutput(jsonText(Summary(catalog: output, written: result.written, sequence: result.catalog.sequence, added: result.added, products: result.catalog.products.count)))
    } else if !quiet {
      if result.written {
        Terminal.standardOutput("published \(result.added.joined(separator: ", ")) in \(output) (sequence \(result.catalog.sequence), signed by key \(signingKey.publicKey.keyID))\n")
      } else {
        Terminal.standardOutput("\(output) already lists these packages, byte for byte; nothing written\n")
      }
    }
  }
}

/// `--catalog` and `--public-key`, for install and unpack.
struct CatalogOptions: ParsableArguments {
  @Option(help: ArgumentHelp("A signed catalog (from pkgtool publish): the package must be one of its entries, byte for byte.", valueName: "catalog.json"))
  var catalog: String?

  @Option(name: .customLong("public-key"), help: ArgumentHelp("The publisher's public key (KEY.pub) that must have signed the catalog.", valueName: "key.pub"))
  var publicKey: String?

  func validate() throws {
    if (catalog == nil) != (publicKey == nil) {
      throw ValidationError("--catalog and --public-key go together: a catalog is trusted only with the key that signed it.")
    }
  }

  /// The verified catalog, or nil when none was given. A catalog that does not verify is an
  /// exit-1 refusal.
  func verified() throws -> Catalog? {
    guard let catalog, let publicKey else { return nil }
    let key = try CatalogPublicKey(contentsOf: publicKey)
    do {
      return try CatalogFile.verify(contentsOf: catalog, publicKey: key)
    } catch let refusal as CatalogError {
      Terminal.standardError("pkgtool: refused: the catalog '\(catalog)' cannot be trusted: \(refusal)\n")
      throw ExitCode(1)
    }
  }
}
