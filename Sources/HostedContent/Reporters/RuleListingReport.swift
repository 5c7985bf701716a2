import Foundation

/// What `rules` prints: each rule's id, severity, summary and rationale; when one rule is
/// explained, also the names of the packages it reports and accepts.
public struct RuleListingReport: OperationReport {
  /// The rules listed, in order.
  public var rules: [RuleDescription]
  /// One rule explained (`pkgtool rules ID`): its examples too, and `--json` is that rule's
  /// object rather than a list.
  public var explained: Bool

  /// The report of every rule in `rules`.
  public init(listing rules: [RuleDescription]) {
    self.rules = rules
    self.explained = false
  }

  /// The report that explains `rule`.
  public init(explaining rule: RuleDescription) {
    self.rules = [rule]
    self.explained = true
  }

  /// One rule in `--json`.
  public struct Entry: Encodable {
    var id: String
    var name: String
    var severity: String
    var securitySeverity: Double?
    var summary: String
    var rationale: String
    /// Only when the rule is explained.
    var triggering: [String]?
    /// Only when the rule is explained.
    var nonTriggering: [String]?
  }

  /// The `--json` object: `{"rules": [...]}`, or the one rule explained.
  public struct Document: Encodable {
    var rules: [Entry]
    var explained: Bool

    private enum Key: String, CodingKey { case rules }

    /// The list under `rules`, or the one entry's keys at the top.
    public func encode(to encoder: Encoder) throws {
      if explained, let rule = rules.first {
        try rule.encode(to: encoder)
      } else {
        var container = encoder.container(keyedBy: Key.self)
        try container.encode(rules, forKey: .rules)
      }
    }
  }

  /// What `--json` encodes.
  public var document: Document {
    let entries = rules.map {
      Entry(
        id: $0.id, name: $0.name, severity: $0.severity.rawValue, securitySeverity: $0.securitySeverity,
        summary: $0.summary, rationale: $0.rationale, triggering: explained ? $0.triggering.map(\.name) : nil,
        nonTriggering: explained ? $0.nonTriggering.map(\.name) : nil)
    }
    return Document(rules: entries, explained: explained)
  }

  /// Lines for people, each ending in a newline; a blank line after each rule.
  public var text: String {
    var out = ""
    for d in rules {
      out +=
        "\(d.id) (\(d.severity.rawValue)\(d.securitySeverity.map { ", security \(String(format: "%.1f", $0))" } ?? ""))\n  \(d.summary)\n  Why: \(d.rationale)\n"
      if explained {
        out += "\n  Reported, for example:\n" + d.triggering.map { "    - \($0.name)\n" }.joined()
        out += "  Accepted, for example:\n" + d.nonTriggering.map { "    - \($0.name)\n" }.joined()
        if d.id == ContentVersionIncreaseRule.description.id {
          out += "  Note: it runs only with validate --against OLD.\n"
        }
      }
      out += "\n"
    }
    return out
  }
}
