/// A versioned JSON document (see `docs/json-schema.md`): package, product, version, counts,
/// findings, the rules skipped and the rule catalog. Several inputs give one document with a
/// `reports` array of the same per-input objects.
public enum JSONReporter: Reporter {
  /// `json`.
  public static let identifier = "json"
  /// Raised when a field changes meaning or goes away; new fields do not raise it.
  public static let schemaVersion = 1

  struct Document: Encodable {
    var schemaVersion: Int
    var tool: Tool
    var package: Package
    var valid: Bool
    var strict: Bool
    /// Why the input could not be checked (the command exits 2).
    var error: String?
    var summary: Summary
    var findings: [Item]
    /// Rules that did not run, with the reason.
    var skippedRules: [Skipped]
    var rules: [RuleEntry]?
  }
  struct Skipped: Encodable {
    var rule: String
    var reason: String
  }
  struct Several: Encodable {
    var schemaVersion: Int
    var tool: Tool
    var valid: Bool
    var reports: [Document]
    var rules: [RuleEntry]
  }
  struct Tool: Encodable {
    var name: String
    var version: String
  }
  struct Package: Encodable {
    var path: String
    var format: String
    var size: UInt64?
    var productIdentifier: String?
    var contentVersion: String?
    var entryCount: Int
    var contentSize: UInt64
    /// A content project's own files, which build leaves out (absent when there are none).
    var projectFiles: [String]?
  }
  struct Summary: Encodable {
    var errors: Int
    var warnings: Int
    var notes: Int
  }
  struct Item: Encodable {
    var rule: String
    var severity: String
    var path: String?
    var message: String
    var hint: String?
  }
  struct RuleEntry: Encodable {
    var id: String
    var name: String
    var summary: String
    var severity: String
  }

  static func ruleEntries() -> [RuleEntry] {
    RuleCatalog.descriptions.map {
      RuleEntry(id: $0.id, name: $0.name, summary: $0.summary, severity: $0.severity.rawValue)
    }
  }

  static func document(_ report: ValidationReport, withRules: Bool) -> Document {
    let r = report.result
    return Document(
      schemaVersion: schemaVersion, tool: Tool(name: "pkgtool", version: PkgTool.version),
      package: Package(
        path: report.displayPath, format: r.format.rawValue, size: r.packageSize,
        productIdentifier: r.contentInfo?.productIdentifier, contentVersion: r.contentInfo?.contentVersion.description,
        entryCount: r.entryCount, contentSize: r.contentSize,
        projectFiles: r.projectFiles.isEmpty ? nil : r.projectFiles),
      valid: !report.failed, strict: report.strict, error: report.toolError,
      summary: Summary(errors: report.errorCount, warnings: report.warningCount, notes: report.noteCount),
      findings: r.findings.map {
        Item(
          rule: $0.ruleID, severity: report.effectiveSeverity($0).rawValue, path: $0.path, message: $0.message,
          hint: $0.hint)
      },
      skippedRules: RuleCatalog.descriptions.compactMap { d in
        r.skippedRules[d.id].map { Skipped(rule: d.id, reason: $0) }
      },
      rules: withRules ? ruleEntries() : nil)
  }

  /// One JSON document: one input's report, or `{"reports": […]}` for several.
  public static func render(_ reports: [ValidationReport]) -> String {
    if reports.count == 1 { return JSONText.string(document(reports[0], withRules: true)) + "\n" }
    let several = Several(
      schemaVersion: schemaVersion, tool: Tool(name: "pkgtool", version: PkgTool.version),
      valid: !reports.contains { $0.failed }, reports: reports.map { document($0, withRules: false) },
      rules: ruleEntries())
    return JSONText.string(several) + "\n"
  }
}
