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

  @Option(help: ArgumentHelp("The previous package of the same product: ContentVersion must be greater than its.", valueName: "old.pkg"))
  var against: String?

  @OptionGroup var rules: RuleOptions

  @OptionGroup(title: "Limits") var limits: ReaderLimitOptions

  @Option(help: ArgumentHelp("Report format.", valueName: "format"))
  var reporter: ReportFormat = .text

  @Flag(help: "Short for --reporter json.")
  var json = false

  @Option(name: [.short, .long], help: ArgumentHelp("Write the report to this file instead of standard output.", valueName: "file"))
  var output: String?

  @Option(help: ArgumentHelp("Make file paths in SARIF and GitHub reports relative to this folder (default: the working directory).", valueName: "dir"))
  var base: String?

  @Flag(help: "Replace an existing report file (never the package itself).")
  var force = false

  @Flag(name: [.short, .long], help: "Print nothing on standard output when every input is valid (the exit status tells).")
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
        throw OperationError("'\(output)' is a package being validated; the report would overwrite it", hint: "write the report to another file with -o")
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
      } catch where error is OperationError || error is SystemError {
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
      throw OperationError(unreadable.count == 1 ? first : "\(first) (and \(unreadable.count - 1) more inputs could not be checked)")
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

struct RulesCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "rules", abstract: "List the rules pkgtool checks, or explain one.",
    discussion: """
      Every rule carries its own description and examples; this prints them.

      Examples:
        pkgtool rules
        pkgtool rules no-external-symlink
        pkgtool rules --json
      """)

  @Argument(help: ArgumentHelp("Explain one rule: its rationale and the packages it must and must not report.", valueName: "rule-id"))
  var id: String?

  @Flag(help: "Print JSON.")
  var json = false

  struct Entry: Encodable {
    var id: String
    var name: String
    var severity: String
    var securitySeverity: Double?
    var summary: String
    var rationale: String
    var triggering: [String]?
    var nonTriggering: [String]?
  }

  func run() throws {
    var descriptions = RuleCatalog.descriptions
    if let id {
      guard let match = descriptions.first(where: { $0.id == id }) else {
        let close = descriptions.map(\.id).filter { editDistance($0, id) <= 3 || $0.contains(id) }
        throw OperationError("there is no rule '\(id)'", hint: close.isEmpty ? "`pkgtool rules` lists them" : "did you mean \(close.map { "'\($0)'" }.joined(separator: " or "))?")
      }
      descriptions = [match]
    }
    if json {
      let entries = descriptions.map {
        Entry(
          id: $0.id, name: $0.name, severity: $0.severity.rawValue, securitySeverity: $0.securitySeverity, summary: $0.summary,
          rationale: $0.rationale, triggering: id == nil ? nil : $0.triggering.map(\.name),
          nonTriggering: id == nil ? nil : $0.nonTriggering.map(\.name))
      }
      struct Listing: Encodable { var rules: [Entry] }
      Terminal.standardOutput(id == nil ? jsonText(Listing(rules: entries)) : jsonText(entries[0]))
      return
    }
    var out = ""
    for d in descriptions {
      out += "\(d.id) (\(d.severity.rawValue)\(d.securitySeverity.map { ", security \(String(format: "%.1f", $0))" } ?? ""))\n  \(d.summary)\n  Why: \(d.rationale)\n"
      if id != nil {
        out += "\n  Reported, for example:\n" + d.triggering.map { "    - \($0.name)\n" }.joined()
        out += "  Accepted, for example:\n" + d.nonTriggering.map { "    - \($0.name)\n" }.joined()
        if let reason = d.id == ContentVersionIncreaseRule.description.id ? "it runs only with validate --against OLD" : nil {
          out += "  Note: \(reason).\n"
        }
      }
      out += "\n"
    }
    Terminal.standardOutput(out)
  }
}

/// Levenshtein distance, for "did you mean".
func editDistance(_ a: String, _ b: String) -> Int {
  let x = Array(a), y = Array(b)
  if x.isEmpty { return y.count }
  if y.isEmpty { return x.count }
  var previous = Array(0...y.count)
  for i in 1...x.count {
    var current = [i] + Array(repeating: 0, count: y.count)
    for j in 1...y.count {
      current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (x[i - 1] == y[j - 1] ? 0 : 1))
    }
    previous = current
  }
  return previous[y.count]
}
