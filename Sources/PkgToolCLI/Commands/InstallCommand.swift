import ArgumentParser
import HostedContent
import SystemIO

struct InstallCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "install",
    abstract: "Install a package into an app's documents folder, by product and version.",
    discussion: """
      What an app should do after a download: the files of Contents/ land in \
      DOCS/<product id>/<version>/, then DOCS/<product id>/current (a symlink) switches to it in \
      one atomic rename, so readers never see a mix of two versions. A record of what is \
      installed (package SHA-256, time) is kept in DOCS/<product id>/.pkgtool/. Installs of one \
      product take a lock (.pkgtool/lock) and wait for each other (--lock-timeout). Installing the \
      same package again changes nothing; the same version from other bytes is swapped in one \
      step, with a warning; a lower version is refused unless --allow-downgrade. The product id \
      and version are checked before they become folder names.

      With --catalog and --public-key (docs/catalog.md), the catalog's signature is checked \
      first, then the package must be one of its entries byte for byte (size, SHA-256, product, \
      version). With --root instead of --public-key, the roots are verified as a chain and the \
      catalog must carry the catalog threshold of the newest. DOCS/.pkgtool/trust.json keeps, \
      per publisher (its roots and keys) and for every product, the newest root version and \
      the highest catalog sequence accepted: a lower one is refused (a replay or a rollback), \
      and so is --public-key once DOCS was installed into under a root. A URL is fetched to a \
      private temporary file, stopping past the size the catalog gives. --catalog, and every \
      --root but the first (the one the app ships), may be https:// URLs too: fetched the same \
      way (at most 64 MiB for a catalog, 1 MiB for a root), then checked as files are.

      Examples:
        pkgtool install com.example.book-1.1.pkg --into ~/Documents --keep 2
        pkgtool install https://cdn.example.com/content/com.example.book-1.1.pkg \\
            --catalog catalog.json --public-key signing.key.pub --into Docs
        pkgtool install com.example.book-1.1.pkg --into Docs \\
            --catalog https://cdn.example.com/content/catalog.json \\
            --root root-1.json --root https://cdn.example.com/content/root-2.json
      """)

  @Argument(
    help: ArgumentHelp(
      "The package: a path, or an http(s)/file URL (fetched to a private temporary file first).", valueName: "package"),
    completion: .file())
  var package: String

  @Option(help: ArgumentHelp("The documents folder.", valueName: "docs"), completion: .directory)
  var into: String

  @OptionGroup(title: "Signed catalog") var catalogOptions: CatalogOptions

  @Option(help: ArgumentHelp("Keep at most N versions (the current one included); remove older ones.", valueName: "n"))
  var keep: Int?

  @Flag(name: .customLong("allow-downgrade"), help: "Allow installing a lower version than the current one.")
  var allowDowngrade = false

  @Option(
    name: .customLong("lock-timeout"),
    help: ArgumentHelp(
      "How long to wait for another install of the same product to finish (30s, 2m; a number alone is seconds); then exit 2.",
      valueName: "duration"),
    transform: DurationArgument.option(range: 0...86_400))
  var lockTimeout = DurationArgument(seconds: 60)

  @Option(
    help: ArgumentHelp(
      "Threads writing files (default 1) and decoding data (default: one per processor). Same files for any n.",
      valueName: "n"))
  var jobs: Int?

  @Flag(help: "Print the result as JSON.")
  var json = false

  @Flag(name: [.short, .long], help: "Print nothing but errors and warnings.")
  var quiet = false

  @OptionGroup var rules: PackageRuleOptions

  @OptionGroup(title: "Limits") var limits: ReaderLimitOptions

  @OptionGroup(title: "Download") var downloading: DownloadOptions

  @OptionGroup var progressOption: ProgressOptions

  func validate() throws {
    if let keep, keep < 1 { throw ValidationError("--keep must be at least 1") }
  }

  func run() throws {
    var options = Install.Options()
    options.keep = keep
    options.allowDowngrade = allowDowngrade
    options.lockTimeout = lockTimeout.seconds
    options.validation = rules.validationOptions
    options.limits = limits.limits
    if let jobs {
      options.threads = min(max(1, jobs), 64)
      options.limits.decodeThreads = max(1, jobs)
    }
    let trusted = try catalogOptions.verifiedWithPublisher(for: "install", deadline: downloading.deadline)
    options.catalog = trusted?.catalog
    options.publisher = trusted?.publisher
    let download = try DownloadedPackage(
      package, catalog: options.catalog, maxSize: options.validation.maxSize, deadline: downloading.deadline)
    if download.path != package { options.displayName = package }
    let progress = ProgressLine("installing '\(package)'", options: progressOption, silent: quiet || json)
    let result: Install.Result
    do {
      defer { progress.finish() }
      result = try Install.run(package: download.path, into: into, options: options, progress: progress.handler)
    }
    let report = InstallReport(result, displayPath: package, strict: rules.strict, keep: keep)
    if json {
      Terminal.standardOutput(report.json)
    } else if quiet {
      if result.action == .replaced { warnReplaced(report) }
      if let inspection = result.inspection, inspection.failed(strict: rules.strict) {
        Terminal.standardOutput(findingLines(inspection, displayPath: package, strict: rules.strict))
      }
    } else {
      Terminal.standardOutput(report.text)
      if result.action == .replaced { warnReplaced(report) }
    }
    switch result.action {
    case .refusedDowngrade:
      Terminal.standardError(
        "pkgtool: install refused: \(result.version?.description ?? "?") is lower than the installed \(result.previous?.description ?? "?") (pass --allow-downgrade to install it anyway)\n"
      )
      throw ExitCode(1)
    case .invalid:
      Terminal.standardError("pkgtool: install refused: '\(package)' broke a rule; nothing was changed\n")
      throw ExitCode(1)
    case .refusedByCatalog:
      Terminal.standardError(
        "pkgtool: install refused: \(result.catalogProblem ?? "the catalog does not list this package"); nothing was changed\n"
      )
      throw ExitCode(1)
    default: break
    }
  }

  func warnReplaced(_ report: InstallReport) {
    Terminal.standardError("pkgtool: warning: \(report.replacedWarning)\n")
  }
}
