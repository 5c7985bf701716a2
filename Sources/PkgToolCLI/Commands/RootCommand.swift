import ArgumentParser
import Foundation
import HostedContent
import SystemIO

struct RootCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "root",
    abstract: "Make, rotate, show and verify the root that says which keys sign catalogs.",
    discussion: """
      A root (root.json) lists keys and two roles: the root keys (kept offline) sign roots, the \
      catalog keys sign catalogs, each with a threshold of distinct keys that must sign. The app \
      ships the first root; clients given --root check the catalog against the newest root of \
      the chain. A new version is trusted only when the threshold of the version before it \
      signed it, and the threshold of its own root keys (docs/catalog.md).

      Examples:
        pkgtool root init -o root-1.json --root-key root-a.key --root-key root-b.key \\
            --root-threshold 2 --catalog-key content.key.pub --catalog-threshold 1
        pkgtool root rotate root-1.json -o root-2.json --key root-a.key --key root-b.key \\
            --catalog-key content2.key.pub
        pkgtool root show root-2.json
        pkgtool root verify root-1.json root-2.json
      """,
    subcommands: [RootInitCommand.self, RootRotateCommand.self, RootShowCommand.self, RootVerifyCommand.self])
}

/// The roles of a new root version: keys, thresholds and lifetime.
struct RootRoleOptions: ParsableArguments {
  @Option(
    name: .customLong("root-key"),
    help: ArgumentHelp(
      "A secret key of the root role (repeat for several); each signs the new root.", valueName: "key"),
    completion: .file())
  var rootKeys: [String] = []

  @Option(
    name: .customLong("root-threshold"),
    help: ArgumentHelp("How many distinct root keys must sign a root.", valueName: "n"))
  var rootThreshold: Int?

  @Option(
    name: .customLong("catalog-key"),
    help: ArgumentHelp("A public key (KEY.pub) of the catalog role (repeat for several).", valueName: "key.pub"),
    completion: .file())
  var catalogKeys: [String] = []

  @Option(
    name: .customLong("catalog-threshold"),
    help: ArgumentHelp("How many distinct catalog keys must sign a catalog.", valueName: "n"))
  var catalogThreshold: Int?

  @Option(
    name: .customLong("expires-in"),
    help: ArgumentHelp(
      "How long clients trust the root: a number and s, m, h or d (at most 3650d).", valueName: "duration"),
    transform: DurationArgument.option(range: 1...DurationArgument.longestLifetime, unitRequired: true))
  var expiresIn = DurationArgument(seconds: 365 * 86_400)

  @Flag(name: [.short, .long], help: "Print nothing but errors.") var quiet = false

  func validate() throws {
    if !rootKeys.isEmpty { _ = try KeyFiles.distinct(rootKeys, option: "--root-key") }
    if !catalogKeys.isEmpty { _ = try KeyFiles.distinct(catalogKeys, option: "--catalog-key") }
  }

  func catalogPublicKeys(for command: String) throws -> [CatalogPublicKey]? {
    guard !catalogKeys.isEmpty else { return nil }
    var keys: [CatalogPublicKey] = []
    for path in catalogKeys {
      let key = try KeyFiles.public(path, for: "\(command) --catalog-key")
      if keys.contains(key) { throw ValidationError("--catalog-key '\(path)' is a key given before; each key once") }
      keys.append(key)
    }
    return keys
  }

  /// Writes the new root `output` whole (beside it, then linked into place), never over an
  /// existing file: every version of a root is kept for the clients that walk the chain.
  static func write(_ bytes: [UInt8], to output: String) throws {
    do {
      try PendingFile.write(bytes, to: output, replace: false)
    } catch let error as SystemError where error.code == EEXIST {
      throw OperationError(
        "'\(output)' already exists",
        hint: "a root version is never overwritten, since clients need every version; write the new one to a new file",
        code: .outputExists)
    } catch let error as SystemError {
      throw OperationError(
        "cannot write the root '\(output)': \(error.reason) (\(error.codeName))",
        hint: error.code == ENOENT ? "create the folder first" : nil, code: .outputUnwritable)
    }
  }

}

struct RootInitCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "init",
    abstract: "Write the first root (version 1), signed by every --root-key.",
    discussion: """
      Example:
        pkgtool root init -o root-1.json --root-key root-a.key --root-threshold 1 \\
            --catalog-key content.key.pub --catalog-threshold 1 --expires-in 365d
      """)

  @Option(
    name: [.short, .long], help: ArgumentHelp("The root file to write (never replaced).", valueName: "root.json"),
    completion: .file())
  var output: String

  @OptionGroup var roles: RootRoleOptions

  func validate() throws {
    if roles.rootKeys.isEmpty { throw ValidationError("Missing expected argument '--root-key <key>'") }
    if roles.catalogKeys.isEmpty { throw ValidationError("Missing expected argument '--catalog-key <key.pub>'") }
  }

  func run() throws {
    let rootKeys = try KeyFiles.secrets(roles.rootKeys, for: "root init --root-key")
    let root: Root
    do {
      root = try Root(
        version: 1, rootKeys: rootKeys.map(\.publicKey), rootThreshold: roles.rootThreshold ?? 1,
        catalogKeys: try roles.catalogPublicKeys(for: "root init") ?? [],
        catalogThreshold: roles.catalogThreshold ?? 1, lifetime: roles.expiresIn.wholeSeconds)
    } catch let problem as CatalogError {
      throw OperationError("cannot make the root '\(output)': \(problem)", hint: "see pkgtool root init --help")
    }
    try RootRoleOptions.write(try RootFile.encode(root, signedWith: rootKeys), to: output)
    if !roles.quiet { Terminal.standardOutput("wrote \(output): root \(RootShowReport.summary(root))\n") }
  }
}

struct RootRotateCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "rotate",
    abstract: "Write the next root version: new keys or thresholds, signed by the old root keys and the new.",
    discussion: """
      The new version is the old one plus one, with a new expiry; --root-key replaces the root \
      keys (their secret keys sign it too), --catalog-key the catalog keys, and the thresholds \
      stay unless given. Nothing is written unless the signatures meet both the old root's \
      threshold and the new root's.

      Example:
        pkgtool root rotate root-1.json -o root-2.json --key root-a.key \\
            --catalog-key content2.key.pub
      """)

  @Argument(help: ArgumentHelp("The current root.", valueName: "old.json"), completion: .file()) var old: String

  @Option(
    name: [.short, .long], help: ArgumentHelp("The new root file (never replaced).", valueName: "new.json"),
    completion: .file())
  var output: String

  @Option(
    name: .customLong("key"),
    help: ArgumentHelp("A secret root key of the old version (repeat to meet its threshold).", valueName: "key"),
    completion: .file())
  var keys: [String] = []

  @OptionGroup var roles: RootRoleOptions

  func validate() throws { _ = try KeyFiles.distinct(keys) }

  func run() throws {
    let previous = try RootOptions.chainIgnoringExpiry(old)
    let signers = try KeyFiles.secrets(
      try KeyFiles.distinct(keys + roles.rootKeys.filter { !keys.contains($0) }), for: "root rotate")
    let next: Root
    do {
      let rootKeys =
        roles.rootKeys.isEmpty
        ? try previous.roles.root.keyIds.map { try previous.publicKey($0) }
        : try KeyFiles.secrets(roles.rootKeys, for: "root rotate --root-key").map(\.publicKey)
      let catalogKeys =
        try roles.catalogPublicKeys(for: "root rotate")
        ?? (try previous.roles.catalog.keyIds.map { try previous.publicKey($0) })
      next = try Root(
        version: previous.version + 1, rootKeys: rootKeys,
        rootThreshold: roles.rootThreshold ?? previous.roles.root.threshold, catalogKeys: catalogKeys,
        catalogThreshold: roles.catalogThreshold ?? previous.roles.catalog.threshold,
        lifetime: roles.expiresIn.wholeSeconds)
    } catch let problem as CatalogError {
      throw OperationError("cannot make the root '\(output)': \(problem)", hint: "see pkgtool root rotate --help")
    }
    let ids = Set(signers.map(\.publicKey.keyID))
    for (root, what) in [(previous, "the old root (version \(previous.version))"), (next, "the new root")] {
      let count = ids.intersection(root.roles.root.keyIds).count
      guard count >= root.roles.root.threshold else {
        throw OperationError(
          "'\(output)' would carry \(count) signature(s) by root keys of \(what); its threshold is \(root.roles.root.threshold); nothing was written",
          hint: "give --key once for each root key to sign with: \(root.roles.root.keyIds.joined(separator: ", "))")
      }
    }
    let used = signers.filter {
      previous.roles.root.keyIds.contains($0.publicKey.keyID) || next.roles.root.keyIds.contains($0.publicKey.keyID)
    }
    try RootRoleOptions.write(try RootFile.encode(next, signedWith: used), to: output)
    if !roles.quiet {
      Terminal.standardOutput(
        "wrote \(output): root \(RootShowReport.summary(next)), signed by \(used.count) key(s)\n")
    }
  }
}

extension RootOptions {
  /// The root at `path`, checked for form and its own threshold, but not for expiry: an expired
  /// root can still be rotated (its keys sign the next version).
  static func chainIgnoringExpiry(_ path: String) throws -> Root {
    do {
      return try RootFile.verifyChain([path], now: .distantPast).last!
    } catch let refusal as CatalogError {
      Terminal.standardError("pkgtool: refused: the root cannot be trusted: \(refusal)\n")
      throw ExitCode(1)
    }
  }
}

struct RootShowCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "show",
    abstract: "Print a root's version, expiry, keys and roles, without checking it.",
    discussion: """
      pkgtool root verify checks it.

      Example:
        pkgtool root show root.json
      """)

  @Argument(help: ArgumentHelp("The root file.", valueName: "root.json"), completion: .file()) var root: String
  @Flag(help: "Print the root as JSON.") var json = false

  func run() throws {
    let parsed: RootFile.Parsed
    do { parsed = try RootFile.parse(contentsOf: root) } catch let refusal as CatalogError {
      Terminal.standardError("pkgtool: invalid: \(refusal)\n")
      throw ExitCode(1)
    }
    let report = RootShowReport(parsed.root, displayPath: root)
    Terminal.standardOutput(json ? report.json : report.text)
  }
}

struct RootVerifyCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "verify",
    abstract: "Check a root, or a chain of root versions, as a client does.",
    discussion: """
      The lowest version is taken as the one the app ships (it must carry its own root \
      threshold); each next version must be one higher and signed by the threshold of the \
      version before it and its own; the newest must not have expired. Exit status: 0 valid; 1 \
      not (one line says why); 2 the check could not run.

      Example:
        pkgtool root verify root-1.json root-2.json
      """)

  @Argument(help: ArgumentHelp("Root files, or a folder of them.", valueName: "root.json"), completion: .file())
  var roots: [String]

  @Flag(name: [.short, .long], help: "Print nothing; the exit status says it.") var quiet = false

  func validate() throws {
    if roots.isEmpty { throw ValidationError("Name at least one root file.") }
  }

  func run() throws {
    let chain: [Root]
    do { chain = try RootFile.verifyChain(roots) } catch let refusal as CatalogError {
      Terminal.standardError("pkgtool: invalid: \(refusal)\n")
      throw ExitCode(1)
    }
    if !quiet {
      Terminal.standardOutput(
        "valid: root \(RootShowReport.summary(chain.last!)) (chain of \(chain.count) from version \(chain[0].version))\n"
      )
    }
  }
}
