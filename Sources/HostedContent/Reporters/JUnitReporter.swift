/// JUnit XML for CI test views (GitLab, Jenkins, Azure): one test suite per input; per rule,
/// one passing test case, one `<skipped/>` case when the rule did not run (say,
/// `content-version-increase` without `--against`), or one failing case per finding that is
/// an error. Warnings and notes ride along as `<system-out>` of a passing case. Every count is
/// computed from the cases written.
public enum JUnitReporter: Reporter {
  /// `junit`.
  public static let identifier = "junit"

  struct Case {
    var classname: String
    var name: String
    enum Outcome {
      case passed(output: String?)
      case skipped(String)
      case failure(message: String, type: String, body: String)
      case error(String)
    }
    var outcome: Outcome
  }

  static func cases(_ report: ValidationReport) -> [Case] {
    var cases: [Case] = []
    if let error = report.toolError {
      cases.append(Case(classname: "pkgtool", name: "read \(report.displayPath)", outcome: .error(error)))
    }
    for d in RuleCatalog.descriptions {
      let classname = "pkgtool.\(d.id)"
      if let reason = report.result.skippedRules[d.id] {
        cases.append(Case(classname: classname, name: d.name, outcome: .skipped(reason)))
        continue
      }
      let findings = report.result.findings.filter { $0.ruleID == d.id }
      let failing = findings.filter { report.effectiveSeverity($0) == .error }
      let others = findings.filter { report.effectiveSeverity($0) != .error }
      let output =
        others.isEmpty
        ? nil : others.map { "\(report.effectiveSeverity($0).rawValue): \($0.line)" }.joined(separator: "\n")
      if failing.isEmpty {
        cases.append(Case(classname: classname, name: d.name, outcome: .passed(output: output)))
        continue
      }
      var names: [String: Int] = [:]
      for f in failing {
        var name = "\(d.name): \(f.path ?? report.displayPath)"
        names[name, default: 0] += 1
        if let n = names[name], n > 1 { name += " (\(n))" }
        cases.append(
          Case(classname: classname, name: name, outcome: .failure(message: f.message, type: d.id, body: f.line)))
      }
    }
    return cases
  }

  struct Counts {
    private(set) var tests = 0, failures = 0, errors = 0, skipped = 0
    init(_ cases: [Case]) {
      tests = cases.count
      for c in cases {
        switch c.outcome {
        case .failure: failures += 1
        case .error: errors += 1
        case .skipped: skipped += 1
        case .passed: break
        }
      }
    }
    var attributes: String { "tests=\"\(tests)\" failures=\"\(failures)\" errors=\"\(errors)\" skipped=\"\(skipped)\"" }
  }

  /// One `<testsuites>` document: a suite per input, a case per rule (a failing case per error).
  public static func render(_ reports: [ValidationReport]) -> String {
    let suites = reports.map { ($0, cases($0)) }
    let total = Counts(suites.flatMap(\.1))
    var out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
    out += "<testsuites name=\"pkgtool validate\" \(total.attributes)>\n"
    for (report, cases) in suites {
      out += "  <testsuite name=\"\(escape(report.displayPath))\" \(Counts(cases).attributes)>\n"
      for c in cases {
        out += "    <testcase classname=\"\(escape(c.classname))\" name=\"\(escape(c.name))\""
        switch c.outcome {
        case .passed(nil):
          out += "/>\n"
          continue
        case .passed(let output?):
          out += ">\n      <system-out>\(escape(output))</system-out>\n"
        case .skipped(let reason):
          out += ">\n      <skipped message=\"\(escape(reason))\"/>\n"
        case .failure(let message, let type, let body):
          out += ">\n      <failure message=\"\(escape(message))\" type=\"\(escape(type))\">\(escape(body))</failure>\n"
        case .error(let message):
          out += ">\n      <error message=\"\(escape(message))\" type=\"unreadable-input\">\(escape(message))</error>\n"
        }
        out += "    </testcase>\n"
      }
      out += "  </testsuite>\n"
    }
    out += "</testsuites>\n"
    return out
  }

  static func escape(_ s: String) -> String { escapeXML(s, attribute: true, showControls: true) }
}
