/// GitHub Actions workflow commands: one `::error`, `::warning` or `::notice` annotation per
/// finding, on the real file for a folder (on the package for a package), and a `::notice`
/// summary when the input is valid, so a log shows the gate ran.
public enum GitHubReporter: Reporter {
  /// `github`.
  public static let identifier = "github"

  /// One `::error`/`::warning`/`::notice` line per finding, and a closing line per input.
  public static func render(_ reports: [ValidationReport]) -> String {
    var out = ""
    for report in reports {
      if let error = report.toolError {
        out +=
          "::error file=\(escapeProperty(report.displayPath)),title=\(escapeProperty("pkgtool: could not check"))::\(escapeData(error))\n"
        continue
      }
      for f in report.result.findings {
        let command = annotation(report.effectiveSeverity(f))
        out +=
          "::\(command) file=\(escapeProperty(report.relativeFilePath(for: f))),title=\(escapeProperty("pkgtool \(f.ruleID)"))::\(escapeData(f.line))\n"
      }
      if !report.failed {
        out +=
          "::notice file=\(escapeProperty(report.displayPath)),title=\(escapeProperty("pkgtool validate"))::\(escapeData(TextReporter.summary(report)))\n"
      }
    }
    return out
  }

  static func annotation(_ severity: Severity) -> String {
    switch severity {
    case .error: return "error"
    case .warning: return "warning"
    case .note: return "notice"
    }
  }

  static func escapeData(_ s: String) -> String {
    s.replacingOccurrences(of: "%", with: "%25").replacingOccurrences(of: "\r", with: "%0D").replacingOccurrences(
      of: "\n", with: "%0A")
  }

  static func escapeProperty(_ s: String) -> String {
    escapeData(s).replacingOccurrences(of: ":", with: "%3A").replacingOccurrences(of: ",", with: "%2C")
  }
}
