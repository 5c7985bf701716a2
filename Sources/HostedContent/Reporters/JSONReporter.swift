/// A versioned JSON document (see `docs/json-schema.md`): package, product, version, counts,
/// findings and the rule catalog.
public enum JSONReporter: Reporter {
  public static let identifier = "json"
  /// Raised when a field changes meaning or goes away; new fields do not raise it.
  public static let schemaVersion = 1

  struct Document: Encodable {
    var schemaVersion: Int
    var tool: Tool
    var package: Package
    var valid: Bool
    var strict: Bool
    var summary: Summary
    var findings: [Item]
    var rules: [RuleEntry]
  }
  struct Tool: Encodable { var name: String; var version: String }
  struct Package: Encodable {
    var path: String
    var format: String
    var size: UInt64?
    var productIdentifier: String?
    var contentVersion: String?
    var entryCount: Int
    var contentSize: UInt64
  }
  struct Summary: Encodable { var errors: Int; var warnings: Int }
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
    RuleCatalog.descriptions.map { RuleEntry(id: $0.id, name: $0.name, summary: $0.summary, severity: $0.severity.rawValue) }
  }

  public static func render(_ report: ValidationReport) -> String {
    let r = report.result
    let document = Document(
      schemaVersion: schemaVersion, tool: Tool(name: "pkgtool", version: PkgTool.version),
      package: Package(
        path: report.displayPath, format: r.format.rawValue, size: r.packageSize,
        productIdentifier: r.contentInfo?.productIdentifier, contentVersion: r.contentInfo?.contentVersion.description,
        entryCount: r.entryCount, contentSize: r.contentSize),
      valid: !report.failed, strict: report.strict,
      summary: Summary(errors: report.errorCount, warnings: report.warningCount),
      findings: r.findings.map {
        Item(rule: $0.ruleID, severity: report.effectiveSeverity($0).rawValue, path: $0.path, message: $0.message, hint: $0.hint)
      },
      rules: ruleEntries())
    return encodeJSON(document) + "\n"
  }
}
