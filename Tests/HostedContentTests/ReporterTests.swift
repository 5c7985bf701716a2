import Foundation
import HostedContent
import TestSupport
import Testing

/// Every reporter against golden files, on a package and on a project folder, both with findings
/// in nested files (names with a space and a '#'). `{{VERSION}}` stands for pkgtool's version.
/// Regenerate with `PKGTOOL_UPDATE_GOLDEN=1 swift test --filter ReporterTests`.
@Suite struct ReporterTests {
  static let nested = "Contents/levels/world 1/boss#2.bin"
  /// The rules a validation of a hosted-content package without --against skips.
  static let skipped = [
    "content-version-increase": "runs only with --against OLD",
    "asset-pack-manifest": "applies to Background Assets asset-pack folders",
    "asset-pack-files": "applies to Background Assets asset-pack folders",
  ]

  /// A package with an error in a nested file, a warning, a package-wide error; one rule skipped.
  static let report: ValidationReport = {
    var result = InspectionResult(
      format: .xar, location: "book.pkg", packageSize: 4096,
      findings: [
        Finding(
          ruleID: "no-executable", severity: .error, path: nested, message: "the file is a Mach-O executable (64-bit)",
          hint: "remove executable code from the content"),
        Finding(
          ruleID: "junk-file", severity: .warning, path: "Contents/.DS_Store",
          message: "'.DS_Store' is junk left by an operating system or tool", hint: nil),
        Finding(
          ruleID: "size-limit", severity: .error, path: nil,
          message: "the unpacked content is 3,000 bytes, over the limit of 1,000 bytes", hint: nil),
      ],
      contentInfo: ContentInfo(productIdentifier: "com.example.book", contentVersion: ContentVersion("1.2")!),
      entryCount: 5, contentSize: 3000, entries: [], integrityFailed: false)
    result.skippedRules = skipped
    var report = ValidationReport(result: result, displayPath: "book.pkg", strict: false)
    report.digests = [nested: String(repeating: "ab", count: 32)]
    return report
  }()

  /// A project folder: findings point at real files under it, notes for what build leaves out.
  static let folderReport: ValidationReport = {
    var result = InspectionResult(
      format: .directory, location: "src/MyBook", packageSize: nil,
      findings: [
        Finding(
          ruleID: "layout", severity: .note, path: "README.md",
          message: "'README.md' is a project file beside Contents/; build leaves it out of the package"),
        Finding(
          ruleID: "no-executable", severity: .error, path: "Contents/bin/tool 1",
          message: "the file is an ELF executable",
          hint: "remove executable code from the content; hosted content may only hold data"),
        Finding(
          ruleID: "junk-file", severity: .note, path: "Contents/art/.DS_Store",
          message: "'.DS_Store' is junk; build leaves it out of the package"),
      ],
      contentInfo: ContentInfo(productIdentifier: "com.example.book", contentVersion: ContentVersion("1.0")!),
      entryCount: 6, contentSize: 1234, entries: [], integrityFailed: false)
    result.skippedRules = skipped
    return ValidationReport(result: result, displayPath: "src/MyBook", strict: false)
  }()

  static let goldenFolder = repositoryRoot + "/Tests/HostedContentTests/Golden/"

  func golden(_ name: String) throws -> String {
    String(decoding: try readFile(Self.goldenFolder + name), as: UTF8.self).replacingOccurrences(
      of: "{{VERSION}}", with: PkgTool.version)
  }

  func check(_ rendered: String, against file: String) throws {
    if ProcessInfo.processInfo.environment["PKGTOOL_UPDATE_GOLDEN"] != nil {
      try writeFile(Self.goldenFolder + file, rendered.replacingOccurrences(of: PkgTool.version, with: "{{VERSION}}"))
    }
    #expect(rendered == (try golden(file)))
  }

  static let reporters = [
    ("text", "txt"), ("json", "json"), ("sarif", "sarif"), ("junit", "junit.xml"), ("github", "github.txt"),
  ]

  @Test(arguments: reporters)
  func packageReportMatchesGoldenFile(reporter: String, ext: String) throws {
    try check(try #require(ReportFormat(rawValue: reporter)).reporter.render(Self.report), against: "report.\(ext)")
  }

  @Test(arguments: reporters)
  func folderReportMatchesGoldenFile(reporter: String, ext: String) throws {
    try check(
      try #require(ReportFormat(rawValue: reporter)).reporter.render(Self.folderReport), against: "folder-report.\(ext)"
    )
  }

  /// The SARIF goldens, and a log of a real package and folder, against the vendored SARIF 2.1.0
  /// schema (offline, Python's jsonschema).
  @Test func sarifValidatesAgainstTheSchema() throws {
    let dir = try TemporaryDirectory()
    var both = [Self.report, Self.folderReport]
    both[0].documentationURL = "https://example.org/pkgtool/docs/rules.md"
    try writeFile(dir.appending("both.sarif"), SARIFReporter.render(both))
    try writeFile(
      dir.appending("error.sarif"),
      SARIFReporter.render(ValidationReport(unreadable: "gone.pkg", error: "cannot open 'gone.pkg'", strict: false)))
    let files = [
      Self.goldenFolder + "report.sarif", Self.goldenFolder + "folder-report.sarif", dir.appending("both.sarif"),
      dir.appending("error.sarif"),
    ]
    let result = try runProcess("/usr/bin/env", ["python3", repositoryRoot + "/scripts/check-sarif.py"] + files)
    #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
    // And the checker does fail: a log with a bad level and an unencoded URI.
    try writeFile(
      dir.appending("bad.sarif"),
      #"{"version":"2.1.0","runs":[{"tool":{"driver":{"name":"x"}},"results":[{"message":{"text":"a"},"level":"fatal","locations":[{"physicalLocation":{"artifactLocation":{"uri":"a b"}}}]}]}]}"#
    )
    #expect(
      try runProcess(
        "/usr/bin/env", ["python3", repositoryRoot + "/scripts/check-sarif.py", dir.appending("bad.sarif")]
      ).status == 1)
  }

  @Test func sarifPointsAtRealFilesForFoldersAndLogicalLocationsForPackages() throws {
    let package = try sarifResults(SARIFReporter.render(Self.report))
    let first = package[0]
    let location = try #require((first["locations"] as? [[String: Any]])?.first)
    let artifact = (location["physicalLocation"] as? [String: Any])?["artifactLocation"] as? [String: Any]
    #expect(artifact?["uri"] as? String == "book.pkg")
    #expect(artifact?["uriBaseId"] as? String == "%SRCROOT%")
    let logical = (location["logicalLocations"] as? [[String: Any]])?.first
    #expect(logical?["fullyQualifiedName"] as? String == Self.nested)
    #expect((first["properties"] as? [String: Any])?["innerPath"] as? String == Self.nested)
    let fingerprints = package.compactMap {
      ($0["partialFingerprints"] as? [String: String])?[SARIFReporter.fingerprintKey]
    }
    #expect(fingerprints.count == 3 && Set(fingerprints).count == 3)

    let folder = try sarifResults(SARIFReporter.render(Self.folderReport))
    let uris = folder.compactMap { r in
      (((r["locations"] as? [[String: Any]])?.first?["physicalLocation"] as? [String: Any])?["artifactLocation"]
        as? [String: Any])?["uri"] as? String
    }
    #expect(uris == ["src/MyBook/README.md", "src/MyBook/Contents/bin/tool%201", "src/MyBook/Contents/art/.DS_Store"])
    var based = Self.folderReport
    based.base = "src"
    let relative = try sarifResults(SARIFReporter.render(based)).compactMap { r in
      (((r["locations"] as? [[String: Any]])?.first?["physicalLocation"] as? [String: Any])?["artifactLocation"]
        as? [String: Any])?["uri"] as? String
    }
    #expect(relative.first == "MyBook/README.md")
  }

  func sarifResults(_ text: String) throws -> [[String: Any]] {
    let log = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
    let run = try #require((log["runs"] as? [[String: Any]])?.first)
    return try #require(run["results"] as? [[String: Any]])
  }

  @Test func sarifRulesCarryHelpAndSecuritySeverity() throws {
    var report = Self.report
    report.documentationURL = "https://example.org/docs/rules.md"
    let log = try #require(
      try JSONSerialization.jsonObject(with: Data(SARIFReporter.render(report).utf8)) as? [String: Any])
    let driver = try #require(
      ((log["runs"] as? [[String: Any]])?.first?["tool"] as? [String: Any])?["driver"] as? [String: Any])
    #expect(driver["informationUri"] == nil)
    let rules = try #require(driver["rules"] as? [[String: Any]])
    #expect(rules.map { $0["id"] as? String } == RuleCatalog.descriptions.map(\.id))
    for rule in rules {
      let id = try #require(rule["id"] as? String)
      #expect(((rule["help"] as? [String: Any])?["text"] as? String)?.contains("docs/rules.md#\(id)") == true)
      #expect(rule["helpUri"] as? String == "https://example.org/docs/rules.md#\(id)")
    }
    let pathSafety = try #require(rules.first { $0["id"] as? String == "path-safety" })
    #expect((pathSafety["properties"] as? [String: Any])?["security-severity"] as? String == "9.1")
    let junk = try #require(rules.first { $0["id"] as? String == "junk-file" })
    #expect((junk["properties"] as? [String: Any])?["security-severity"] == nil)
  }

  /// GitHub shows a rule's `shortDescription` as the title of its alerts: one line of at most
  /// 120 characters for every rule, with the whole summary and rationale in `fullDescription`
  /// and `help`.
  @Test func sarifShortDescriptionsAreOneShortLine() throws {
    let log = try #require(
      try JSONSerialization.jsonObject(with: Data(SARIFReporter.render(Self.report).utf8)) as? [String: Any])
    let driver = try #require(
      ((log["runs"] as? [[String: Any]])?.first?["tool"] as? [String: Any])?["driver"] as? [String: Any])
    let rules = try #require(driver["rules"] as? [[String: Any]])
    #expect(rules.count == RuleCatalog.descriptions.count)
    for (rule, description) in zip(rules, RuleCatalog.descriptions) {
      let short = try #require((rule["shortDescription"] as? [String: Any])?["text"] as? String)
      let full = try #require((rule["fullDescription"] as? [String: Any])?["text"] as? String)
      let help = try #require((rule["help"] as? [String: Any])?["text"] as? String)
      #expect(short.count <= 120, "\(description.id): \(short.count) characters")
      #expect(!short.contains("\n"), "\(description.id)")
      #expect(!short.isEmpty)
      #expect(full.contains(description.summary) && full.contains(description.rationale), "\(description.id)")
      #expect(help.contains(description.summary), "\(description.id)")
    }
    // A rule of a library user with a long summary and no headline: its words up to the limit.
    let long = RuleDescription(
      id: "house-rule", name: "House rule", category: .hygiene,
      summary: String(repeating: "a long summary that goes on ", count: 10), rationale: "Why.", triggering: [],
      nonTriggering: [])
    #expect(long.headline.count <= 120 && long.headline.hasSuffix("…") && long.headline.hasPrefix("a long summary"))
    let short = RuleDescription(
      id: "house-rule", name: "House rule", category: .hygiene, summary: "A short one.", rationale: "Why.",
      triggering: [], nonTriggering: [])
    #expect(short.headline == "A short one.")
  }

  @Test func sarifPercentEncodesURIs() {
    #expect(percentEncodedPath("a b/c#d%e?f/ü") == "a%20b/c%23d%25e%3Ff/%C3%BC")
  }

  @Test func junitCountsAreComputedAndSkippedRulesAreSkipped() throws {
    let xml = JUnitReporter.render(Self.report)
    // 16 rules: 11 pass, content-version-increase and the two asset-pack rules skipped,
    // no-executable and size-limit fail once each (junk-file is a warning: a passing case).
    #expect(xml.contains(#"<testsuites name="pkgtool validate" tests="16" failures="2" errors="0" skipped="3">"#))
    #expect(xml.contains(#"<skipped message="runs only with --against OLD"/>"#))
    #expect(xml.components(separatedBy: "<failure ").count - 1 == 2)
    var strict = Self.report
    strict.strict = true
    #expect(JUnitReporter.render(strict).contains(#"tests="16" failures="3""#))
    let error = JUnitReporter.render(
      ValidationReport(unreadable: "gone.pkg", error: "cannot open 'gone.pkg'", strict: false))
    #expect(error.contains(#"tests="17" failures="0" errors="1" skipped="16""#))
    // One failing case per finding when a rule finds several.
    var several = Self.report
    several.result.findings.append(
      Finding(
        ruleID: "no-executable", severity: .error, path: "Contents/b.bin", message: "the file is an ELF executable"))
    #expect(JUnitReporter.render(several).contains(#"tests="17" failures="3""#))
  }

  @Test func githubAnnotatesRealFilesAndSummarizesAValidRun() {
    let folder = GitHubReporter.render(Self.folderReport)
    #expect(folder.contains("::error file=src/MyBook/Contents/bin/tool 1,title=pkgtool no-executable::"))
    #expect(folder.contains("::notice file=src/MyBook/README.md,"))
    var valid = Self.folderReport
    valid.result.findings = valid.result.findings.filter { $0.severity == .note }
    let lines = GitHubReporter.render(valid).split(separator: "\n")
    #expect(lines.last?.hasPrefix("::notice file=src/MyBook,title=pkgtool validate::src/MyBook%3A valid") == false)
    #expect(
      lines.last?.hasPrefix(
        "::notice file=src/MyBook,title=pkgtool validate::src/MyBook: valid: 0 errors, 0 warnings, 2 notes") == true)
    #expect(!GitHubReporter.render(Self.report).contains("title=pkgtool validate"))
  }

  @Test func strictCountsAgreeEverywhere() throws {
    var report = Self.report
    report.strict = true
    let text = TextReporter.render(report)
    #expect(text.contains("Contents/.DS_Store: error:"))
    #expect(text.contains("invalid: 3 errors, 0 warnings"))
    let json = try #require(
      try JSONSerialization.jsonObject(with: Data(JSONReporter.render(report).utf8)) as? [String: Any])
    let summary = json["summary"] as? [String: Int]
    #expect(summary?["errors"] == 3 && summary?["warnings"] == 0)
    #expect(report.failed)
    // Notes never fail, even with --strict.
    var notes = Self.folderReport
    notes.strict = true
    notes.result.findings = notes.result.findings.filter { $0.severity == .note }
    #expect(!notes.failed)
  }

  @Test func jsonCarriesEveryFindingAndSeveralInputs() throws {
    let json = try #require(
      try JSONSerialization.jsonObject(with: Data(JSONReporter.render(Self.report).utf8)) as? [String: Any])
    #expect(json["schemaVersion"] as? Int == 1)
    #expect((json["findings"] as? [[String: Any]])?.count == 3)
    #expect((json["rules"] as? [[String: Any]])?.count == RuleCatalog.all.count)
    #expect((json["skippedRules"] as? [[String: Any]])?.first?["rule"] as? String == "content-version-increase")
    #expect((json["skippedRules"] as? [[String: Any]])?.count == 3)
    let several = try #require(
      try JSONSerialization.jsonObject(with: Data(JSONReporter.render([Self.report, Self.folderReport]).utf8))
        as? [String: Any])
    #expect((several["reports"] as? [[String: Any]])?.count == 2)
    #expect(several["valid"] as? Bool == false)
  }

  @Test func hostileNamesCannotRewriteTheTerminal() {
    var report = Self.report
    report.result.findings = [
      Finding(ruleID: "path-safety", severity: .error, path: "Contents/a\u{1B}[2Jb", message: "x")
    ]
    let text = TextReporter.render(report)
    #expect(!text.contains("\u{1B}"))
    #expect(text.contains("a\\u{1b}[2Jb"))
  }
}
