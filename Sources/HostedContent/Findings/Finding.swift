/// How much a finding matters.
public enum Severity: String, Codable, Sendable, Comparable, CaseIterable {
  /// Worth knowing, never a failure, not even with `--strict` (files `build` leaves out).
  case note
  /// A failure only with `--strict`.
  case warning
  /// Fails the command.
  case error

  private var rank: Int {
    switch self {
    case .note: return 0
    case .warning: return 1
    case .error: return 2
    }
  }

  /// Orders by weight: note < warning < error.
  public static func < (a: Severity, b: Severity) -> Bool { a.rank < b.rank }

  /// The severity a finding counts at: warnings become errors under `--strict`; notes stay notes.
  public func effective(strict: Bool) -> Severity { strict && self == .warning ? .error : self }
}

/// One thing a rule found: a value, never printed by the rule itself.
public struct Finding: Codable, Equatable, Hashable, Sendable {
  /// The id of the rule, as in the catalog (`no-executable`).
  public var ruleID: String
  /// How bad it is.
  public var severity: Severity
  /// The entry concerned, relative to the package root; nil for the package as a whole.
  public var path: String?
  /// What is wrong, as a sentence without a final period.
  public var message: String
  /// How to fix it, when there is something to say.
  public var hint: String?

  /// A finding of rule `ruleID` at `path` (nil for the package as a whole).
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

extension Finding {
  /// `path: message (hint: …)`: the finding on one line, for reports that carry no fields.
  public var line: String {
    (path.map { "\($0): " } ?? "") + message + (hint.map { " (hint: \($0))" } ?? "")
  }
}
