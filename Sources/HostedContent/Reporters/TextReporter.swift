/// Compiler-style lines: `X.pkg:Contents/a.bin: error: … [no-executable]`, a hint under each
/// finding that has one, then a summary line.
public enum TextReporter: Reporter {
  public static let identifier = "text"

  public static func render(_ report: ValidationReport) -> String {
    var lines: [String] = []
    for finding in report.result.findings {
      let location = finding.path.map { "\(report.displayPath):\($0.debugEscapedForTerminal)" } ?? report.displayPath
      lines.append("\(location): \(report.effectiveSeverity(finding).rawValue): \(finding.message.debugEscapedForTerminal) [\(finding.ruleID)]")
      if let hint = finding.hint { lines.append("  hint: \(hint)") }
    }
    lines.append(summary(report))
    return lines.joined(separator: "\n") + "\n"
  }

  static func summary(_ report: ValidationReport) -> String {
    let r = report.result
    var what: [String] = []
    if let info = r.contentInfo { what.append("\(info.productIdentifier) \(info.contentVersion)") }
    what.append("\(r.format.displayName)")
    what.append("\(r.entryCount) \(r.entryCount == 1 ? "entry" : "entries")")
    what.append("\(describeBytes(r.contentSize)) of content")
    let counts = "\(report.errorCount) \(report.errorCount == 1 ? "error" : "errors"), \(report.warningCount) \(report.warningCount == 1 ? "warning" : "warnings")"
    let verdict = report.failed ? "invalid" : "valid"
    return "\(report.displayPath): \(verdict): \(counts) (\(what.joined(separator: ", ")))"
  }
}

extension String {
  /// Control characters escaped, so a hostile name cannot rewrite the terminal.
  package var debugEscapedForTerminal: String {
    var out = ""
    for scalar in unicodeScalars {
      if scalar.value < 0x20 || scalar.value == 0x7F || (0x80..<0xA0).contains(scalar.value) {
        out += "\\u{\(String(scalar.value, radix: 16))}"
      } else {
        out.unicodeScalars.append(scalar)
      }
    }
    return out
  }
}
