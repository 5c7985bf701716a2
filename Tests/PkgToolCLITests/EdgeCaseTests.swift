import Dispatch
import Foundation
import HostedContent
import TestSupport
import Testing
import XAR

/// Resources and small edges: FIFOs, names equal up to normalization, outputs inside their own
/// input, reports over their package, escapes in listings and XML, bump's corner cases, caps.
@Suite struct EdgeCaseTests {
  /// Runs pkgtool, killing it after `seconds` (a hang fails the test instead of the suite).
  func pkgtoolWithin(_ seconds: Double, _ arguments: [String]) throws -> (ProcessResult, timedOut: Bool) {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: pkgtoolBinary)
    process.arguments = arguments
    let scratch = try TemporaryDirectory("pkgtool-proc")
    _ = FileManager.default.createFile(atPath: scratch.appending("out"), contents: nil)
    _ = FileManager.default.createFile(atPath: scratch.appending("err"), contents: nil)
    process.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: scratch.appending("out")))
    process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: scratch.appending("err")))
    process.standardInput = FileHandle.nullDevice
    try process.run()
    let deadline = Date().addingTimeInterval(seconds)
    var timedOut = false
    while process.isRunning {
      if Date() > deadline {
        timedOut = true
        process.terminate()
        kill(process.processIdentifier, SIGKILL)
        break
      }
      usleep(20_000)
    }
    process.waitUntilExit()
    let result = ProcessResult(
      status: process.terminationStatus,
      stdout: String(decoding: try readFile(scratch.appending("out")), as: UTF8.self),
      stderr: String(decoding: try readFile(scratch.appending("err")), as: UTF8.self))
    return (result, timedOut)
  }

  @Test func aFIFONamedContentInfoPlistNeverHangsBuildBumpOrValidate() throws {
    let dir = try TemporaryDirectory()
    let project = dir.appending("p")
    try FileManager.default.createDirectory(atPath: project + "/Contents", withIntermediateDirectories: true)
    #expect(mkfifo(project + "/ContentInfo.plist", 0o644) == 0)
    #expect(mkfifo(dir.appending("fifo.pkg"), 0o644) == 0)
    for arguments in [
      ["build", project, "-o", dir.appending("x.pkg")], ["bump", project], ["validate", dir.appending("fifo.pkg")],
      ["unpack", dir.appending("fifo.pkg"), "-o", dir.appending("out")],
    ] {
      let (result, timedOut) = try pkgtoolWithin(20, arguments)
      #expect(!timedOut, "\(arguments[0]) hung on a FIFO")
      #expect(result.status == 2, "\(arguments[0]): \(result.stderr)")
      #expect(result.stderr.contains("FIFO"), "\(arguments[0]): \(result.stderr)")
    }
  }

  @Test func buildWithNFCAndNFDSpellingsIsADuplicatePathFinding() throws {
    let dir = try TemporaryDirectory()
    try writeFile(dir.appending("src/caf\u{E9}.txt"), "composed")
    try writeFile(dir.appending("src/cafe\u{301}.txt"), "decomposed")
    let result = try pkgtool([
      "build", dir.appending("src"), "--product-id", "com.example.x", "--content-version", "1.0", "-o",
      dir.appending("x.pkg"),
    ])
    #expect(result.status == 1, "\(result.stderr)")
    #expect(result.stdout.contains("duplicate-path"), "\(result.stdout)")
    #expect(!FileManager.default.fileExists(atPath: dir.appending("x.pkg")))
  }

  @Test func buildNeverWritesIntoTheFolderItPacks() throws {
    let dir = try TemporaryDirectory()
    try writeFile(dir.appending("src/a.txt"), "a")
    let args = [
      "build", dir.appending("src"), "--product-id", "com.example.x", "--content-version", "1.0", "-o",
      dir.appending("src/out.pkg"),
    ]
    // The next build would pack it: refused, with or without --force, and nothing is left.
    for extra in [[], ["--force"]] {
      let result = try pkgtool(args + extra)
      #expect(result.status == 2, "\(result.stderr)")
      #expect(try FileManager.default.contentsOfDirectory(atPath: dir.appending("src")) == ["a.txt"])
    }
  }

  @Test func validateNeverWritesItsReportOverThePackageButReplacesAnOldReport() throws {
    let dir = try TemporaryDirectory()
    let pkg = dir.appending("x.pkg")
    try Data(ExamplePackages.xarBytes(RuleExample.baseNodes)).write(to: URL(fileURLWithPath: pkg))
    let before = try readFile(pkg)
    for extra in [[], ["--force"]] {
      let result = try pkgtool(["validate", pkg, "-o", pkg] + extra)
      #expect(result.status == 2, "\(result.stderr)")
      #expect(try readFile(pkg) == before)
    }
    // A report is an output: the previous run's file is replaced, with or without --force.
    for extra in [[], ["--force"]] {
      try writeFile(dir.appending("report.txt"), "old")
      #expect(try pkgtool(["validate", pkg, "-o", dir.appending("report.txt")] + extra).status == 0)
      #expect(try readFile(dir.appending("report.txt")) != Array("old".utf8))
    }
  }

  @Test func listingsEscapeControlCharactersAndJUnitStaysWellFormed() throws {
    let dir = try TemporaryDirectory()
    let pkg = dir.appending("x.pkg")
    try Data(
      ExamplePackages.xarBytes(
        RuleExample.baseNodes + [
          .file("Contents/a\u{1B}]0;pwned\u{7}b.txt", "x"),
          .file("Contents/odd\u{FFFF}.txt", "y"),
        ])
    ).write(to: URL(fileURLWithPath: pkg))
    let info = try pkgtool(["info", "--files", pkg])
    #expect(info.status == 0, "\(info.stderr)")
    #expect(!info.stdout.contains("\u{1B}"), "raw ESC in info")
    #expect(info.stdout.contains("\\u{1b}"))
    let other = dir.appending("y.pkg")
    try Data(ExamplePackages.xarBytes(RuleExample.baseNodes)).write(to: URL(fileURLWithPath: other))
    let diff = try pkgtool(["diff", other, pkg])
    #expect(!diff.stdout.contains("\u{1B}"), "raw ESC in diff")
    let junit = try pkgtool(["validate", pkg, "--reporter", "junit"])
    let check = try runProcess(
      "/usr/bin/env",
      [
        "python3", "-c",
        "import sys, xml.dom.minidom; xml.dom.minidom.parseString(sys.stdin.buffer.read()); print('ok')",
      ], stdin: junit.stdout)
    #expect(check.stdout == "ok\n", "\(check.stderr)")
  }

  @Test func bumpRefusesAPartPast18DigitsAndWritesARegularFileThroughASymlink() throws {
    let dir = try TemporaryDirectory()
    let plist = dir.appending("p/ContentInfo.plist")
    try writeFile(
      plist,
      ContentInfo(productIdentifier: "com.example.x", contentVersion: ContentVersion("1.999999999999999999")!).encoded()
    )
    let before = try readFile(plist)
    let result = try pkgtool(["bump", dir.appending("p")])
    #expect(result.status == 2, "\(result.stdout)\(result.stderr)")
    #expect(try readFile(plist) == before)

    try writeFile(
      dir.appending("real/ContentInfo.plist"),
      ContentInfo(productIdentifier: "com.example.x", contentVersion: ContentVersion("1.0")!).encoded())
    try FileManager.default.createDirectory(atPath: dir.appending("q"), withIntermediateDirectories: true)
    #expect(symlink(dir.appending("real/ContentInfo.plist"), dir.appending("q/ContentInfo.plist")) == 0)
    let old = umask(0)
    defer { umask(old) }
    #expect(try pkgtool(["bump", dir.appending("q")]).status == 0)
    var info = stat()
    #expect(lstat(dir.appending("q/ContentInfo.plist"), &info) == 0)
    #expect(info.st_mode & 0o777 == 0o644)
  }

  @Test func findingsPerRuleAreCappedWithACount() throws {
    let dir = try TemporaryDirectory()
    let nodes = (0..<250).map { RuleExample.Node.file("Contents/bad\u{1}\($0).txt", "x") }
    let pkg = dir.appending("x.pkg")
    try Data(ExamplePackages.xarBytes(RuleExample.baseNodes + nodes)).write(to: URL(fileURLWithPath: pkg))
    let result = try Validation.run(path: pkg, options: ValidationOptions())
    let pathSafety = result.findings.filter { $0.ruleID == "path-safety" }
    #expect(pathSafety.count == 101)
    #expect(pathSafety.last?.message.contains("and 150 more") == true, "\(pathSafety.last?.message ?? "")")
    #expect(pathSafety.last?.severity == .error)
  }

  @Test func totalPathBytesAreBounded() throws {
    let dir = try TemporaryDirectory()
    let nodes = (0..<50).map { RuleExample.Node.file("Contents/" + String(repeating: "n", count: 90) + "\($0)", "x") }
    let pkg = dir.appending("x.pkg")
    try Data(ExamplePackages.xarBytes(RuleExample.baseNodes + nodes)).write(to: URL(fileURLWithPath: pkg))
    var limits = ReaderLimits()
    limits.maxTotalPathBytes = 2000
    let result = try Validation.run(path: pkg, options: ValidationOptions(), limits: limits)
    #expect(
      result.findings.contains { $0.ruleID == "archive-integrity" && $0.message.contains("2000") }, "\(result.findings)"
    )
    let cli = try pkgtool(["validate", pkg, "--max-path-bytes", "2000"])
    #expect(cli.status == 1)
    #expect(try pkgtool(["validate", pkg]).status == 0)
  }

  @Test(arguments: [false, true])
  func aCpioHeaderDeclaringAHugeSymlinkTargetIsRefusedBeforeLibarchiveReadsIt(gzip: Bool) throws {
    let dir = try TemporaryDirectory()
    let bomb = HostilePackage.cpioBomb(gzip: gzip)
    try bomb.make(dir.appending("x.pkg"))
    let result = try Validation.run(path: dir.appending("x.pkg"), options: ValidationOptions())
    #expect(
      result.findings.contains {
        $0.ruleID == "archive-integrity" && $0.message.contains("symlink target of 3221225472 bytes")
      }, "\(result.findings)")
  }
}
