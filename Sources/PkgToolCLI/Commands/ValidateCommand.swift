import ArgumentParser
import HostedContent
import SystemIO

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

struct ValidateCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "validate",
    abstract: "Check packages (or content folders) against every rule.",
    discussion: """
      Reads each package once and verifies every checksum. Accepts a plain XAR package, an \
      Apple flat package (productbuild --content) and the zip a client downloads; the format is \
      found from the bytes. A content project (ContentInfo.plist + Contents/) is checked as \
      build would package it: files build leaves out are listed (README and the like in the \
      summary, junk as a note, anything else at the root as a warning), never silently. Prints compiler-style lines, one per \
      finding, then a summary per input.

      A project's .pkgtoolignore is honoured as build honours it, and --exclude PATTERN \
      (repeatable, gitignore syntax, see pkgtool build --help) adds patterns as build's does; \
      --exclude is refused for a package, which holds what it holds.

      A folder holding ContentInfo.plist or Contents/ is a content project; a folder holding \
      packages (.pkg, .zip, .aar), such as a dist/ folder, stands for every package in it.

      With --output, the report file is replaced (atomically) on every run, and written even \
      when an input cannot be read (exit 2): SARIF then carries a toolExecutionNotifications \
      entry, JUnit an <error>, so an upload step after it never finds a previous run's report; \
      an interrupted run (Ctrl-C, SIGTERM) leaves a report that says it did not finish. \
      With --project DIR, the folder the package was built from, SARIF and GitHub reports point \
      a finding about an entry at DIR's file instead of the package. The one-line verdict goes to standard error. SARIF's helpUri points into \
      $PKGTOOL_DOCS_URL when it is set (the published docs/rules.md). `-` reads a package from \
      standard input (its form found from the bytes, at most --max-size bytes), named \
      "(standard input)" in the report; `-o -` writes the report to standard output.

      Examples:
        pkgtool validate book-1.1.pkg
        pkgtool validate book-1.1.pkg --against book-1.0.pkg \\
            --product-id com.example.book
        pkgtool validate packages/*.pkg --reporter sarif -o pkgtool.sarif
        pkgtool validate dist/MyBook.pkg --project MyBook --reporter github
        pkgtool validate dist/ --reporter junit -o pkgtool-junit.xml
        pkgtool validate MyBook --json
        pkgtool validate - < book-1.1.pkg   # or: curl -sf URL | pkgtool validate -
        pkgtool validate dist/ --progress    # a progress line every 5 s in a CI log

      Exit status: 0 valid, 1 a rule was broken (warnings count with --strict), 2 could not check.
      """)

  @Argument(help: ArgumentHelp("The package files or content folders.", valueName: "package"), completion: .file())
  var paths: [String]

  @Option(
    help: ArgumentHelp(
      "The previous package of the same product: ContentVersion must be greater than its.", valueName: "old.pkg"),
    completion: .file())
  var against: String?

  @Option(
    name: .customLong("exclude"),
    help: ArgumentHelp(
      "For a content project: leave out paths matching this gitignore pattern, as build --exclude does (repeatable).",
      valueName: "pattern"))
  var exclude: [String] = []

  @OptionGroup var rules: RuleOptions

  @OptionGroup(title: "Limits") var limits: ReaderLimitOptions

  @Option(
    help: ArgumentHelp(
      "Threads decoding and verifying files' data (default: one per processor); the verdict is the same for any number.",
      valueName: "n"))
  var jobs: Int?

  /// The reader's limits, with the decoding threads --jobs asks for.
  var readerLimits: ReaderLimits {
    var readerLimits = limits.limits
    if let jobs { readerLimits.decodeThreads = max(1, jobs) }
    return readerLimits
  }

  @Option(help: ArgumentHelp("Report format.", valueName: "format"))
  var reporter: ReportFormat = .text

  @Flag(help: "Short for --reporter json.")
  var json = false

  @Option(
    name: [.short, .long],
    help: ArgumentHelp("Write the report to this file instead of standard output.", valueName: "file"),
    completion: .file())
  var output: String?

  @Option(
    help: ArgumentHelp(
      "Make file paths in SARIF and GitHub reports relative to this folder (default: the working directory).",
      valueName: "dir"), completion: .directory)
  var base: String?

  @Option(
    help: ArgumentHelp(
      "The content project the package was built from: SARIF and GitHub reports point each entry's finding at the project's file, not at the package.",
      valueName: "dir"), completion: .directory)
  var project: String?

  @Flag(help: ArgumentHelp("Accepted for compatibility: the report file is always replaced.", visibility: .hidden))
  var force = false

  @Flag(
    name: [.short, .long], help: "Print nothing on standard output when every input is valid (the exit status tells).")
  var quiet = false

  @OptionGroup var progressOption: ProgressOptions

  func validate() throws {
    if paths.isEmpty { throw ValidationError("Name at least one package or content folder.") }
    try StandardStreams.refuseRepeatedInput(paths)
    if json && reporter != .text && reporter != .json {
      throw ValidationError("--json and --reporter \(reporter.rawValue) ask for two formats; choose one.")
    }
  }

  func run() throws {
    let format: ReportFormat = json ? .json : reporter
    let paths = try PackageFolder.expand(self.paths)
    // `-o -`: the report on standard output, as without -o.
    let output = self.output.flatMap { $0 == "-" ? nil : $0 }
    if let output {
      // A report is an output: it is replaced on every run. Only an input is never overwritten.
      for input in paths where !StandardInput.isNamed(input) && Paths.sameFile(output, input) {
        throw OperationError(
          "'\(output)' is a package being validated; the report would overwrite it",
          hint: "write the report to another file with -o")
      }
      if let against, Paths.sameFile(output, against) {
        throw OperationError(
          "'\(output)' is the --against package; the report would overwrite it",
          hint: "write the report to another file with -o")
      }
      if Paths.isDirectory(output) {
        throw OperationError("'\(output)' is a folder", hint: "-o names the report file, such as pkgtool.sarif")
      }
    }
    // Until this run's report is written, an interruption leaves one that says the run did not
    // finish, never the previous run's (which a CI step would upload as if it were current).
    let unfinished = try output.map { try ValidateCommand.unfinishedReport(paths, format: format, at: $0) }
    defer { unfinished?.discard() }
    if let project, !ProjectSource.isProject(project) {
      throw OperationError(
        "--project '\(project)' is not a content project: it has no ContentInfo.plist",
        hint: "name the folder pkgtool build made the package from", code: .invalidArgument)
    }
    var reports: [ValidationReport] = []
    var unreadable: [String] = []
    let documentation = getenv("PKGTOOL_DOCS_URL").map { String(cString: $0) }.flatMap { $0.isEmpty ? nil : $0 }
    for path in paths {
      let progress = ProgressLine(
        "validating '\(path)'", options: progressOption, silent: quiet || json,
        machineOutput: format != .text && output == nil)
      var report: ValidationReport
      // `-`: standard input, named so in the report.
      let shown = StandardInput.isNamed(path) ? StandardInput.displayName : path
      do {
        var digests: [String: String] = [:]
        let result: InspectionResult
        if StandardInput.isNamed(path) {
          guard exclude.isEmpty else {
            throw OperationError(
              "--exclude: standard input is a package; exclusions apply to content projects only",
              hint: "leave --exclude out to validate it as it is")
          }
          result = try ValidateCommand.validateStandardInput(
            options: rules.validationOptions, against: against, limits: readerLimits, progress: progress.handler,
            onFileDigest: format == .sarif ? { digests[$0] = $1 } : nil)
        } else {
          result = try Validation.run(
            path: path, options: rules.validationOptions, against: against, limits: readerLimits,
            progress: progress.handler, onFileDigest: format == .sarif ? { digests[$0] = $1 } : nil,
            exclude: exclude)
        }
        report = ValidationReport(result: result, displayPath: shown, strict: rules.strict)
        report.digests = digests
      } catch  where error is OperationError || error is SystemError {
        // The input could not be checked: the report says so, and the command exits 2.
        report = ValidationReport(unreadable: shown, error: "\(error)", strict: rules.strict)
        unreadable.append("\(error)")
      }
      progress.finish()
      report.base = base
      report.documentationURL = documentation
      if let project, let other = try report.mapEntries(toProject: project), !quiet {
        let own = report.result.contentInfo.map { "\($0.productIdentifier) \($0.contentVersion)" } ?? "?"
        Terminal.standardError(
          "pkgtool: warning: '\(terminalSafe(shown))' (\(own)) was not built from '\(terminalSafe(project))' "
            + "(\(other.productIdentifier) \(other.contentVersion)): its findings point at the package\n")
      }
      reports.append(report)
    }
    if let output {
      try writeReport(format.reporter.render(reports), to: output, superseding: unfinished)
      // The job log gets the verdict; an input that could not be checked is the error line.
      if !quiet && unreadable.isEmpty { Terminal.standardError(ValidateCommand.verdict(reports, report: output)) }
    } else if !(quiet && !reports.contains { $0.failed }) {
      // On a terminal, an input that could not be read is the error line on stderr alone.
      let shown = format == .text ? reports.filter { $0.toolError == nil } : reports
      if reports.contains(where: { $0.failed }) || !unreadable.isEmpty { Terminal.closedPipeStatus = 1 }
      if !shown.isEmpty { Terminal.standardOutput(format.reporter.render(shown)) }
    }
    // Exit 2 when an input could not be checked, after the report is out.
    if let first = unreadable.first {
      throw OperationError(
        unreadable.count == 1 ? first : "\(first) (and \(unreadable.count - 1) more inputs could not be checked)")
    }
    if reports.contains(where: { $0.failed }) { throw ExitCode(1) }
  }
}

extension ValidateCommand {
  /// Validates standard input, spooled (see ``StandardInput/file(limit:folder:)``); more than
  /// `--max-size` bytes is the size-limit finding, reading stopped there.
  static func validateStandardInput(
    options: ValidationOptions, against: String?, limits: ReaderLimits, progress: ProgressHandler?,
    onFileDigest: ((String, String) -> Void)?
  ) throws -> InspectionResult {
    let file: FileDescriptor
    do {
      file = try StandardInput.file(limit: options.maxSize)
    } catch let tooLarge as StandardInput.TooLarge {
      return InspectionResult(
        format: .unknown, location: StandardInput.displayName, packageSize: nil,
        findings: [SizeLimitRule.finding(standardInputOver: tooLarge.limit)], contentInfo: nil, entryCount: 0,
        contentSize: 0, entries: [], integrityFailed: false)
    } catch {
      throw OperationError.wrap(error)
    }
    return try Validation.run(
      path: StandardInput.displayName, file: file, options: options, against: against, limits: limits,
      progress: progress, onFileDigest: onFileDigest)
  }

  /// What `-o` holds when the run is interrupted: every input as not checked (SARIF
  /// `executionSuccessful` false, a JUnit `<error>`, JSON's `error`), kept beside `output` and
  /// renamed over it only on an interruption.
  static func unfinishedReport(_ paths: [String], format: ReportFormat, at output: String) throws -> PendingFile {
    let reports = paths.map {
      ValidationReport(
        unreadable: StandardInput.isNamed($0) ? StandardInput.displayName : $0,
        error: "validation was interrupted before it finished: this report holds no results; run it again",
        strict: false)
    }
    do {
      let pending = try PendingFile(beside: output, mode: 0o644)
      try pending.descriptor.write(Array(format.reporter.render(reports).utf8))
      pending.publishOnInterruption()
      return pending
    } catch {
      throw OperationError("cannot write the report: \(error)")
    }
  }

  /// The one line a CI log shows when the report went to a file: how many inputs, the verdict,
  /// the counts, and where the report is.
  static func verdict(_ reports: [ValidationReport], report output: String) -> String {
    let failed = reports.filter { $0.failed }.count
    let errors = reports.reduce(0) { $0 + $1.errorCount }
    let warnings = reports.reduce(0) { $0 + $1.warningCount }
    let subject = reports.count == 1 ? "'\(terminalSafe(reports[0].displayPath))'" : "\(reports.count) inputs"
    var verdict: String
    if failed > 0 {
      verdict = reports.count == 1 ? "invalid" : "\(failed) invalid"
    } else {
      verdict = reports.count == 1 ? "valid" : "all valid"
    }
    verdict += " (\(errors) \(errors == 1 ? "error" : "errors"), \(warnings) \(warnings == 1 ? "warning" : "warnings"))"
    return "pkgtool: validate \(subject): \(verdict); report written to '\(terminalSafe(output))'\n"
  }
}

/// Writes a report file atomically (beside it, then rename), in place of `superseding`, the
/// report kept for an interruption.
func writeReport(_ text: String, to path: String, superseding: PendingFile? = nil) throws {
  do {
    let pending = try PendingFile(beside: path, mode: 0o644)
    try pending.descriptor.write(Array(text.utf8))
    try pending.commit(replace: true, superseding: superseding)
  } catch {
    throw OperationError("cannot write the report: \(error)")
  }
}
