/// SARIF 2.1.0 for code-scanning dashboards, with the catalog in `tool.driver.rules`. Typed
/// `Codable` structs, keys sorted, so the output is stable.
public enum SARIFReporter: Reporter {
  public static let identifier = "sarif"

  struct Log: Encodable {
    var schema = "https://json.schemastore.org/sarif-2.1.0.json"
    var version = "2.1.0"
    var runs: [Run]
    enum CodingKeys: String, CodingKey { case schema = "$schema", version, runs }
  }
  struct Run: Encodable { var tool: Tool; var results: [Result] }
  struct Tool: Encodable { var driver: Driver }
  struct Driver: Encodable {
    var name = "pkgtool"
    var version: String
    var informationUri = "https://github.com/pkgtool/pkgtool"
    var rules: [RuleDescriptor]
  }
  struct RuleDescriptor: Encodable {
    var id: String
    var name: String
    var shortDescription: Text
    var fullDescription: Text
    var defaultConfiguration: Configuration
  }
  struct Text: Encodable { var text: String }
  struct Configuration: Encodable { var level: String }
  struct Result: Encodable {
    var ruleId: String
    var ruleIndex: Int
    var level: String
    var message: Text
    var locations: [Location]
  }
  struct Location: Encodable { var physicalLocation: Physical }
  struct Physical: Encodable { var artifactLocation: Artifact }
  struct Artifact: Encodable { var uri: String }

  public static func render(_ report: ValidationReport) -> String {
    let descriptions = RuleCatalog.descriptions
    let rules = descriptions.map {
      RuleDescriptor(
        id: $0.id, name: $0.name, shortDescription: Text(text: $0.summary),
        fullDescription: Text(text: $0.rationale), defaultConfiguration: Configuration(level: $0.severity.rawValue))
    }
    let results = report.result.findings.map { finding -> Result in
      var text = finding.path.map { "\($0): \(finding.message)" } ?? finding.message
      if let hint = finding.hint { text += " (\(hint))" }
      return Result(
        ruleId: finding.ruleID, ruleIndex: descriptions.firstIndex { $0.id == finding.ruleID } ?? 0,
        level: report.effectiveSeverity(finding).rawValue, message: Text(text: text),
        locations: [Location(physicalLocation: Physical(artifactLocation: Artifact(uri: report.displayPath)))])
    }
    let log = Log(runs: [Run(tool: Tool(driver: Driver(version: PkgTool.version, rules: rules)), results: results)])
    return encodeJSON(log) + "\n"
  }
}
