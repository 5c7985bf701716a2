/// Keeps at most `limit` findings per rule and counts what it drops.
struct FindingCap {
  let limit: Int
  private var kept: [String: Int] = [:]
  private var dropped: [String: (count: Int, severity: Severity)] = [:]
  private var order: [String] = []

  init(limit: Int) { self.limit = max(1, limit) }

  /// Drops, from `findings[start...]`, those past the limit of their rule.
  mutating func admit(_ findings: inout [Finding], from start: Int) {
    guard start < findings.count else { return }
    var write = start
    for i in start..<findings.count {
      let f = findings[i]
      let n = kept[f.ruleID, default: 0]
      if n < limit {
        kept[f.ruleID] = n + 1
        findings[write] = f
        write += 1
      } else {
        if dropped[f.ruleID] == nil { order.append(f.ruleID) }
        let before = dropped[f.ruleID] ?? (0, .note)
        dropped[f.ruleID] = (before.count + 1, max(before.severity, f.severity))
      }
    }
    findings.removeSubrange(write...)
  }

  /// One finding per rule that had more than the limit.
  func closingFindings() -> [Finding] {
    order.map { id in
      let d = dropped[id]!
      return Finding(
        ruleID: id, severity: d.severity, path: nil,
        message:
          "and \(d.count) more \(d.count == 1 ? "finding" : "findings") of this rule, left out of the report (the first \(limit) are shown)",
        hint: "fix the ones shown and validate again")
    }
  }
}
