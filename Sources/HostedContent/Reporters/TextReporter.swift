/// Compiler-style lines: `X.pkg:Contents/a.bin: error: … [no-executable]`, a hint under each
/// finding that has one, then a summary line per input.
public enum TextReporter: Reporter {
  /// `text`.
  public static let identifier = "text"

  /// Compiler-style lines (`path: error: message [rule]`) and a summary per input.
  public static func render(_ reports: [ValidationReport]) -> String {
    var lines: [String] = []
    for report in reports {
      if let error = report.toolError {
        lines.append(
          "\(report.displayPath.debugEscapedForTerminal): error: could not be checked: \(error.debugEscapedForTerminal)"
        )
        continue
      }
      for finding in report.result.findings {
        let location =
          finding.path.map { "\(report.displayPath.debugEscapedForTerminal):\($0.debugEscapedForTerminal)" }
          ?? report.displayPath.debugEscapedForTerminal
        lines.append(
          "\(location): \(report.effectiveSeverity(finding).rawValue): \(finding.message.debugEscapedForTerminal) [\(finding.ruleID)]"
        )
        if let hint = finding.hint { lines.append("  hint: \(hint.debugEscapedForTerminal)") }
      }
      lines.append(summary(report))
    }
    return lines.joined(separator: "\n") + "\n"
  }

  /// `book.pkg: valid: 0 errors, 1 warning (com.example.book 1.2, XAR package, 5 entries, …)`.
  public static func summary(_ report: ValidationReport) -> String {
    let r = report.result
    var what: [String] = []
    if let info = r.contentInfo {
      what.append("\(info.productIdentifier) \(info.contentVersion)")
    } else if let pack = r.assetPackID {
      what.append("asset pack \(pack.debugEscapedForTerminal)")
    }
    what.append("\(r.format.displayName)")
    what.append("\(r.entryCount) \(r.entryCount == 1 ? "entry" : "entries")")
    what.append("\(describeBytes(r.contentSize)) of content")
    if !r.projectFiles.isEmpty {
      what.append("build leaves out " + r.projectFiles.map(\.debugEscapedForTerminal).joined(separator: ", "))
    }
    let verdict = report.failed ? "invalid" : "valid"
    return
      "\(report.displayPath.debugEscapedForTerminal): \(verdict): \(report.countsText) (\(what.joined(separator: ", ")))"
  }
}
