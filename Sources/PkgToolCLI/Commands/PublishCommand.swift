import ArgumentParser
import Foundation
import HostedContent

struct PublishCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "publish",
    abstract: "Validate packages and add them to a signed catalog, for hosting them yourself.",
    discussion: """
      Each package is validated first; if any breaks a rule, nothing is written. The catalog \
      lists, per product, every version with its URL (--base-url plus the file name), size, \
      SHA-256, ContentVersion and --min-app-version, and carries an Ed25519 signature over its \
      canonical JSON (docs/catalog.md). Publishing again to the same file keeps the old entries \
      in a stable order and raises the catalog's sequence number; a version already published \
      from other bytes is refused. Upload the packages and then the catalog.

      Every catalog written expires (--expires-in, default 30d): clients refuse it after that, \
      so a replayed old catalog cannot freeze them on old content forever. Sign it again before \
      then with pkgtool catalog renew (or any publish, remove or rebase). --previous OLD.json \
      continues OLD's sequence when the catalog is written to a new file, so clients that used \
      OLD accept it. To withdraw a version or move to another server, see pkgtool catalog.

      Examples:
        pkgtool publish dist/com.example.book-1.1.pkg --key signing.key \\
            --base-url https://cdn.example.com/content -o catalog.json
        pkgtool publish dist/*.pkg --key signing.key -o new/catalog.json \\
            --base-url https://cdn2.example.com --previous catalog.json \\
            --expires-in 7d
        pkgtool install https://cdn.example.com/content/com.example.book-1.1.pkg \\
            --catalog catalog.json --public-key signing.key.pub --into Docs

      Exit status: 0 written (or nothing new), 1 a package broke a rule, 2 could not publish.
      """)

  @Argument(help: ArgumentHelp("The package files to publish.", valueName: "package"), completion: .file())
  var packages: [String]

  @OptionGroup var signing: CatalogKeyOptions

  @Option(
    name: .customLong("base-url"),
    help: ArgumentHelp("Where the packages will be served (https://…).", valueName: "url"))
  var baseURL: String

  @Option(
    name: [.short, .long], help: ArgumentHelp("The catalog to write or extend.", valueName: "catalog.json"),
    completion: .file())
  var output: String

  @Option(
    name: .customLong("min-app-version"),
    help: ArgumentHelp("The lowest app version that can use these packages.", valueName: "version"))
  var minimumAppVersion: String?

  @Option(
    help: ArgumentHelp(
      "A catalog (signed with the same key) whose sequence a new output file continues.", valueName: "old.json"),
    completion: .file())
  var previous: String?

  @Option(
    name: .customLong("expires-in"),
    help: ArgumentHelp(
      "How long clients trust the catalog: a number and s, m, h or d (at most 3650d).", valueName: "duration"),
    transform: DurationArgument.option(range: 1...DurationArgument.longestLifetime, unitRequired: true))
  var expiresIn = DurationArgument(seconds: 30 * 86_400)

  @Flag(help: "Print the result as JSON.") var json = false
  @Flag(name: [.short, .long], help: "Print nothing but errors.") var quiet = false

  @OptionGroup var rules: PackageRuleOptions
  @OptionGroup(title: "Limits") var limits: ReaderLimitOptions
  @OptionGroup var progressOption: ProgressOptions

  func validate() throws {
    if packages.isEmpty { throw ValidationError("Name at least one package to publish.") }
  }

  func run() throws {
    let signer = try signing.signer(for: "publish")
    var options = Publish.Options(baseURL: baseURL)
    options.minimumAppVersion = minimumAppVersion
    options.previous = previous
    options.lifetime = expiresIn.wholeSeconds
    options.validation = rules.validationOptions
    options.limits = limits.limits
    // One line per package, each finished before the next starts.
    var progress: ProgressLine?
    let result: Publish.Result
    do {
      defer { progress?.finish() }
      result = try Publish.run(
        packages: packages, signer: signer, output: output, options: options,
        progress: { path in
          progress?.finish()
          progress = ProgressLine("publishing: validating '\(path)'", options: progressOption, silent: quiet || json)
          return progress?.handler
        })
    }
    let report = PublishReport(result, catalogPath: output, keyIDs: signer.keyIDs, strict: rules.strict)
    if !result.refused.isEmpty {
      // The refused packages' findings, with --json and --quiet too.
      Terminal.standardOutput(report.text)
      Terminal.standardError(
        "pkgtool: publish refused: \(result.refused.count) package(s) broke a rule; '\(output)' was not changed\n")
      throw ExitCode(1)
    }
    if json {
      Terminal.standardOutput(report.json)
    } else if !quiet {
      Terminal.standardOutput(report.text)
    }
  }
}
