/// JUnit XML with one test case per rule, failed when the rule found something; CI systems show
/// it in their test views.
public enum JUnitReporter: Reporter {
  public static let identifier = "junit"

  public static func render(_ report: ValidationReport) -> String {
    let descriptions = RuleCatalog.descriptions
    let failing = descriptions.filter { d in report.result.findings.contains { $0.ruleID == d.id && (report.effectiveSeverity($0) == .error) } }
    var out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
    out += "<testsuites name=\"pkgtool validate\" tests=\"\(descriptions.count)\" failures=\"\(failing.count)\">\n"
    out += "  <testsuite name=\"\(escape(report.displayPath))\" tests=\"\(descriptions.count)\" failures=\"\(failing.count)\" errors=\"0\" skipped=\"0\">\n"
    for d in descriptions {
      let findings = report.result.findings.filter { $0.ruleID == d.id }
      out += "    <testcase classname=\"pkgtool.\(d.id)\" name=\"\(escape(d.name))\""
      if findings.isEmpty {
        out += "/>\n"
        continue
      }
      out += ">\n"
      let errors = findings.filter { report.effectiveSeverity($0) == .error }
      let body = findings.map { f in
        (f.path.map { "\($0): " } ?? "") + f.message + (f.hint.map { " (hint: \($0))" } ?? "")
      }.joined(separator: "\n")
      if errors.isEmpty {
        out += "      <system-out>\(escape(body))</system-out>\n"
      } else {
        out += "      <failure message=\"\(escape(errors[0].message))\" type=\"\(d.id)\">\(escape(body))</failure>\n"
      }
      out += "    </testcase>\n"
    }
    out += "  </testsuite>\n</testsuites>\n"
    return out
  }

  static func escape(_ s: String) -> String { escapeXML(s, attribute: true, showControls: true) }

}
