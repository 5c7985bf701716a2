/// The rules' half of a run: which rules apply to a source (and why the others are skipped), each
/// entry shown to every rule, the findings kept (at most so many per rule), and the closing
/// checks over the whole run. Knows nothing of data, sinks or budgets (see ``EntryDataCopier``).
package struct RuleRunner {
  /// Why each rule that does not run was skipped, by rule id.
  package private(set) var skippedRules: [String: String] = [:]
  /// The findings so far, capped.
  package private(set) var findings: [Finding] = []
  private let rules: [any Rule]
  private var cap: FindingCap
  private let strict: Bool

  /// The rules of `types` that apply to a source of `format` (none but `archive-integrity` when
  /// the source `isUnreadable`), made for `context`.
  package init(context: RuleContext, types: [any Rule.Type], isUnreadable: Bool, maxFindingsPerRule: Int) {
    for type in types {
      if isUnreadable && type != ArchiveIntegrityRule.self {
        skippedRules[type.description.id] = "the file is not a package"
      } else if let reason = type.skipReason(context) {
        skippedRules[type.description.id] = reason
      }
    }
    let skipped = skippedRules
    rules = types.filter { skipped[$0.description.id] == nil }.map { $0.init(context: context) }
    cap = FindingCap(limit: maxFindingsPerRule)
    strict = context.options.strict
  }

  /// Shows `inspected` to every rule; returns the errors they found in it (before the cap drops
  /// any: an entry with an error is skipped by `--keep-going` even past the cap).
  package mutating func inspect(_ inspected: InspectedEntry) -> [Finding] {
    let start = findings.count
    for rule in rules { rule.inspect(inspected, into: &findings) }
    let errors = findings[start...].filter { $0.severity.effective(strict: strict) == .error }
    cap.admit(&findings, from: start)
    return errors
  }

  /// Adds a finding a rule made from a fact learned outside the rules (a sink's refusal, a
  /// reading error), e.g. ``PathSafetyRule/finding(forSinkRefusal:at:)``.
  package mutating func add(_ finding: Finding) {
    findings.append(finding)
    cap.admit(&findings, from: findings.count - 1)
  }

  /// True when an error was already found at `path`.
  package func hasError(at path: String) -> Bool {
    findings.contains(where: { $0.path == path && $0.severity == .error })
  }

  /// Gives the whole run to every rule (``Rule/finish(_:into:)``). A run stopped at the content
  /// limit (`maxSize`) always ends with a `size-limit` error, whatever the rule set: what was not
  /// read is never passed. Returns every finding, the cap's closing ones last.
  package mutating func finish(_ summary: InspectionSummary, maxSize: UInt64) -> [Finding] {
    let start = findings.count
    for rule in rules { rule.finish(summary, into: &findings) }
    if summary.contentLimitExceeded
      && !findings[start...].contains(where: {
        $0.ruleID == SizeLimitRule.description.id && $0.severity == .error
      })
    {
      findings.append(SizeLimitRule.finding(stoppedAt: maxSize))
      skippedRules[SizeLimitRule.description.id] = nil
    }
    cap.admit(&findings, from: start)
    return findings + cap.closingFindings()
  }
}
