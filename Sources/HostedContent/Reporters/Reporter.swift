import Foundation

/// What a reporter is given: one validation's result and how it was asked for.
public struct ValidationReport {
  public var result: InspectionResult
  /// The path as the user typed it, used in messages.
  public var displayPath: String
  public var strict: Bool

  public init(result: InspectionResult, displayPath: String, strict: Bool) {
    self.result = result
    self.displayPath = displayPath
    self.strict = strict
  }

  public var errorCount: Int { result.findings.filter { $0.severity == .error }.count }
  public var warningCount: Int { result.findings.filter { $0.severity == .warning }.count }
  /// True when the command should exit 1.
  public var failed: Bool { result.failed(strict: strict) }

  /// The severity a finding is reported at (warnings become errors under `--strict`).
  public func effectiveSeverity(_ finding: Finding) -> Severity {
    strict ? .error : finding.severity
  }
}

/// Turns a ``ValidationReport`` into text for people or machines. One small type per format.
public protocol Reporter {
  /// The `--reporter` value.
  static var identifier: String { get }
  static func render(_ report: ValidationReport) -> String
}

/// Every reporter, by identifier.
public enum Reporters {
  public static let all: [any Reporter.Type] = [
    TextReporter.self, JSONReporter.self, SARIFReporter.self, JUnitReporter.self, GitHubReporter.self,
  ]

  public static func reporter(_ identifier: String) -> (any Reporter.Type)? {
    all.first { $0.identifier == identifier }
  }
}

/// JSON with sorted keys and no escaped slashes, so output is stable and diffable.
func encodeJSON<T: Encodable>(_ value: T) -> String {
  let encoder = JSONEncoder()
  encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
  guard let data = try? encoder.encode(value) else { return "{}" }
  return String(decoding: data, as: UTF8.self)
}

/// `1234567` → `1,234,567`.
public func groupedDigits(_ value: UInt64) -> String {
  let digits = Array(String(value))
  var out = ""
  for (i, d) in digits.enumerated() {
    if i > 0 && (digits.count - i) % 3 == 0 { out += "," }
    out.append(d)
  }
  return out
}

/// A byte count for people: `12,345 bytes (12.3 kB)`.
public func describeBytes(_ value: UInt64) -> String {
  let units = ["kB", "MB", "GB", "TB"]
  var scaled = Double(value)
  var unit = -1
  while scaled >= 1000 && unit < units.count - 1 {
    scaled /= 1000
    unit += 1
  }
  let plain = "\(groupedDigits(value)) bytes"
  return unit < 0 ? plain : plain + " (" + String(format: "%.1f", scaled) + " " + units[unit] + ")"
}
