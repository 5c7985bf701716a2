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
        throw OperationError(
          "there is no rule '\(id)'",
          hint: close.isEmpty
            ? "`pkgtool rules` lists them" : "did you mean \(close.map { "'\($0)'" }.joined(separator: " or "))?")
      }
      descriptions = [match]
    }
    if json {
      let entries = descriptions.map {
        Entry(
          id: $0.id, name: $0.name, severity: $0.severity.rawValue, securitySeverity: $0.securitySeverity,
          summary: $0.summary,
          rationale: $0.rationale, triggering: id == nil ? nil : $0.triggering.map(\.name),
          nonTriggering: id == nil ? nil : $0.nonTriggering.map(\.name))
      }
      struct Listing: Encodable { var rules: [Entry] }
      Terminal.standardOutput(id == nil ? jsonText(Listing(rules: entries)) : jsonText(entries[0]))
      return
    }
    var out = ""
    for d in descriptions {
      out +=
        "\(d.id) (\(d.severity.rawValue)\(d.securitySeverity.map { ", security \(String(format: "%.1f", $0))" } ?? ""))\n  \(d.summary)\n  Why: \(d.rationale)\n"
      if id != nil {
        out += "\n  Reported, for example:\n" + d.triggering.map { "    - \($0.name)\n" }.joined()
        out += "  Accepted, for example:\n" + d.nonTriggering.map { "    - \($0.name)\n" }.joined()
        if let reason = d.id == ContentVersionIncreaseRule.description.id
          ? "it runs only with validate --against OLD" : nil
        {
          out += "  Note: \(reason).\n"
        }
      }
      out += "\n"
    }
    Terminal.standardOutput(out)
  }
}
