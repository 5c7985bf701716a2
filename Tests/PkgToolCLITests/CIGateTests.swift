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

  /// Ctrl-C or SIGTERM to the real binary mid-run (reading a package from a pipe that stays
  /// open): the previous run's report is replaced by one that says the run did not finish
  /// (SARIF `executionSuccessful` false, a JUnit `<error>`), and no temporary is left.
  @Test(arguments: [("sarif", SIGINT), ("junit", SIGTERM)])
  func anInterruptedRunReplacesThePreviousReport(reporter: String, signal: Int32) throws {
    let dir = try TemporaryDirectory()
    let bad = dir.appending("bad.pkg")
    try writePackage(bad, [.file("Contents/tool.sh", "#!/bin/sh\necho hi\n")])
    let report = dir.appending("report.out")
    let previous = try pkgtool(["validate", bad, "--reporter", reporter, "-o", report])
    #expect(previous.status == 1)
    #expect(String(decoding: try readFile(report), as: UTF8.self).contains("tool.sh"))

    // Through exec from Python, which resets the signal mask and dispositions the test runner's
    // children inherit: the pid is pkgtool's.
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = [
      "python3", "-c",
      "import os, signal, sys; signal.pthread_sigmask(signal.SIG_SETMASK, []); "
        + "[signal.signal(n, signal.SIG_DFL) for n in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)]; "
        + "os.execv(sys.argv[1], sys.argv[1:])",
      pkgtoolBinary, "validate", "-", "--reporter", reporter, "-o", "report.out",
    ]
    process.currentDirectoryURL = URL(fileURLWithPath: dir.path)
    let input = Pipe()
    let errors = Pipe()
    process.standardInput = input
    process.standardOutput = FileHandle.nullDevice
    process.standardError = errors
    try process.run()
    // Mid-run: half a package sent, the pipe held open, the input being spooled (an unnamed
    // file among the process's descriptors, made after the report's stand-in is ready).
    try input.fileHandleForWriting.write(contentsOf: Array(try readFile(bad).prefix(100)))
    func temporaries() throws -> [String] {
      try FileManager.default.contentsOfDirectory(atPath: dir.path).filter { $0.contains(".pkgtool-") }
    }
    func spooling() -> Bool {
      let fds = "/proc/\(process.processIdentifier)/fd"
      let names = (try? FileManager.default.contentsOfDirectory(atPath: fds)) ?? []
      return names.contains {
        ((try? FileManager.default.destinationOfSymbolicLink(atPath: fds + "/" + $0)) ?? "").hasSuffix("(deleted)")
      }
    }
    #if os(Linux)
      let deadline = Date().addingTimeInterval(30)
      while Date() < deadline, !spooling() { usleep(20_000) }
      #expect(spooling())
    #else
      Thread.sleep(forTimeInterval: 2)
    #endif
    #expect(!(try temporaries()).isEmpty)
    kill(process.processIdentifier, signal)
    process.waitUntilExit()
    let stderr = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    try? input.fileHandleForWriting.close()
    #expect(process.terminationStatus == 128 + signal, "\(stderr)")
    #expect(stderr.contains("'report.out' now says the run did not finish"), "\(stderr)")
    #expect(try temporaries() == [])

    let text = String(decoding: try readFile(report), as: UTF8.self)
    #expect(!text.contains("tool.sh"))
    #expect(text.contains("validation was interrupted before it finished"), "\(text)")
    if reporter == "sarif" {
      let log = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
      let run = try #require((log["runs"] as? [[String: Any]])?.first)
      let invocation = try #require((run["invocations"] as? [[String: Any]])?.first)
      #expect(invocation["executionSuccessful"] as? Bool == false)
      #expect((run["results"] as? [Any])?.isEmpty == true)
    } else {
      #expect(text.contains("<error "), "\(text)")
    }

    // The next run that finishes writes its own report, and leaves no temporary either.
    let again = try pkgtool(["validate", bad, "--reporter", reporter, "-o", report])
    #expect(again.status == 1)
    #expect(String(decoding: try readFile(report), as: UTF8.self).contains("tool.sh"))
    #expect(try temporaries() == [])
  }

  /// `--project DIR` points a package's entry findings at DIR's files (GitHub annotations too),
  /// only when DIR is the package's project; another project gets a warning, a folder that is
  /// no project an error.
  @Test func projectMapsEntriesToTheirFiles() throws {
    let dir = try TemporaryDirectory()
    for (name, product) in [("MyBook", "com.example.book"), ("Other", "com.example.other")] {
      #expect(try pkgtool(["init", name, "--product-id", product], in: dir.path).status == 0)
      try FileManager.default.createSymbolicLink(
        atPath: dir.appending("\(name)/Contents/old-link"), withDestinationPath: "missing.txt")
    }
    #expect(try pkgtool(["build", "MyBook", "-o", "book.pkg"], in: dir.path).status == 0)
    let mapped = try pkgtool(["validate", "book.pkg", "--project", "MyBook", "--reporter", "github"], in: dir.path)
    #expect(mapped.status == 0, "\(mapped.stderr)")
    #expect(mapped.stdout.hasPrefix("::warning file=MyBook/Contents/old-link,title=pkgtool no-external-symlink::"))
    #expect(mapped.stderr.isEmpty)
    let other = try pkgtool(["validate", "book.pkg", "--project", "Other", "--reporter", "github"], in: dir.path)
    #expect(other.stdout.hasPrefix("::warning file=book.pkg,"))
    #expect(
      other.stderr
        == "pkgtool: warning: 'book.pkg' (com.example.book 1.0) was not built from 'Other' (com.example.other 1.0): "
        + "its findings point at the package\n")
    let notAProject = try pkgtool(["validate", "book.pkg", "--project", "MyBook/Contents"], in: dir.path)
    #expect(notAProject.status == 2)
    #expect(notAProject.stderr.contains("--project 'MyBook/Contents' is not a content project"))
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
