import Foundation
import HostedContent
import TestSupport
import Testing

/// A house rule written against the public API only, as a user of the library would (and as
/// the DocC article shows): it runs beside the built-in rules through `Validation.run(rules:)`.
final class LargeFileRule: Rule {
  static let description = RuleDescription(
    id: "house-large-file", name: "No file over 1 MB", category: .limits,
    summary: "A file over 1,000,000 bytes.",
    rationale: "Our app streams large media from its own server instead.",
    severity: .warning,
    triggering: [
      .package(
        "large file", adding: [.file("Contents/big.bin", String(repeating: "x", count: 1_000_001))],
        expecting: "Contents/big.bin")
    ],
    nonTriggering: [.package("small file", adding: [.file("Contents/small.txt", "hi")])])

  init(context: RuleContext) {}

  func inspect(_ inspected: InspectedEntry, into findings: inout [Finding]) {
    guard inspected.entry.kind == .file, inspected.entry.size > 1_000_000 else { return }
    findings.append(finding(inspected.entry.path, "the file is \(inspected.entry.size) bytes"))
  }
}

@Suite struct CustomRuleTests {
  @Test func aHouseRuleRunsBesideTheBuiltInOnes() throws {
    for example in LargeFileRule.description.triggering + LargeFileRule.description.nonTriggering {
      let dir = try TemporaryDirectory()
      let folder = dir.appending("project")
      #expect(try ExamplePackages.writeFolder(example.nodes, at: folder))
      let withRule = try Validation.run(
        path: folder, options: ValidationOptions(), rules: RuleCatalog.all + [LargeFileRule.self])
      let hits = withRule.findings.filter { $0.ruleID == "house-large-file" }
      if let expected = example.expectedPath {
        #expect(hits.map(\.path) == [expected], "\(example.name)")
        #expect(hits.allSatisfy { $0.severity == .warning })
        #expect(!withRule.failed(strict: false), "a warning does not fail validation")
        #expect(withRule.failed(strict: true), "but it does with --strict")
      } else {
        #expect(hits.isEmpty, "\(example.name): \(hits)")
      }
      let builtInOnly = try Validation.run(path: folder, options: ValidationOptions())
      #expect(builtInOnly.findings.allSatisfy { $0.ruleID != "house-large-file" })
      #expect(builtInOnly.findings.isEmpty, "\(example.name): \(builtInOnly.findings)")
    }
  }
}
