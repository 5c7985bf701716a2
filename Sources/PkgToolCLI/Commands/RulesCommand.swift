import ArgumentParser
import HostedContent
import SystemIO

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

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

  @Argument(
    help: ArgumentHelp(
      "Explain one rule: its rationale and the packages it must and must not report.", valueName: "rule-id"))
  var id: String?

  @Flag(help: "Print JSON.")
  var json = false

  func run() throws {
    let descriptions = RuleCatalog.descriptions
    var report = RuleListingReport(listing: descriptions)
    if let id {
      guard let match = descriptions.first(where: { $0.id == id }) else {
        let close = descriptions.map(\.id).filter { editDistance($0, id) <= 3 || $0.contains(id) }
        throw OperationError(
          "there is no rule '\(id)'",
          hint: close.isEmpty
            ? "`pkgtool rules` lists them" : "did you mean \(close.map { "'\($0)'" }.joined(separator: " or "))?")
      }
      report = RuleListingReport(explaining: match)
    }
    Terminal.standardOutput(json ? report.json : report.text)
  }
}
