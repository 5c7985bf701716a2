import Foundation
import HostedContent
import Testing
import TestSupport

/// Every reporter against a golden file. `{{VERSION}}` stands for pkgtool's version.
@Suite struct ReporterTests {
  static let report: ValidationReport = {
    let result = InspectionResult(
      format: .xar, location: "book.pkg", packageSize: 4096,
      findings: [
        Finding(ruleID: "no-executable", severity: .error, path: "Contents/cover.png", message: "the file is a Mach-O executable (64-bit)", hint: "remove executable code from the content"),
        Finding(ruleID: "junk-file", severity: .warning, path: "Contents/.DS_Store", message: "'.DS_Store' is junk left by an operating system or tool", hint: nil),
        Finding(ruleID: "size-limit", severity: .error, path: nil, message: "the unpacked content is 3000 bytes, over the limit of 1000", hint: nil),
      ],
      contentInfo: ContentInfo(productIdentifier: "com.example.book", contentVersion: ContentVersion("1.2")!),
      entryCount: 5, contentSize: 3000, entries: [], integrityFailed: false)
    return ValidationReport(result: result, displayPath: "book.pkg", strict: false)
  }()

  func golden(_ name: String) throws -> String {
    let path = repositoryRoot + "/Tests/HostedContentTests/Golden/" + name
    return String(decoding: try readFile(path), as: UTF8.self).replacingOccurrences(of: "{{VERSION}}", with: PkgTool.version)
  }

  @Test(arguments: [("text", "report.txt"), ("json", "report.json"), ("sarif", "report.sarif"), ("junit", "report.junit.xml"), ("github", "report.github.txt")])
  func matchesGoldenFile(reporter: String, file: String) throws {
    let rendered = try #require(Reporters.reporter(reporter)).render(Self.report)
    if ProcessInfo.processInfo.environment["PKGTOOL_UPDATE_GOLDEN"] != nil {
      try writeFile(repositoryRoot + "/Tests/HostedContentTests/Golden/" + file, rendered.replacingOccurrences(of: PkgTool.version, with: "{{VERSION}}"))
    }
    #expect(rendered == (try golden(file)))
  }

  @Test func jsonAndSARIFParseAndCarryEveryFinding() throws {
    let json = try JSONSerialization.jsonObject(with: Data(JSONReporter.render(Self.report).utf8)) as! [String: Any]
    #expect(json["schemaVersion"] as? Int == 1)
    #expect((json["findings"] as? [[String: Any]])?.count == 3)
    #expect((json["rules"] as? [[String: Any]])?.count == RuleCatalog.all.count)
    #expect(json["valid"] as? Bool == false)
    let sarif = try JSONSerialization.jsonObject(with: Data(SARIFReporter.render(Self.report).utf8)) as! [String: Any]
    #expect(sarif["version"] as? String == "2.1.0")
    let run = try #require((sarif["runs"] as? [[String: Any]])?.first)
    #expect((run["results"] as? [[String: Any]])?.count == 3)
    let driver = (run["tool"] as? [String: Any])?["driver"] as? [String: Any]
    #expect((driver?["rules"] as? [[String: Any]])?.map { $0["id"] as? String } == RuleCatalog.descriptions.map(\.id))
  }

  @Test func strictTurnsWarningsIntoErrors() {
    var report = Self.report
    report.strict = true
    #expect(TextReporter.render(report).contains("Contents/.DS_Store: error:"))
    #expect(report.failed)
  }

  @Test func hostileNamesCannotRewriteTheTerminal() {
    var report = Self.report
    report.result.findings = [Finding(ruleID: "path-safety", severity: .error, path: "Contents/a\u{1B}[2Jb", message: "x")]
    let text = TextReporter.render(report)
    #expect(!text.contains("\u{1B}"))
    #expect(text.contains("a\\u{1b}[2Jb"))
  }
}
