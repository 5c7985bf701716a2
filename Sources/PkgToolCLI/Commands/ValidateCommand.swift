import ArgumentParser
import HostedContent
import XAR

struct ValidateCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "validate",
    abstract: "Check a package (or content folder) against every rule.",
    discussion: """
      Reads the whole package once and verifies every checksum. Accepts a plain XAR package, an \
      Apple flat package (productbuild --content) and the zip a client downloads; the format is \
      found from the bytes. Prints compiler-style lines, one per finding, then a summary.

      Examples:
        pkgtool validate book-1.1.pkg
        pkgtool validate book-1.1.pkg --against book-1.0.pkg --product-id com.example.book
        pkgtool validate book-1.1.pkg --reporter sarif --output pkgtool.sarif

      Exit status: 0 valid, 1 a rule was broken (warnings count with --strict), 2 could not check.
      """)

  @Argument(help: ArgumentHelp("The package file or content folder.", valueName: "package"))
  var path: String

  @Option(help: ArgumentHelp("The previous package of the same product: ContentVersion must be greater than its.", valueName: "old.pkg"))
  var against: String?

  @OptionGroup var rules: RuleOptions

  @OptionGroup(title: "Limits") var limits: ReaderLimitOptions

  @Option(help: ArgumentHelp("Report format.", valueName: "format"))
  var reporter: ReporterName = .text

  @Option(name: [.short, .long], help: ArgumentHelp("Write the report to this file instead of standard output.", valueName: "file"))
  var output: String?

  @Flag(help: "Replace an existing report file (never the package itself).")
  var force = false

  func run() throws {
    if let output {
      for input in [path] + (against.map { [$0] } ?? []) where Paths.sameFile(output, input) {
        throw OperationError("'\(output)' is the package being validated; the report would overwrite it", hint: "write the report to another file with -o")
      }
      if Paths.status(output) != nil && !force {
        throw OperationError("'\(output)' already exists", hint: "pass --force to replace it, or -o another file")
      }
    }
    let progress = ProgressLine("validating", total: nil)
    let result = try Validation.run(path: path, options: rules.validationOptions, against: against, limits: limits.limits, progress: progress.update)
    progress.finish()
    let report = ValidationReport(result: result, displayPath: path, strict: rules.strict)
    let text = Reporters.reporter(reporter.rawValue)!.render(report)
    if let output {
      try writeReport(text, to: output)
    } else {
      Terminal.standardOutput(text)
    }
    if report.failed { throw ExitCode(1) }
  }
}

/// Writes a report file atomically (beside it, then rename).
func writeReport(_ text: String, to path: String) throws {
  let temporary = FileSystem.temporarySibling(of: path, purpose: "tmp")
  do {
    let file = try FileDescriptor.create(temporary, mode: 0o644)
    try file.write(Array(text.utf8))
    try FileSystem.rename(temporary, to: path)
  } catch {
    FileSystem.removeFile(temporary)
    throw OperationError("cannot write the report: \(error)")
  }
}

struct RulesCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "rules", abstract: "List the rules pkgtool checks, from the rules' own descriptions.")

  @Flag(help: "Print JSON.")
  var json = false

  struct Entry: Encodable {
    var id: String
    var name: String
    var severity: String
    var summary: String
    var rationale: String
  }

  func run() throws {
    let descriptions = RuleCatalog.descriptions
    if json {
      Terminal.standardOutput(jsonText(descriptions.map { Entry(id: $0.id, name: $0.name, severity: $0.severity.rawValue, summary: $0.summary, rationale: $0.rationale) }))
      return
    }
    var out = ""
    for d in descriptions {
      out += "\(d.id) (\(d.severity.rawValue))\n  \(d.summary)\n  Why: \(d.rationale)\n\n"
    }
    Terminal.standardOutput(out)
  }
}
