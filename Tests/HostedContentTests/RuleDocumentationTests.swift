import Foundation
import HostedContent
import TestSupport
import Testing

/// docs/rules.md's catalog and the README's rule table are written from the rules' own
/// descriptions; these tests fail when a rule changes and the documents do not.
/// `PKGTOOL_UPDATE_GOLDEN=1 swift test --filter RuleDocumentation` writes them again.
@Suite struct RuleDocumentationTests {
  static let updating = ProcessInfo.processInfo.environment["PKGTOOL_UPDATE_GOLDEN"] != nil

  private func check(_ relativePath: String, generated: String) throws {
    let path = repositoryRoot + "/" + relativePath
    let document = String(decoding: try readFile(path), as: UTF8.self)
    let expected = try #require(
      RuleDocumentation.replacingGenerated(in: document, with: generated), "\(relativePath) lost its GENERATED markers")
    if Self.updating {
      if expected != document { try writeFile(path, expected) }
      return
    }
    #expect(
      document == expected,
      "\(relativePath) differs from the rules' descriptions; run PKGTOOL_UPDATE_GOLDEN=1 swift test --filter RuleDocumentation"
    )
  }

  @Test func docsRulesCatalogIsGeneratedFromTheRules() throws {
    try check("docs/rules.md", generated: RuleDocumentation.catalog())
  }

  @Test func readmeRuleTableIsGeneratedFromTheRules() throws {
    try check("README.md", generated: RuleDocumentation.table())
  }

  @Test func theCatalogNamesEveryRuleOnceWithItsExamples() {
    let text = RuleDocumentation.catalog()
    for rule in RuleCatalog.descriptions {
      #expect(text.components(separatedBy: "### `\(rule.id)`:").count == 2, "\(rule.id)")
      for example in rule.triggering { #expect(text.contains("*\(example.name)*"), "\(rule.id): \(example.name)") }
    }
    #expect(RuleDocumentation.table().split(separator: "\n").count == RuleCatalog.descriptions.count + 2)
  }

  @Test func replacingKeepsWhatIsAroundTheMarkers() throws {
    let document = "intro\n\(RuleDocumentation.beginMarker)\nold\n\(RuleDocumentation.endMarker)\noutro\n"
    let replaced = try #require(RuleDocumentation.replacingGenerated(in: document, with: "new\n"))
    #expect(replaced == "intro\n\(RuleDocumentation.beginMarker)\nnew\n\(RuleDocumentation.endMarker)\noutro\n")
    #expect(RuleDocumentation.replacingGenerated(in: "no markers", with: "x") == nil)
  }
}
