import Foundation
import HostedContent
import TestSupport
import Testing

#if canImport(FoundationXML)
  import FoundationXML
#endif

/// The recipes in docs/ci.md, run as written: every `run:` (GitHub Actions) and `script:`
/// (GitLab CI) line that calls pkgtool, in order, in a checkout holding `content/MyBook`.
@Suite struct CIRecipeTests {
  /// The pkgtool commands of each YAML block in docs/ci.md, keyed by the block's first line.
  static func recipes() throws -> [[String]] {
    let text = String(decoding: try readFile(repositoryRoot + "/docs/ci.md"), as: UTF8.self)
    var recipes: [[String]] = []
    var inYAML = false
    var current: [String] = []
    for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
      if line.hasPrefix("```yaml") {
        inYAML = true
        current = []
        continue
      }
      if inYAML && line.hasPrefix("```") {
        inYAML = false
        // A block that calls no pkgtool itself (the action.yml workflow) is not a recipe here;
        // scripts/release-test.sh runs the action's steps.
        if !current.isEmpty { recipes.append(current) }
        continue
      }
      guard inYAML else { continue }
      let trimmed = line.drop { $0 == " " }
      var command: Substring?
      if trimmed.hasPrefix("run: ") { command = trimmed.dropFirst(5) }
      if trimmed.hasPrefix("- ") && !trimmed.hasPrefix("- uses:") && !trimmed.hasPrefix("- name:") {
        command = trimmed.dropFirst(2)
      }
      if let command, command.contains("pkgtool "), !command.contains("install.sh") {
        current.append(String(command))
      }
    }
    return recipes
  }

  func makeCheckout(_ dir: TemporaryDirectory) throws {
    try FileManager.default.createDirectory(atPath: dir.appending("content"), withIntermediateDirectories: true)
    #expect(try pkgtool(["init", "content/MyBook", "--product-id", "com.example.book"], in: dir.path).status == 0)
    try writeFile(dir.appending("content/MyBook/Contents/chapter1.txt"), "Once upon a time.\n")
  }

  /// Runs one recipe with the built pkgtool first on PATH; returns each command's result.
  func run(_ commands: [String], in dir: TemporaryDirectory) throws -> [ProcessResult] {
    let bin = (pkgtoolBinary as NSString).deletingLastPathComponent
    let path = bin + ":" + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin")
    return try commands.map {
      try runProcess("/bin/bash", ["-euo", "pipefail", "-c", $0], in: dir.path, environment: ["PATH": path])
    }
  }

  /// Runs a recipe and expects every command to exit 0.
  func runExpectingSuccess(_ commands: [String], in dir: TemporaryDirectory) throws -> [ProcessResult] {
    let results = try run(commands, in: dir)
    for (command, result) in zip(commands, results) {
      #expect(result.status == 0, "\(command): \(result.stdout)\(result.stderr)")
    }
    return results
  }

  @Test func docsHoldAGitHubAndAGitLabRecipe() throws {
    let recipes = try Self.recipes()
    #expect(recipes.count == 2)
    #expect(recipes.allSatisfy { $0.count == 3 }, "\(recipes)")
  }

  @Test func gitHubActionsRecipeRunsAndItsSARIFValidates() throws {
    let dir = try TemporaryDirectory()
    try makeCheckout(dir)
    let commands = try #require(try Self.recipes().first)
    let results = try runExpectingSuccess(commands, in: dir)
    // The project from init has no finding: the check's one line is the notice, which names the
    // README build leaves out.
    #expect(!results[0].stdout.contains("file=content/MyBook/README.md"))
    #expect(results[0].stdout.contains("title=pkgtool validate::content/MyBook: valid: 0 errors, 0 warnings ("))
    #expect(results[0].stdout.contains("build leaves out README.md)"))
    let check = try runProcess(
      "/usr/bin/env", ["python3", repositoryRoot + "/scripts/check-sarif.py", dir.appending("pkgtool.sarif")])
    #expect(check.status == 0, "\(check.stdout)\(check.stderr)")

    // A warning the package carries (a link to a file that is not there) is an alert on the
    // project's file, not on dist/MyBook.pkg, and the entry is still named inside the package.
    try FileManager.default.createSymbolicLink(
      atPath: dir.appending("content/MyBook/Contents/old-link"), withDestinationPath: "missing.txt")
    _ = try runExpectingSuccess(commands, in: dir)
    let log = try #require(
      try JSONSerialization.jsonObject(with: Data(try readFile(dir.appending("pkgtool.sarif")))) as? [String: Any])
    let alerts = try #require((log["runs"] as? [[String: Any]])?.first?["results"] as? [[String: Any]])
    let link = try #require(alerts.first { $0["ruleId"] as? String == "no-external-symlink" }, "\(alerts)")
    let location = try #require((link["locations"] as? [[String: Any]])?.first)
    let artifact = (location["physicalLocation"] as? [String: Any])?["artifactLocation"] as? [String: Any]
    #expect(artifact?["uri"] as? String == "content/MyBook/Contents/old-link", "\(location)")
    #expect(artifact?["uriBaseId"] as? String == "%SRCROOT%")
    let logical = (location["logicalLocations"] as? [[String: Any]])?.first?["fullyQualifiedName"] as? String
    #expect(logical == "Contents/old-link")
    let package = (link["properties"] as? [String: Any])?["package"] as? String
    #expect(package == "dist/MyBook.pkg")
    #expect(
      try runProcess(
        "/usr/bin/env", ["python3", repositoryRoot + "/scripts/check-sarif.py", dir.appending("pkgtool.sarif")]
      ).status == 0)
    try FileManager.default.removeItem(atPath: dir.appending("content/MyBook/Contents/old-link"))

    // A broken project fails the gate with an annotation on the real file, and the package
    // check still leaves its SARIF for the always() upload.
    try writeFile(dir.appending("content/MyBook/Contents/run.sh"), "#!/bin/sh\necho hi\n")
    let broken = try run([commands[0]], in: dir)[0]
    #expect(broken.status == 1)
    #expect(broken.stdout.contains("::error file=content/MyBook/Contents/run.sh,title=pkgtool no-executable::"))
  }

  @Test func gitLabRecipeRunsAndItsJUnitIsCounted() throws {
    let dir = try TemporaryDirectory()
    try makeCheckout(dir)
    let commands = try #require(try Self.recipes().last)
    _ = try runExpectingSuccess(commands, in: dir)
    let xml = String(decoding: try readFile(dir.appending("pkgtool-junit.xml")), as: UTF8.self)
    #expect(
      xml.contains(
        #"<testsuites name="pkgtool validate" tests="\#(RuleCatalog.all.count)" failures="0" errors="0" skipped="5">"#),
      "\(xml)")
    // It is well formed: Foundation's XML parser reads it to the end.
    let parser = XMLParser(data: Data(xml.utf8))
    #expect(parser.parse(), "\(parser.parserError.map { "\($0)" } ?? "")")
  }
}
