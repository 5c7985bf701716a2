import Foundation
import HostedContent
import TestSupport
import Testing

/// Every rule against its own examples, each built into a real package and, where it can exist
/// on disk, a real folder.
@Suite struct RuleExampleTests {
  static let ruleIDs = RuleCatalog.descriptions.map(\.id)

  func validate(_ example: RuleExample, folder: Bool, in dir: TemporaryDirectory) throws -> InspectionResult? {
    let path: String
    if folder {
      guard example.appliesToFolders else { return nil }
      path = dir.appending("folder")
      guard try ExamplePackages.writeFolder(example.nodes, at: path) else { return nil }
    } else {
      guard example.appliesToPackages else { return nil }
      path = try ExamplePackages.package(for: example, in: dir.path)
    }
    let against = try example.previous.map {
      try ExamplePackages.previousVersion(product: $0.product, version: $0.version, in: dir.path)
    }
    return try Validation.run(path: path, options: example.options, against: against)
  }

  @Test(arguments: ruleIDs)
  func triggeringExamplesAreReported(ruleID: String) throws {
    let rule = try #require(RuleCatalog.rule(withID: ruleID))
    #expect(!rule.description.triggering.isEmpty)
    for example in rule.description.triggering {
      for folder in [false, true] {
        let dir = try TemporaryDirectory()
        guard let result = try validate(example, folder: folder, in: dir) else { continue }
        let hits = result.findings.filter { $0.ruleID == ruleID }
        #expect(
          !hits.isEmpty,
          "\(ruleID): '\(example.name)' (\(folder ? "folder" : "package")) not reported; got \(result.findings)")
        if let expected = example.expectedPath {
          #expect(
            hits.contains { $0.path == expected },
            "\(ruleID): '\(example.name)' expected at \(expected), got \(hits.map(\.path))")
        }
        // In a project folder, what build leaves out (junk) is a note: the package will not hold it.
        #expect(
          hits.allSatisfy {
            $0.severity == rule.description.severity || $0.severity == .warning || (folder && $0.severity == .note)
          })
      }
    }
  }

  @Test(arguments: ruleIDs)
  func nonTriggeringExamplesAreAccepted(ruleID: String) throws {
    let rule = try #require(RuleCatalog.rule(withID: ruleID))
    #expect(!rule.description.nonTriggering.isEmpty)
    for example in rule.description.nonTriggering {
      for folder in [false, true] {
        let dir = try TemporaryDirectory()
        guard let result = try validate(example, folder: folder, in: dir) else { continue }
        let hits = result.findings.filter { $0.ruleID == ruleID }
        #expect(
          hits.isEmpty, "\(ruleID): '\(example.name)' (\(folder ? "folder" : "package")) wrongly reported: \(hits)")
      }
    }
  }

  @Test func catalogIdsAreStableKebabCaseAndUnique() {
    let ids = Self.ruleIDs
    #expect(Set(ids).count == ids.count)
    // Ids are never renamed or removed (new rules may join); the order is by category, then id.
    let stable = [
      "archive-integrity", "package-form", "content-info", "layout", "duplicate-path", "path-safety",
      "no-executable", "no-external-symlink", "special-file", "size-limit", "content-version-increase", "junk-file",
      "asset-pack-files", "asset-pack-manifest",
    ]
    #expect(ids.filter(stable.contains) == stable)
    let keys = RuleCatalog.descriptions.map { ($0.category.rawValue, $0.id) }
    #expect(zip(keys, keys.dropFirst()).allSatisfy { $0 < $1 })
    for id in ids { #expect(id.allSatisfy { $0.isLowercase || $0 == "-" }) }
  }

  @Test func theBaseAssetPackIsValidAndHostedContentRulesAreSkipped() throws {
    let dir = try TemporaryDirectory()
    #expect(try ExamplePackages.writeFolder(RuleExample.assetPack("base").nodes, at: dir.appending("pack")))
    let result = try Validation.run(path: dir.appending("pack"), options: ValidationOptions())
    #expect(result.format == .assetPack)
    #expect(result.findings.isEmpty, "\(result.findings)")
    for id in [
      "layout", "content-info", "package-form", "content-version-increase", "no-external-symlink",
    ] {
      #expect(result.skippedRules[id] != nil, "\(id) ran on an asset pack")
    }
    // A reading stopped at --max-size is an error for every kind of input.
    #expect(result.skippedRules["size-limit"] == nil, "size-limit was skipped on an asset pack")
  }

  @Test func theBaseExampleIsValid() throws {
    let dir = try TemporaryDirectory()
    let path = try ExamplePackages.package(for: RuleExample.package("base"), in: dir.path)
    let result = try Validation.run(path: path, options: ValidationOptions())
    #expect(result.findings.isEmpty, "\(result.findings)")
    #expect(result.contentInfo?.productIdentifier == "com.example.sample")
  }
}
