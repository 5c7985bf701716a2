import Foundation

/// The rule catalog of docs/rules.md and the rule table of the README, written from the rules'
/// own descriptions, so the documentation cannot drift from the code
/// (`RuleDocumentationTests` fails when the files differ; `PKGTOOL_UPDATE_GOLDEN=1` rewrites
/// them).
public enum RuleDocumentation {
  /// Where the generated part of a document starts and ends.
  public static let beginMarker = "<!-- BEGIN GENERATED from RuleCatalog: do not edit by hand -->"
  /// Where the generated part of a document ends.
  public static let endMarker = "<!-- END GENERATED -->"

  /// Every rule by category: id, name, severity, summary, rationale, details and the names of its
  /// examples.
  public static func catalog(_ rules: [RuleDescription] = RuleCatalog.descriptions) -> String {
    var out = ""
    for category in RuleCategory.allCases {
      let members = rules.filter { $0.category == category }
      guard !members.isEmpty else { continue }
      out += "## \(category.title)\n\n"
      for rule in members {
        out += "### `\(rule.id)`: \(rule.name)\n\n"
        var facts = ["Severity: \(rule.severity.rawValue)"]
        if let score = rule.securitySeverity { facts.append("security-severity \(score)") }
        out += facts.joined(separator: "; ") + ".\n\n"
        out += prose(rule.summary) + "\n\n"
        out += "*Why:* " + prose(rule.rationale) + "\n\n"
        for detail in rule.details { out += "- " + detail + "\n" }
        if !rule.details.isEmpty { out += "\n" }
        out += "Reported, for example: " + rule.triggering.map { "*\($0.name)*" }.joined(separator: ", ") + ".\n"
        if !rule.nonTriggering.isEmpty {
          out += "Accepted: " + rule.nonTriggering.map { "*\($0.name)*" }.joined(separator: ", ") + ".\n"
        }
        out += "\n"
      }
    }
    return out
  }

  /// One row per rule: id, severity, summary.
  public static func table(_ rules: [RuleDescription] = RuleCatalog.descriptions) -> String {
    var out = "| id | severity | what it reports |\n|---|---|---|\n"
    for rule in rules {
      out +=
        "| `\(rule.id)` | \(rule.severity.rawValue) | \(prose(rule.summary).replacingOccurrences(of: "|", with: "\\|")) |\n"
    }
    return out
  }

  /// Plain text as Markdown: `<` would start an HTML tag.
  private static func prose(_ text: String) -> String {
    text.replacingOccurrences(of: "<", with: "&lt;")
  }

  /// `document` with the text between the markers replaced by `generated`; nil when the
  /// document has no markers.
  public static func replacingGenerated(in document: String, with generated: String) -> String? {
    guard let begin = document.range(of: beginMarker),
      let end = document.range(of: endMarker, range: begin.upperBound..<document.endIndex)
    else { return nil }
    return String(document[..<begin.upperBound]) + "\n" + generated + String(document[end.lowerBound...])
  }
}
