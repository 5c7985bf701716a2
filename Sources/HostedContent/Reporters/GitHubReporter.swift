/// GitHub Actions workflow commands: one `::error` or `::warning` annotation per finding.
public enum GitHubReporter: Reporter {
  public static let identifier = "github"

  public static func render(_ report: ValidationReport) -> String {
    var out = ""
    for f in report.result.findings {
      let message = (f.path.map { "\($0): " } ?? "") + f.message + (f.hint.map { " (hint: \($0))" } ?? "")
      out += "::\(report.effectiveSeverity(f).rawValue) file=\(escapeProperty(report.displayPath)),title=\(escapeProperty(f.ruleID))::\(escapeData(message))\n"
    }
    return out
  }

  static func escapeData(_ s: String) -> String {
    s.replacingOccurrences(of: "%", with: "%25").replacingOccurrences(of: "\r", with: "%0D").replacingOccurrences(of: "\n", with: "%0A")
  }

  static func escapeProperty(_ s: String) -> String {
    escapeData(s).replacingOccurrences(of: ":", with: "%3A").replacingOccurrences(of: ",", with: "%2C")
  }
}
