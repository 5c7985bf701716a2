import Crypto
import SystemIO
import TextCoding

/// SARIF 2.1.0 for code-scanning dashboards (GitHub, GitLab, Azure DevOps), valid against the
/// OASIS schema (a test checks it against the vendored copy).
///
/// - For a folder, each result points at the real file (`src/Contents/tool`, relative to
///   `--base` or the working directory, `uriBaseId` `%SRCROOT%`).
/// - For a package, the package is the artifact; the inner path is a logical location and a
///   `properties.innerPath`.
/// - `partialFingerprints` hash the rule, the inner path and the content, so an alert stays one
///   alert across runs and two findings never merge.
/// - The catalog is `tool.driver.rules`, with help text and `security-severity` for the rules
///   that guard the device. A rule's `shortDescription`, the title GitHub gives its alerts, is its
///   one-line ``RuleDescription/headline``; the full summary and rationale are in
///   `fullDescription` and `help`.
/// - When the input cannot be read, the run says so in `invocations` (`executionSuccessful`
///   false, a `toolExecutionNotifications` entry).
public enum SARIFReporter: Reporter {
  /// `sarif`.
  public static let identifier = "sarif"
  /// The `uriBaseId` of every relative URI: the checkout root, as GitHub's upload expects.
  public static let uriBaseID = "%SRCROOT%"
  /// The key of `partialFingerprints`.
  public static let fingerprintKey = "pkgtoolFinding/v1"

  struct Log: Encodable {
    var schema = "https://json.schemastore.org/sarif-2.1.0.json"
    var version = "2.1.0"
    var runs: [Run]
    enum CodingKeys: String, CodingKey {
      case schema = "$schema"
      case version, runs
    }
  }
  struct Run: Encodable {
    var tool: Tool
    var invocations: [Invocation]
    var results: [Result]
  }
  struct Tool: Encodable { var driver: Driver }
  struct Driver: Encodable {
    var name = "pkgtool"
    var version: String
    var semanticVersion: String
    var rules: [RuleDescriptor]
  }
  struct RuleDescriptor: Encodable {
    var id: String
    var name: String
    var shortDescription: Text
    var fullDescription: Text
    var help: Text
    var helpUri: String?
    var defaultConfiguration: Configuration
    var properties: RuleProperties
  }
  struct RuleProperties: Encodable {
    var tags: [String]
    var securitySeverity: String?
    enum CodingKeys: String, CodingKey {
      case tags
      case securitySeverity = "security-severity"
    }
  }
  struct Text: Encodable { var text: String }
  struct Configuration: Encodable { var level: String }
  struct Invocation: Encodable {
    var executionSuccessful: Bool
    var toolExecutionNotifications: [Notification]?
  }
  struct Notification: Encodable {
    var level: String
    var message: Text
    var locations: [Location]?
  }
  struct Result: Encodable {
    var ruleId: String
    var ruleIndex: Int
    var level: String
    var message: Text
    var locations: [Location]
    var partialFingerprints: [String: String]
    var properties: ResultProperties
  }
  struct ResultProperties: Encodable {
    /// The package (or folder) as given on the command line.
    var package: String
    /// The entry inside it, when the finding is about one.
    var innerPath: String?
    var hint: String?
  }
  struct Location: Encodable {
    var physicalLocation: Physical
    var logicalLocations: [Logical]?
  }
  /// A file-level location still names line 1: GitHub code scanning places an alert only where
  /// `region.startLine` says (the SARIF multitool's rule GH1003).
  struct Physical: Encodable {
    var artifactLocation: Artifact
    var region = Region(startLine: 1)
  }
  struct Region: Encodable { var startLine: Int }
  struct Artifact: Encodable {
    var uri: String
    var uriBaseId: String?
  }
  struct Logical: Encodable {
    var name: String
    var fullyQualifiedName: String
    var kind: String
  }

  /// One SARIF 2.1.0 log with one run for all inputs.
  public static func render(_ reports: [ValidationReport]) -> String {
    let descriptions = RuleCatalog.descriptions
    let documentation = reports.first?.documentationURL
    let rules = descriptions.map { d in
      RuleDescriptor(
        id: d.id, name: d.name, shortDescription: Text(text: d.headline),
        fullDescription: Text(text: "\(d.summary) Why: \(d.rationale)"),
        help: Text(
          text:
            "\(d.summary) Why: \(d.rationale) Examples and fixes: docs/rules.md#\(d.id) in pkgtool's repository, or `pkgtool rules \(d.id)`."
        ),
        helpUri: documentation.map { "\($0)#\(d.id)" },
        defaultConfiguration: Configuration(level: sarifLevel(d.severity)),
        properties: RuleProperties(
          tags: d.securitySeverity == nil ? ["hosted-content"] : ["hosted-content", "security"],
          securitySeverity: d.securitySeverity.map { String(format: "%.1f", $0) }))
    }
    var results: [Result] = []
    var notifications: [Notification] = []
    for report in reports {
      if let error = report.toolError {
        notifications.append(
          Notification(
            level: "error", message: Text(text: "\(report.displayPath): could not be checked: \(error)"),
            locations: [
              Location(
                physicalLocation: Physical(artifactLocation: artifact(report.displayPath, report)),
                logicalLocations: nil)
            ]))
        continue
      }
      for finding in report.result.findings {
        results.append(result(finding, report, ruleIndex: descriptions.firstIndex { $0.id == finding.ruleID } ?? 0))
      }
    }
    let invocation = Invocation(
      executionSuccessful: notifications.isEmpty,
      toolExecutionNotifications: notifications.isEmpty ? nil : notifications)
    let driver = Driver(version: PkgTool.version, semanticVersion: PkgTool.version, rules: rules)
    let log = Log(runs: [Run(tool: Tool(driver: driver), invocations: [invocation], results: results)])
    return JSONText.string(log) + "\n"
  }

  static func result(_ finding: Finding, _ report: ValidationReport, ruleIndex: Int) -> Result {
    var text = finding.path.map { "\($0): \(finding.message)" } ?? finding.message
    if let hint = finding.hint { text += " (\(hint))" }
    let inner = finding.path
    var location = Location(
      physicalLocation: Physical(artifactLocation: artifact(report.relativeFilePath(for: finding), report)),
      logicalLocations: nil)
    if !report.isFolder, let inner {
      location.logicalLocations = [Logical(name: Paths.name(of: inner), fullyQualifiedName: inner, kind: "resource")]
    }
    return Result(
      ruleId: finding.ruleID, ruleIndex: ruleIndex, level: sarifLevel(report.effectiveSeverity(finding)),
      message: Text(text: text), locations: [location],
      partialFingerprints: [fingerprintKey: fingerprint(finding, report)],
      properties: ResultProperties(package: report.displayPath, innerPath: inner, hint: finding.hint))
  }

  /// An artifact location: a relative path becomes a percent-encoded relative URI against
  /// `%SRCROOT%`; an absolute one a `file://` URI.
  static func artifact(_ path: String, _ report: ValidationReport) -> Artifact {
    if path.hasPrefix("/") { return Artifact(uri: "file://" + percentEncodedPath(path), uriBaseId: nil) }
    return Artifact(uri: percentEncodedPath(Paths.normalized(path)), uriBaseId: uriBaseID)
  }

  /// SHA-256 of rule id, inner path and the content's SHA-256 (or, for a finding about no one
  /// file, its message), NUL-separated, hex.
  static func fingerprint(_ finding: Finding, _ report: ValidationReport) -> String {
    let content = finding.path.flatMap { report.digests[$0] } ?? (finding.path == nil ? finding.message : "")
    let text = [finding.ruleID, finding.path ?? "", content].joined(separator: "\u{0}")
    return hexString(SHA256.hash(data: Array(text.utf8)))
  }

  /// SARIF's level for a severity.
  static func sarifLevel(_ severity: Severity) -> String {
    switch severity {
    case .error: return "error"
    case .warning: return "warning"
    case .note: return "note"
    }
  }

}
