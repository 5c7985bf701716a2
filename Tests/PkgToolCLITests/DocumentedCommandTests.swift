import Foundation
import HostedContent
import TestSupport
import Testing

/// Every ```sh block in README.md and docs/*.md, run as written, line by line, with the built
/// pkgtool first on PATH and HOME in a fresh folder that holds what the reader of that block
/// has at that point (a fresh `init` project and what the text before the block made). The
/// YAML recipes of docs/ci.md are run by ``CIRecipeTests``.
///
/// A block no scenario below knows fails ``everyBlockHasAScenario()``: a new command in the
/// docs is run by the suite or the suite fails. `https://cdn.example.com` is served over
/// loopback HTTP from the folder the block says was uploaded. A line that needs a Mac
/// (`xcrun`) is not run; the text before its block must say "on a Mac".
@Suite struct DocumentedCommandTests {
  struct Block: CustomStringConvertible {
    var file: String
    var lines: [String]
    /// The prose between the previous block and this one.
    var before: String
    var description: String { "\(file): \(lines.first ?? "")" }
  }

  /// The lines of the ```sh block that follows `heading`, continuation lines joined, comments
  /// and blank lines dropped.
  static func readmeBlock(after heading: String) throws -> [String] {
    let text = String(decoding: try readFile(repositoryRoot + "/README.md"), as: UTF8.self)
    guard let start = text.range(of: heading) else { return [] }
    let rest = text[start.upperBound...]
    guard let open = rest.range(of: "```sh\n"), let close = rest[open.upperBound...].range(of: "```") else { return [] }
    var lines: [String] = []
    var pending = ""
    for raw in rest[open.upperBound..<close.lowerBound].split(separator: "\n") {
      var line = String(raw)
      if line.hasPrefix("#") { continue }
      if line.hasSuffix("\\") {
        line.removeLast()
        pending += line
        continue
      }
      lines.append(pending + line)
      pending = ""
    }
    return lines.filter { !$0.trimmingCharacters(in: .whitespaces).isEmpty }
  }

  /// The lines of every ```sh block in `file` (relative to the repository root), continuation
  /// lines joined, comment lines and blank lines dropped.
  static func shellBlocks(in file: String) throws -> [Block] {
    let text = String(decoding: try readFile(repositoryRoot + "/" + file), as: UTF8.self)
    var blocks: [Block] = []
    var inBlock = false
    var isShell = false
    var lines: [String] = []
    var pending = ""
    var prose = ""
    for raw in text.split(separator: "\n", omittingEmptySubsequences: false) {
      let line = String(raw)
      if line.hasPrefix("```") {
        if inBlock {
          if isShell { blocks.append(Block(file: file, lines: lines, before: prose)) }
          prose = ""
        } else {
          isShell = line == "```sh"
          lines = []
        }
        inBlock.toggle()
        continue
      }
      guard inBlock else {
        prose += line + "\n"
        continue
      }
      guard isShell else { continue }
      let trimmed = line.trimmingCharacters(in: .whitespaces)
      if trimmed.hasPrefix("#") || trimmed.isEmpty { continue }
      if line.hasSuffix("\\") {
        pending += line.dropLast()
        continue
      }
      lines.append(pending + line)
      pending = ""
    }
    return blocks
  }

  static func allBlocks() throws -> [Block] {
    let docs = try FileManager.default.contentsOfDirectory(atPath: repositoryRoot + "/docs")
      .filter { $0.hasSuffix(".md") }.sorted().map { "docs/" + $0 }
    return try (["README.md"] + docs).flatMap { try shellBlocks(in: $0) }
  }

  /// What the reader of a block has before its first line.
  enum Scenario {
    /// The repository's own scripts (`./scripts/…`), run by CI (`.ci/run`) and before a
    /// release, not from inside the test suite they start: here each must exist and be
    /// executable.
    case repositoryScripts
    /// Lines this suite cannot run (a release build, Docker): each line's first word is a
    /// repository script or its `tar` line is the one `INSTALL` gives (which
    /// `scripts/release-test.sh` runs in a Debian root, on demand), or the text before the
    /// block labels it untested.
    case outsideTheSuite
    /// The folder the README's Use block starts from (its own test runs it).
    case readmeUse
    /// The README's Use block has run: packages 1.0 and 1.1 in the folder.
    case afterReadmeUse
    /// A checkout holding the project `content/MyBook`, built into `dist/MyBook.pkg` as the
    /// CI recipes before the block do.
    case ciCheckout
    /// A fresh `init` project `MyBook` at 1.1, built into `dist/` as catalog.md's text says.
    case catalogPipeline
    /// Blocks that need the server program (`pkgtool serve`, `pkgtool storekit-test`), which
    /// the core's build does not have, run as written by the server test target:
    /// docs/serve.md's "Try it on localhost" (`TryItOnLocalhostTests`) and the whole of
    /// docs/self-hosting.md (`SelfHostingDocumentTests`), with the gate in the background.
    case serverSuite
  }

  /// Each block, by its file and first line.
  static let scenarios: [String: Scenario] = [
    "README.md: ./scripts/demo.sh": .repositoryScripts,
    "README.md: pkgtool init MyBook": .readmeUse,
    "README.md: pkgtool keygen -o signing.key": .afterReadmeUse,
    "README.md: pkgtool export background-assets": .afterReadmeUse,
    "docs/catalog.md: pkgtool keygen -o ~/.keys/content": .catalogPipeline,
    "docs/ci.md: pkgtool validate dist/ --reporter sarif": .ciCheckout,
    "docs/ci.md: scripts/release.sh": .outsideTheSuite,
    "docs/ci.md: docker build": .outsideTheSuite,
    "docs/migration.md: pkgtool export background-assets": .afterReadmeUse,
    "docs/self-hosting.md: ": .serverSuite,
    "docs/serve.md: mkdir -p dist && pkgtool build samples/": .serverSuite,
    "docs/serve.md: pkgtool serve --catalog catalog.json": .serverSuite,
    "docs/serve.md: pkgtool storekit-test transaction": .serverSuite,
    "docs/serve.md: pkgtool storekit-test notification": .serverSuite,
    "docs/migration.md: pkgtool migrate": .afterReadmeUse,
  ]

  static func scenario(for block: Block) -> Scenario? {
    scenarios.first { key, _ in
      let (file, start) = key.split(separator: ":", maxSplits: 1).map { String($0) }.pair
      return block.file == file && (block.lines.first ?? "").hasPrefix(start.dropFirst())
    }?.value
  }

  @Test func everyBlockHasAScenario() throws {
    let blocks = try Self.allBlocks()
    #expect(blocks.count >= 7, "\(blocks)")
    for block in blocks {
      #expect(Self.scenario(for: block) != nil, "no scenario for the block \(block): add one to DocumentedCommandTests")
    }
  }

  static func environment(home: String) -> [String: String] {
    let bin = (pkgtoolBinary as NSString).deletingLastPathComponent
    return ["PATH": bin + ":" + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"), "HOME": home]
  }

  static func shell(_ line: String, in dir: String) throws -> ProcessResult {
    try runProcess("/bin/bash", ["-euo", "pipefail", "-c", line], in: dir, environment: environment(home: dir))
  }

  /// Makes `dir` hold what `scenario` says; returns the folder served as `https://cdn.example.com`.
  static func prepare(_ scenario: Scenario, in dir: TemporaryDirectory) throws -> String {
    try writeFile(dir.appending("chapter1.txt"), "Once upon a time.\n")
    try writeFile(
      dir.appending("cover.png"), [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + Array(repeating: 7, count: 64))
    try writeFile(dir.appending("assets/levels/1.json"), "{\"level\": 1}\n")
    try Data(ExamplePackages.xarBytes(RuleExample.baseNodes)).write(
      to: URL(fileURLWithPath: dir.appending("download.pkg")))
    var setup: [String] = []
    switch scenario {
    case .repositoryScripts, .outsideTheSuite, .serverSuite:
      return dir.path
    case .readmeUse:
      return dir.path
    case .afterReadmeUse:
      setup = try Self.readmeBlock(after: "## Use\n")
    case .ciCheckout:
      setup = [
        "mkdir -p content && pkgtool init content/MyBook --product-id com.example.book",
        "cp chapter1.txt content/MyBook/Contents/",
        "mkdir -p dist && pkgtool build content/MyBook -o dist/MyBook.pkg",
      ]
    case .catalogPipeline:
      setup = [
        "pkgtool init MyBook --product-id com.example.book", "cp chapter1.txt MyBook/Contents/", "pkgtool bump MyBook",
        "mkdir -p dist && pkgtool build MyBook -o dist/com.example.book-1.1.pkg",
      ]
    }
    for line in setup {
      let result = try shell(line, in: dir.path)
      #expect(result.status == 0, "setup: \(line)\n\(result.stdout)\(result.stderr)")
    }
    return scenario == .catalogPipeline ? dir.appending("dist") : dir.path
  }

  @Test(arguments: try DocumentedCommandTests.allBlocks().map { $0.description })
  func theBlockRunsAsWritten(name: String) throws {
    let block = try #require(try Self.allBlocks().first { $0.description == name })
    let scenario = try #require(Self.scenario(for: block), "no scenario for \(name)")
    if scenario == .repositoryScripts {
      for line in block.lines {
        let script = String(line.prefix { $0 != " " })
        #expect(script.hasPrefix("./scripts/"), "\(block.file): '\(line)' is not a repository script")
        #expect(FileManager.default.isExecutableFile(atPath: repositoryRoot + "/" + script), "\(script)")
      }
      return
    }
    if scenario == .serverSuite && block.file == "docs/self-hosting.md" {
      let runner = repositoryRoot + "/Tests/ContentServerTests/SelfHostingDocumentTests.swift"
      let source = String(decoding: try readFile(runner), as: UTF8.self)
      #expect(source.contains("\"\(block.file)\""), "\(block.file) is run by no test of the server suite")
      return
    }
    if scenario == .outsideTheSuite {
      let release = String(decoding: try readFile(repositoryRoot + "/scripts/release.sh"), as: UTF8.self)
      for line in block.lines {
        let command = line.split(separator: "#")[0].trimmingCharacters(in: .whitespaces)
        let first = String(command.prefix { $0 != " " })
        let held =
          block.before.contains("untested")
          || (first.hasPrefix("scripts/") && FileManager.default.isExecutableFile(atPath: repositoryRoot + "/" + first))
          || (command.hasPrefix("sudo tar -xzf ")
            && release.contains("sudo tar -xzf $name.tar.gz" + (command.components(separatedBy: ".tar.gz").last ?? "")))
        #expect(
          held,
          "\(block.file): '\(line)' is run neither by the suite nor by scripts/release-test.sh, nor labelled untested")
      }
      return
    }
    if scenario == .serverSuite {
      let heading = "## Try it on localhost"
      let text = String(decoding: try readFile(repositoryRoot + "/" + block.file), as: UTF8.self)
      let start = try #require(text.range(of: "\n" + heading + "\n"), "\(block.file) has no '\(heading)'")
      var section = text[start.upperBound...]
      if let next = section.range(of: "\n## ") { section = section[..<next.lowerBound] }
      #expect(
        section.contains(String((block.lines.first ?? "").prefix(40))),
        "\(block): only the blocks of '\(heading)' are left to the server's suite")
      let suite = String(
        decoding: try readFile(repositoryRoot + "/Tests/ContentServerTests/TryItOnLocalhostTests.swift"), as: UTF8.self)
      #expect(suite.contains("static let section = \"\(heading)\""))
      return
    }
    let dir = try TemporaryDirectory()
    let uploaded = try Self.prepare(scenario, in: dir)
    // The CDN: `https://cdn.example.com/content/X` is `uploaded/X` over loopback HTTP.
    let root = try TemporaryDirectory()
    try FileManager.default.createSymbolicLink(atPath: root.appending("content"), withDestinationPath: uploaded)
    let server = try LoopbackHTTPServer(root: root.path)
    defer { server.stop() }
    var ran = 0
    for written in block.lines {
      if written.contains("xcrun ") {
        #expect(
          block.before.contains("on a Mac"), "\(block.file): '\(written)' needs a Mac, and the text does not say so")
        continue
      }
      let line = written.replacingOccurrences(of: "https://cdn.example.com", with: "http://127.0.0.1:\(server.port)")
      let result = try Self.shell(line, in: dir.path)
      #expect(result.status == 0, "\(block.file): \(written)\n\(result.stdout)\(result.stderr)")
      ran += 1
    }
    #expect(ran > 0 || block.lines.allSatisfy { $0.contains("xcrun ") })
  }
}

extension Array {
  fileprivate var pair: (Element, Element) { (self[0], self[1]) }
}
