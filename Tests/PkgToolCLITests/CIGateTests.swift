import Foundation
import HostedContent
import TestSupport
import Testing

/// `validate` as a CI gate runs it: on every re-run, with a report file an upload step sends
/// whatever happened, on a `dist/` folder of packages, and with errors that name the option.
@Suite struct CIGateTests {
  func writePackage(_ path: String, _ extra: [RuleExample.Node] = []) throws {
    try Data(ExamplePackages.xarBytes(RuleExample.baseNodes + extra)).write(to: URL(fileURLWithPath: path))
  }

  /// The report of the second run replaces the first's, whatever each found; the verdict line
  /// goes to stderr (a passing run was silent before), stdout stays empty.
  @Test(arguments: ["sarif", "junit", "json", "text"])
  func aReRunReplacesTheReportAndSaysTheVerdict(reporter: String) throws {
    let dir = try TemporaryDirectory()
    let good = dir.appending("good.pkg")
    let bad = dir.appending("bad.pkg")
    try writePackage(good)
    try writePackage(bad, [.file("Contents/tool.sh", "#!/bin/sh\necho hi\n")])
    let report = dir.appending("report.out")
    let first = try pkgtool(["validate", good, "--reporter", reporter, "-o", report])
    #expect(first.status == 0, "\(first.stderr)")
    #expect(first.stdout.isEmpty)
    #expect(first.stderr.contains("valid (0 errors, 0 warnings)"), "\(first.stderr)")
    #expect(first.stderr.contains("report written to '\(report)'"))
    let firstReport = try readFile(report)
    #expect(!String(decoding: firstReport, as: UTF8.self).contains("tool.sh"))

    let second = try pkgtool(["validate", bad, "--reporter", reporter, "-o", report])
    #expect(second.status == 1, "\(second.stderr)")
    #expect(second.stderr.contains("invalid (1 error,"), "\(second.stderr)")
    #expect(String(decoding: try readFile(report), as: UTF8.self).contains("tool.sh"))
    // Nothing beside the report is left (it was written beside, then renamed).
    #expect(
      try FileManager.default.contentsOfDirectory(atPath: dir.path).sorted() == ["bad.pkg", "good.pkg", "report.out"])

    let quiet = try pkgtool(["validate", good, "--reporter", reporter, "-o", report, "--quiet"])
    #expect(quiet.status == 0 && quiet.stderr.isEmpty && quiet.stdout.isEmpty, "\(quiet.stderr)")
  }

  @Test func theReportNeverOverwritesAnInput() throws {
    let dir = try TemporaryDirectory()
    let old = dir.appending("old.pkg")
    let new = dir.appending("new.pkg")
    try writePackage(old)
    try writePackage(new)
    let before = try readFile(old)
    let result = try pkgtool(["validate", new, "--against", old, "-o", old])
    #expect(result.status == 2)
    #expect(result.stderr.contains("--against"), "\(result.stderr)")
    #expect(try readFile(old) == before)
  }

  /// GitHub code scanning places an alert only with `region.startLine` (GH1003).
  @Test func everySARIFLocationHasALine() throws {
    let dir = try TemporaryDirectory()
    let bad = dir.appending("bad.pkg")
    try writePackage(bad, [.file("Contents/tool.sh", "#!/bin/sh\n"), .file("Contents/.DS_Store", "x")])
    let result = try pkgtool(["validate", bad, "--reporter", "sarif"])
    #expect(result.status == 1)
    let log = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any]
    let runs = log?["runs"] as? [[String: Any]] ?? []
    let results = runs.first?["results"] as? [[String: Any]] ?? []
    #expect(results.count >= 2)
    for r in results {
      for location in r["locations"] as? [[String: Any]] ?? [] {
        let physical = location["physicalLocation"] as? [String: Any]
        let region = physical?["region"] as? [String: Any]
        #expect(region?["startLine"] as? Int == 1, "\(r)")
      }
    }
  }

  /// `validate dist/` checks every package in the folder, each under its own name.
  @Test func aFolderOfPackagesIsEachPackage() throws {
    let dir = try TemporaryDirectory()
    let dist = dir.appending("dist")
    try FileManager.default.createDirectory(atPath: dist, withIntermediateDirectories: true)
    try writePackage(dist + "/a-1.0.pkg")
    try writePackage(dist + "/b-1.0.pkg", [.file("Contents/tool.sh", "#!/bin/sh\n")])
    try writeFile(dist + "/notes.txt", "not a package")
    let result = try pkgtool(["validate", "dist", "--json"], in: dir.path)
    #expect(result.status == 1, "\(result.stderr)")
    #expect(!result.stdout.contains("at the package root"), "\(result.stdout)")
    let json = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8))
    let text = String(decoding: try JSONSerialization.data(withJSONObject: json), as: UTF8.self)
    #expect(text.contains("a-1.0.pkg") && text.contains("b-1.0.pkg"), "\(result.stdout)")
    #expect(!text.contains("notes.txt"))
    #expect(text.contains("no-executable"))

    let passing = try pkgtool(["validate", "dist/a-1.0.pkg", "dist"], in: dir.path)
    #expect(passing.status == 1)
  }

  /// A folder that is neither a project nor a folder of packages is named as such (exit 2).
  @Test func aFolderOfNothingSaysWhatWasExpected() throws {
    let dir = try TemporaryDirectory()
    try FileManager.default.createDirectory(atPath: dir.appending("stuff"), withIntermediateDirectories: true)
    try writeFile(dir.appending("stuff/readme.txt"), "hello")
    let result = try pkgtool(["validate", "stuff"], in: dir.path)
    #expect(result.status == 2)
    #expect(result.stderr.contains("'stuff' is neither a content project"), "\(result.stderr)")
    #expect(result.stderr.split(separator: "\n").count == 1)
  }

  @Test func errorsAboutThePreviousPackageNameAgainst() throws {
    let dir = try TemporaryDirectory()
    let new = dir.appending("new.pkg")
    try writePackage(new)
    let missing = try pkgtool(["validate", new, "--against", dir.appending("nope.pkg")])
    #expect(missing.status == 2)
    #expect(missing.stderr.hasPrefix("pkgtool: error: --against: "), "\(missing.stderr)")
    try writeFile(dir.appending("junk.pkg"), "not a package at all")
    let junk = try pkgtool(["validate", new, "--against", dir.appending("junk.pkg")])
    #expect(junk.status == 2)
    #expect(junk.stderr.contains("--against"), "\(junk.stderr)")
  }

  /// A report that cannot be written is an error (exit 2), never an exit 0 with nothing out.
  @Test(arguments: [["validate", "--reporter", "sarif"], ["info", "--files"], ["validate", "--json"]])
  func aFailedWriteToStandardOutputIsAnError(command: [String]) throws {
    let dir = try TemporaryDirectory()
    let pkg = dir.appending("x.pkg")
    try writePackage(pkg)
    let line = ([pkgtoolBinary, command[0], pkg] + command.dropFirst()).map { "'\($0)'" }.joined(separator: " ")
    let result = try runProcess("/bin/bash", ["-c", line + " > /dev/full"])
    #expect(result.status == 2, "\(result.stderr)")
    #expect(result.stderr.contains("cannot write 'standard output'"), "\(result.stderr)")
    #expect(result.stderr.split(separator: "\n").count == 1)
  }

  /// A reader that goes away (`| head`) ends the command quietly: exit 0 for cat, and the
  /// verdict's 1 for validate of an invalid package, so pipefail still sees it.
  @Test func aClosedPipeEndsQuietly() throws {
    let dir = try TemporaryDirectory()
    let pkg = dir.appending("x.pkg")
    let big = String(repeating: "lorem ipsum dolor sit amet\n", count: 200_000)
    try writePackage(pkg, [.file("Contents/big.txt", big)])
    let cat = try runProcess(
      "/bin/bash",
      ["-o", "pipefail", "-c", "'\(pkgtoolBinary)' cat '\(pkg)' Contents/big.txt | head -c 10 > /dev/null"])
    #expect(cat.status == 0, "\(cat.stderr)")
    #expect(cat.stderr.isEmpty, "\(cat.stderr)")

    let bad = dir.appending("bad.pkg")
    try writePackage(
      bad, (0..<3000).map { .file("Contents/t\($0).sh", "#!/bin/sh\n") } as [RuleExample.Node])
    let validate = try runProcess(
      "/bin/bash", ["-o", "pipefail", "-c", "'\(pkgtoolBinary)' validate '\(bad)' --json | head -c 10 > /dev/null"])
    #expect(validate.status == 1, "\(validate.stderr)")
    #expect(validate.stderr.isEmpty, "\(validate.stderr)")
  }
}
