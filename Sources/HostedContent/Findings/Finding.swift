/// How much a finding matters.
public enum Severity: String, Codable, Sendable, Comparable, CaseIterable {
  case warning
  case error

  public static func < (a: Severity, b: Severity) -> Bool { a == .warning && b == .error }
}

/// One thing a rule found: a value, never printed by the rule itself.
public struct Finding: Codable, Equatable, Hashable, Sendable {
  /// The id of the rule, as in the catalog (`no-executable`).
  public var ruleID: String
  public var severity: Severity
  /// The entry concerned, relative to the package root; nil for the package as a whole.
  public var path: String?
  /// What is wrong, as a sentence without a final period.
  public var message: String
  /// How to fix it, when there is something to say.
  public var hint: String?

  public init(ruleID: String, severity: Severity, path: String?, message: String, hint: String? = nil) {
    self.ruleID = ruleID
    self.severity = severity
    self.path = path
    self.message = message
    self.hint = hint
  }

  enum CodingKeys: String, CodingKey {
    case ruleID = "rule"
    case severity, path, message, hint
  }
}

extension Array where Element == Finding {
  /// True if any finding is an error.
  public var hasErrors: Bool { contains { $0.severity == .error } }
}
