import ArgumentParser
import HostedContent
import SystemIO

struct UnpackCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "unpack",
    abstract: "Unpack a package safely, the way a device client does.",
    discussion: """
      Validates while extracting into a private folder beside DIR; only if every rule passes is \
      it renamed to DIR, which then holds exactly ContentInfo.plist and Contents/. On any error \
      DIR never appears (with --force, the old DIR stays as it was). Nothing is ever written \
      through a symlink or outside DIR; no device, FIFO, special bit or owner is applied.

      --keep-going opens a broken download for a look: every entry no rule found an error in and \
      whose data reads back is extracted (a package that breaks layout, content-info, \
      no-executable or the size limit, whose tail is damaged, or that was cut off: a .pkg's table \
      of contents is at its front, so what lies before the cut is read); every other entry is \
      listed with the reason it was skipped. Paths, symlinks and special files are still never \
      written unsafely. DIR then appears, and the exit status is still 1.

      Examples:
        pkgtool unpack com.example.book-1.0.pkg -o book
        pkgtool unpack broken-download.pkg -o look --keep-going
        pkgtool unpack - -o book < book-1.0.pkg   # or: curl -sf URL | pkgtool …
        pkgtool unpack book-1.1.pkg -o book --catalog catalog.json \\
            --public-key signing.key.pub
      """)

  @Argument(
    help: ArgumentHelp("The package: plain XAR, flat package or zip.", valueName: "package"),
    completion: .file())
  var package: String

  @Option(name: [.short, .long], help: ArgumentHelp("The folder to create.", valueName: "dir"), completion: .directory)
  var output: String

  @Flag(help: "Replace DIR if it exists (atomically; kept on failure).")
  var force = false

  @Option(
    help: ArgumentHelp(
      "Threads writing files (default 1; more can help on fast file systems) and decoding data (default: one per processor).",
      valueName: "n"))
  var jobs: Int?

  @Flag(
    name: .customLong("keep-going"),
    help: "Extract what is safe from a package that breaks rules; list what was skipped (still exits 1).")
  var keepGoing = false

  @OptionGroup(title: "Signed catalog") var catalogOptions: CatalogOptions

  @Flag(help: "Print the result as JSON.")
  var json = false

  @Flag(name: [.short, .long], help: "Print nothing but errors.")
  var quiet = false

  @OptionGroup var rules: RuleOptions

  @OptionGroup(title: "Limits") var limits: ReaderLimitOptions

  @OptionGroup(title: "Download") var downloading: DownloadOptions

  @OptionGroup var progressOption: ProgressOptions

  func run() throws {
    var options = Unpack.Options()
    options.force = force
    if let jobs { options.threads = min(max(1, jobs), 64) }
    options.validation = rules.validationOptions
    options.limits = limits.limits
    if let jobs { options.limits.decodeThreads = max(1, jobs) }
    options.keepGoing = keepGoing
    options.catalog = try catalogOptions.verified(for: "unpack", deadline: downloading.deadline)
    // `-`: standard input, spooled (at most --max-size bytes) and named `(standard input)`.
    let input = try StandardStreams.input(package, maxSize: options.validation.maxSize)
    let package = input.name
    let download =
      input.file == nil
      ? try DownloadedPackage(
        package, catalog: options.catalog, maxSize: options.validation.maxSize, deadline: downloading.deadline) : nil
    if let download, download.path != package { options.displayName = package }
    let progress = ProgressLine("unpacking '\(package)'", options: progressOption, silent: quiet || json)
    let result: Unpack.Result
    do {
      defer { progress.finish() }
      result = try Unpack.run(
        package: download?.path ?? package, file: input.file, destination: output,
        options: options, progress: progress.handler)
    } catch let refusal as CatalogError {
      Terminal.standardError("pkgtool: unpack refused: \(refusal); '\(output)' was not created\n")
      throw ExitCode(1)
    }
    let failed = result.inspection.failed(strict: rules.strict)
    let report = UnpackReport(result, displayPath: package, strict: rules.strict)
    if json {
      Terminal.standardOutput(report.json)
    } else if quiet {
      // Quiet: nothing but the findings of an unpack that fails.
      if failed {
        Terminal.standardOutput(findingLines(result.inspection, displayPath: package, strict: rules.strict))
      }
    } else {
      Terminal.standardOutput(report.text)
    }
    if result.output == nil {
      Terminal.standardError("pkgtool: unpack refused: '\(package)' broke a rule; '\(output)' was not created\n")
      throw ExitCode(1)
    }
    if failed {
      Terminal.standardError(
        "pkgtool: '\(package)' broke a rule; --keep-going extracted what was safe into '\(output)'\n")
      throw ExitCode(1)
    }
  }
}
