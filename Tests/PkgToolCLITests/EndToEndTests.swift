import Foundation
import HostedContent
import TestSupport
import Testing
import XAR

/// The real `pkgtool` binary: stdout, stderr and exit codes.
@Suite struct EndToEndTests {
  @Test func helpTeachesAndMatchesTheGoldenFile() throws {
    let result = try pkgtool(["--help"])
    #expect(result.status == 0)
    #expect(result.stderr.isEmpty)
    if ProcessInfo.processInfo.environment["PKGTOOL_UPDATE_GOLDEN"] != nil {
      try writeFile(repositoryRoot + "/Tests/PkgToolCLITests/Golden/help.txt", result.stdout)
    }
    let golden = String(
      decoding: try readFile(repositoryRoot + "/Tests/PkgToolCLITests/Golden/help.txt"), as: UTF8.self)
    #expect(result.stdout == golden)
    for command in ["init", "build", "validate", "unpack", "install", "bump", "info", "diff", "rules"] {
      let sub = try pkgtool([command, "--help"])
      #expect(sub.status == 0, "\(command) --help")
      #expect(sub.stdout.contains("USAGE: pkgtool \(command)"))
    }
  }

  /// `pkgtool --help` names every exit code of README's table, the interrupted ones included.
  @Test func helpNamesEveryExitCode() throws {
    let help = try pkgtool(["--help"]).stdout
    let readme = String(decoding: try readFile(repositoryRoot + "/README.md"), as: UTF8.self)
    let table = try #require(readme.components(separatedBy: "### Exit codes").dropFirst().first)
    let codes = table.split(separator: "\n").prefix { !$0.hasPrefix("Errors are") }.compactMap { line in
      line.hasPrefix("| ")
        ? line.dropFirst(2).split(separator: "|").first.map { $0.trimmingCharacters(in: .whitespaces) } : nil
    }.filter { $0.first?.isNumber == true }
    #expect(codes == ["0", "1", "2", "129, 130, 143"])
    let section = try #require(help.components(separatedBy: "Exit codes").dropFirst().first)
    let lines = section.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
    for code in codes { #expect(lines.contains { $0 == code || $0.hasPrefix(code + " ") }, "\(code)") }
    #expect(section.contains("SIGHUP, SIGINT (Ctrl-C) or SIGTERM"))
  }

  /// `pkgtool rules`: the catalog as people read it, against a golden file.
  @Test func rulesListingMatchesTheGoldenFile() throws {
    let result = try pkgtool(["rules"])
    #expect(result.status == 0)
    #expect(result.stderr.isEmpty)
    let path = repositoryRoot + "/Tests/PkgToolCLITests/Golden/rules.txt"
    if ProcessInfo.processInfo.environment["PKGTOOL_UPDATE_GOLDEN"] != nil { try writeFile(path, result.stdout) }
    #expect(result.stdout == String(decoding: try readFile(path), as: UTF8.self))
    for rule in RuleCatalog.descriptions { #expect(result.stdout.contains(rule.id)) }
  }

  @Test func versionPrintsTheVersion() throws {
    let result = try pkgtool(["--version"])
    #expect(result.status == 0)
    #expect(result.stdout == PkgTool.version + "\n")
  }

  @Test func badArgumentsExit2WithOneErrorLine() throws {
    for arguments in [
      ["validate"], ["build", "x", "--format", "tar"], ["frobnicate"], ["validate", "x.pkg", "--reporter", "yaml"],
      ["bump", "x", "--major", "--minor"],
    ] {
      let result = try pkgtool(arguments)
      #expect(result.status == 2, "\(arguments)")
      let lines = result.stderr.split(separator: "\n")
      #expect(lines.first?.hasPrefix("pkgtool: error: ") == true, "\(arguments): \(result.stderr)")
      #expect(!result.stderr.contains("Fatal error"))
    }
  }

  @Test func missingFileExits2NamingIt() throws {
    let result = try pkgtool(["validate", "/no/such/book.pkg"])
    #expect(result.status == 2)
    #expect(result.stderr == "pkgtool: error: cannot open '/no/such/book.pkg': no such file or directory (ENOENT)\n")
    #expect(result.stdout.isEmpty)
  }

  @Test(arguments: ["book-chapter1", "book-chapter2", "level-pack"])
  func everySampleBuildsValidatesAndUnpacks(sample: String) throws {
    let dir = try TemporaryDirectory()
    let build = try pkgtool(["build", repositoryRoot + "/samples/" + sample], in: dir.path)
    #expect(build.status == 0, "\(build.stdout)\(build.stderr)")
    let packages = try FileManager.default.contentsOfDirectory(atPath: dir.path).filter { $0.hasSuffix(".pkg") }
    #expect(packages.count == 1)
    let package = try #require(packages.first)
    let validate = try pkgtool(["validate", package], in: dir.path)
    #expect(validate.status == 0)
    #expect(validate.stdout.contains(": valid: 0 errors, 0 warnings"))
    let unpack = try pkgtool(["unpack", package, "-o", "out"], in: dir.path)
    #expect(unpack.status == 0, "\(unpack.stderr)")
    #expect(
      try FileManager.default.contentsOfDirectory(atPath: dir.appending("out")).sorted() == [
        "ContentInfo.plist", "Contents",
      ])
    // Same sample, second build: identical bytes (reproducible through the CLI too).
    let again = try pkgtool(["build", repositoryRoot + "/samples/" + sample, "-o", "again.pkg"], in: dir.path)
    #expect(again.status == 0)
    #expect(try readFile(dir.appending(package)) == (try readFile(dir.appending("again.pkg"))))
  }

  /// A crafted package per rule exits 1 and names the rule.
  @Test(arguments: RuleCatalog.descriptions.map(\.id))
  func aPackageBreakingEachRuleExits1NamingIt(ruleID: String) throws {
    let rule = try #require(RuleCatalog.rule(withID: ruleID))
    let example = rule.description.triggering[0]
    let dir = try TemporaryDirectory()
    var path = dir.appending("folder")
    if example.appliesToPackages {
      path = try ExamplePackages.package(for: example, in: dir.path)
    } else {
      #expect(try ExamplePackages.writeFolder(example.nodes, at: path))
    }
    var arguments = ["validate", path]
    if let previous = example.previous {
      arguments += [
        "--against",
        try ExamplePackages.previousVersion(product: previous.product, version: previous.version, in: dir.path),
      ]
    }
    if let product = example.options.productIdentifier { arguments += ["--product-id", product] }
    if example.options.maxSize != ValidationOptions.defaultMaxSize {
      arguments += ["--max-size", String(example.options.maxSize)]
    }
    if example.options.assetPackLimit != ValidationOptions.appleHostedAssetPackTotal {
      arguments += ["--asset-pack-room", String(example.options.assetPackLimit)]
    }
    if rule.description.severity == .warning { arguments.append("--strict") }
    let result = try pkgtool(arguments)
    #expect(result.status == 1, "\(ruleID): \(result.stdout)\(result.stderr)")
    #expect(result.stdout.contains("[\(ruleID)]"), "\(ruleID): \(result.stdout)")
  }

  @Test func reportersProduceParsableOutput() throws {
    let dir = try TemporaryDirectory()
    let example = NoExecutableRule.description.triggering[0]
    let path = try ExamplePackages.package(for: example, in: dir.path)
    let json = try pkgtool(["validate", path, "--reporter", "json"])
    #expect(json.status == 1)
    let object = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any]
    #expect((object?["findings"] as? [[String: Any]])?.first?["rule"] as? String == "no-executable")
    let sarifPath = dir.appending("out.sarif")
    let sarif = try pkgtool(["validate", path, "--reporter", "sarif", "--output", sarifPath])
    #expect(sarif.status == 1)
    #expect(sarif.stdout.isEmpty)
    let log = try JSONSerialization.jsonObject(with: Data(try readFile(sarifPath))) as? [String: Any]
    #expect(log?["version"] as? String == "2.1.0")
    let github = try pkgtool(["validate", path, "--reporter", "github"])
    #expect(github.stdout.hasPrefix("::error file="))
  }

  @Test func initBuildBumpInfoDiffInstall() throws {
    let dir = try TemporaryDirectory()
    let initResult = try pkgtool(["init", "Book", "--product-id", "com.example.book"], in: dir.path)
    #expect(initResult.status == 0, "\(initResult.stderr)")
    let readme = String(decoding: try readFile(repositoryRoot + "/templates/README.md"), as: UTF8.self)
      .replacingOccurrences(of: "{{IAPProductIdentifier}}", with: "com.example.book").replacingOccurrences(
        of: "{{ContentVersion}}", with: "1.0"
      )
      .replacingOccurrences(of: "{{ProjectFolder}}", with: "Book")
    #expect(String(decoding: try readFile(dir.appending("Book/README.md")), as: UTF8.self) == readme)
    #expect(!readme.contains("{{"))
    let template = String(decoding: try readFile(repositoryRoot + "/templates/ContentInfo.plist"), as: UTF8.self)
    #expect(
      String(decoding: try readFile(dir.appending("Book/ContentInfo.plist")), as: UTF8.self)
        == template.replacingOccurrences(of: "{{ContentVersion}}", with: "1.0").replacingOccurrences(
          of: "{{IAPProductIdentifier}}", with: "com.example.book"))
    try writeFile(dir.appending("Book/Contents/chapter1.txt"), "Once upon a time.\n")
    #expect(try pkgtool(["build", "Book"], in: dir.path).status == 0)
    let bump = try pkgtool(["bump", "Book"], in: dir.path)
    #expect(bump.stdout == "com.example.book: 1.0 → 1.1\n")
    try writeFile(dir.appending("Book/Contents/chapter2.txt"), "The end.\n")
    #expect(try pkgtool(["build", "Book"], in: dir.path).status == 0)
    let against = try pkgtool(
      ["validate", "com.example.book-1.1.pkg", "--against", "com.example.book-1.0.pkg"], in: dir.path)
    #expect(against.status == 0, "\(against.stdout)")
    let backwards = try pkgtool(
      ["validate", "com.example.book-1.0.pkg", "--against", "com.example.book-1.1.pkg"], in: dir.path)
    #expect(backwards.status == 1)
    #expect(backwards.stdout.contains("[content-version-increase]"))
    let info = try pkgtool(["info", "com.example.book-1.1.pkg", "--json"], in: dir.path)
    let object = try JSONSerialization.jsonObject(with: Data(info.stdout.utf8)) as? [String: Any]
    #expect(object?["contentVersion"] as? String == "1.1")
    let diff = try pkgtool(["diff", "com.example.book-1.0.pkg", "com.example.book-1.1.pkg"], in: dir.path)
    #expect(diff.status == 0)
    #expect(diff.stdout.contains("+ Contents/chapter2.txt"))
    try FileManager.default.createDirectory(atPath: dir.appending("Docs"), withIntermediateDirectories: true)
    #expect(try pkgtool(["install", "com.example.book-1.1.pkg", "--into", "Docs"], in: dir.path).status == 0)
    let down = try pkgtool(["install", "com.example.book-1.0.pkg", "--into", "Docs"], in: dir.path)
    #expect(down.status == 1)
    #expect(down.stderr.contains("lower than the installed 1.1"))
  }

  @Test func userErrorsExit2WithOneLine() throws {
    let dir = try TemporaryDirectory()
    try writeFile(dir.appending("exists.pkg"), "x")
    try FileManager.default.createDirectory(atPath: dir.appending("folder.pkg"), withIntermediateDirectories: true)
    try writeFile(
      dir.appending("proj/ContentInfo.plist"),
      ContentInfo(productIdentifier: "com.x", contentVersion: ContentVersion("1.0")!).encoded())
    try FileManager.default.createDirectory(atPath: dir.appending("proj/Contents"), withIntermediateDirectories: true)
    let cases: [[String]] = [
      ["build", "proj", "-o", "exists.pkg"],  // destination exists
      ["build", "proj", "-o", "missing/dir/x.pkg"],  // output in a missing folder
      ["build", "no-such-dir"],  // missing input
      ["unpack", "folder.pkg", "-o", "out"],  // folder instead of file
      ["unpack", "exists.pkg", "-o", "proj"],  // destination exists
      ["bump", "no-such-dir"],
    ]
    for arguments in cases {
      let result = try pkgtool(arguments, in: dir.path)
      #expect(result.status == 2, "\(arguments): \(result.stdout) \(result.stderr)")
      #expect(result.stderr.hasPrefix("pkgtool: error: "), "\(arguments): \(result.stderr)")
      #expect(result.stderr.split(separator: "\n").count == 1, "\(arguments): \(result.stderr)")
    }
    #expect(try readFile(dir.appending("exists.pkg")) == Array("x".utf8))
  }
}

/// Failures a user can cause: one line naming the file and the reason, exit 2, nothing damaged.
@Suite struct UserErrorTests {
  @Test(.enabled(if: TestEnvironment.canRunAsAnotherUser, "needs root and runuser"))
  func unreadableFileAsAnotherUser() throws {
    let dir = try TemporaryDirectory()
    chmod(dir.path, 0o755)
    try writeFile(dir.appending("secret.pkg"), "x", mode: 0o600)
    // A copy of the binary that another user can run, wherever the build folder is.
    let binary = dir.appending("pkgtool")
    try FileManager.default.copyItem(atPath: pkgtoolBinary, toPath: binary)
    chmod(binary, 0o755)
    let result = try runProcess(
      "/usr/sbin/runuser", ["-u", "nobody", "--", binary, "validate", dir.appending("secret.pkg")])
    #expect(result.status == 2)
    #expect(
      result.stderr == "pkgtool: error: cannot open '\(dir.appending("secret.pkg"))': permission denied (EACCES)\n")
  }

  @Test(.enabled(if: TestEnvironment.canMountTmpfs, "needs root and a tmpfs mount"))
  func noSpaceLeftOnDevice() throws {
    let dir = try TemporaryDirectory()
    let mountPoint = dir.appending("tiny")
    try FileManager.default.createDirectory(atPath: mountPoint, withIntermediateDirectories: true)
    try #require(try runProcess("/bin/mount", ["-t", "tmpfs", "-o", "size=64k", "tmpfs", mountPoint]).status == 0)
    defer { _ = try? runProcess("/bin/umount", [mountPoint]) }
    let project = repositoryRoot + "/samples/level-pack"
    let build = try pkgtool(["build", project, "-o", mountPoint + "/x.pkg"])
    #expect(build.status == 2, "\(build.stdout)\(build.stderr)")
    #expect(build.stderr.hasPrefix("pkgtool: error: cannot write"), "\(build.stderr)")
    #expect(build.stderr.contains("no space left on device (ENOSPC)"), "\(build.stderr)")
    #expect(build.stderr.split(separator: "\n").count == 1)
    #expect(try FileManager.default.contentsOfDirectory(atPath: mountPoint).isEmpty, "nothing left behind")
    // unpack into the full disk: nothing appears, one line.
    let package = dir.appending("lp.pkg")
    #expect(try pkgtool(["build", project, "-o", package]).status == 0)
    let unpack = try pkgtool(["unpack", package, "-o", mountPoint + "/out"])
    #expect(unpack.status == 2, "\(unpack.stdout)\(unpack.stderr)")
    #expect(unpack.stderr.contains("(ENOSPC)"), "\(unpack.stderr)")
    #expect(try FileManager.default.contentsOfDirectory(atPath: mountPoint).isEmpty)
  }

  @Test func limitsHaveFlagsAndClearMessages() throws {
    let dir = try TemporaryDirectory()
    let package = dir.appending("lp.pkg")
    #expect(try pkgtool(["build", repositoryRoot + "/samples/level-pack", "-o", package]).status == 0)
    let tight = try pkgtool(["validate", package, "--max-entries", "5"])
    #expect(tight.status == 1)
    #expect(tight.stdout.contains("more than 5 entries [archive-integrity]"))
    #expect(tight.stdout.contains("--max-entries"))
    let toc = try pkgtool(["validate", package, "--max-toc-size", "100"])
    #expect(toc.status == 1)
    #expect(toc.stdout.contains("TOC too large"))
    let size = try pkgtool(["validate", package, "--max-size", "10kB"])
    #expect(size.status == 1)
    #expect(size.stdout.contains("[size-limit]"))
    #expect(try pkgtool(["validate", package, "--max-entries", "50", "--max-toc-size", "1MiB"]).status == 0)
  }
}
