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
      build would package it: files build leaves out are listed (a note for README and the \
      like, a warning for anything else), never silently. Prints compiler-style lines, one per \
      finding, then a summary per input.

      With --output, the report is written even when an input cannot be read (exit 2): SARIF \
      then carries a toolExecutionNotifications entry, JUnit an <error>, so an upload step \
      after it still finds its file. SARIF's helpUri points into $PKGTOOL_DOCS_URL when it is \
      set (the published docs/rules.md).

      Examples:
        pkgtool validate book-1.1.pkg
        pkgtool validate book-1.1.pkg --against book-1.0.pkg \\
            --product-id com.example.book
        pkgtool validate packages/*.pkg --reporter sarif -o pkgtool.sarif
        pkgtool validate MyBook --json

      Exit status: 0 valid, 1 a rule was broken (warnings count with --strict), 2 could not check.
      """)

  @Argument(help: ArgumentHelp("The package files or content folders.", valueName: "package"))
  var paths: [String]

  @Option(
    help: ArgumentHelp(
      "The previous package of the same product: ContentVersion must be greater than its.", valueName: "old.pkg"))
  var against: String?

  @OptionGroup var rules: RuleOptions

  @OptionGroup(title: "Limits") var limits: ReaderLimitOptions

  @Option(help: ArgumentHelp("Report format.", valueName: "format"))
  var reporter: ReportFormat = .text

  @Flag(help: "Short for --reporter json.")
  var json = false

  @Option(
    name: [.short, .long],
    help: ArgumentHelp("Write the report to this file instead of standard output.", valueName: "file"))
  var output: String?

  @Option(
    help: ArgumentHelp(
      "Make file paths in SARIF and GitHub reports relative to this folder (default: the working directory).",
      valueName: "dir"))
  var base: String?

  @Flag(help: "Replace an existing report file (never the package itself).")
  var force = false

  @Flag(
    name: [.short, .long], help: "Print nothing on standard output when every input is valid (the exit status tells).")
  var quiet = false

  func validate() throws {
    if paths.isEmpty { throw ValidationError("Name at least one package or content folder.") }
    if json && reporter != .text && reporter != .json {
      throw ValidationError("--json and --reporter \(reporter.rawValue) ask for two formats; choose one.")
    }
  }

  func run() throws {
    let format: ReportFormat = json ? .json : reporter
    if let output {
      for input in paths + (against.map { [$0] } ?? []) where Paths.sameFile(output, input) {
        throw OperationError(
          "'\(output)' is a package being validated; the report would overwrite it",
          hint: "write the report to another file with -o")
      }
      if Paths.status(output) != nil && !force {
        throw OperationError("'\(output)' already exists", hint: "pass --force to replace it, or -o another file")
      }
    }
    var reports: [ValidationReport] = []
    var unreadable: [String] = []
    let documentation = getenv("PKGTOOL_DOCS_URL").map { String(cString: $0) }.flatMap { $0.isEmpty ? nil : $0 }
    for path in paths {
      let progress = ProgressLine(paths.count > 1 ? "validating \(path)" : "validating", total: nil)
      var report: ValidationReport
      do {
        var digests: [String: String] = [:]
        let result = try Validation.run(
          path: path, options: rules.validationOptions, against: against, limits: limits.limits,
          progress: progress.update, onFileDigest: format == .sarif ? { digests[$0] = $1 } : nil)
        report = ValidationReport(result: result, displayPath: path, strict: rules.strict)
        report.digests = digests
      } catch  where error is OperationError || error is SystemError {
        // The input could not be checked: the report says so, and the command exits 2.
        report = ValidationReport(unreadable: path, error: "\(error)", strict: rules.strict)
        unreadable.append("\(error)")
      }
      progress.finish()
      report.base = base
      report.documentationURL = documentation
      reports.append(report)
    }
    if let output {
      try writeReport(format.reporter.render(reports), to: output)
    } else if !(quiet && !reports.contains { $0.failed }) {
      // On a terminal, an input that could not be read is the error line on stderr alone.
      let shown = format == .text ? reports.filter { $0.toolError == nil } : reports
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

/// Writes a report file atomically (beside it, then rename).
func writeReport(_ text: String, to path: String) throws {
  do { try FileSystem.writeAtomically(Array(text.utf8), to: path) } catch {
    throw OperationError("cannot write the report: \(error)")
  }
}
