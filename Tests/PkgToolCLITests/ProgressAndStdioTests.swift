import Foundation
import HostedContent
import TestSupport
import Testing

/// Progress on stderr (a live line on a terminal, a plain line in a CI log) and `-` for standard
/// input and output, through the real binary.
@Suite struct ProgressAndStdioTests {
  /// A content project with one `megabytes` MB file of random bytes (not compressible: the work
  /// takes a while even in a release build), built into `x.pkg` beside it.
  func makeProject(_ dir: TemporaryDirectory, megabytes: Int = 16) throws -> (project: String, package: String) {
    let project = dir.appending("proj")
    #expect(try pkgtool(["init", project, "--product-id", "com.example.progress"]).status == 0)
    let made = try runProcess(
      "/bin/sh",
      ["-c", #"head -c "$0" /dev/urandom > "$1""#, "\(megabytes * 1_000_000)", project + "/Contents/big.bin"])
    #expect(made.status == 0)
    let package = dir.appending("x.pkg")
    #expect(try pkgtool(["build", project, "-o", package, "-q"]).status == 0)
    return (project, package)
  }

  /// A line at every chunk: the test does not depend on how long the work takes (16 MB is
  /// read in about 0.1 s, which a 50 ms interval counted from the start did not always outlast).
  let fast = ["PKGTOOL_PROGRESS_INTERVAL": "0"]

  /// The plain lines' shape: a label, bytes of a total, a percentage, a rate and an ETA.
  func plainLines(_ stderr: String, _ label: String) -> [Substring] {
    stderr.split(separator: "\n").filter { $0.hasPrefix("pkgtool: \(label)") }
  }

  func expectPlain(_ result: ProcessResult, _ label: String, sourceLocation: SourceLocation = #_sourceLocation) {
    let lines = plainLines(result.stderr, label)
    #expect(!lines.isEmpty, "no progress line for \(label): \(result.stderr)", sourceLocation: sourceLocation)
    // Every line has a rate; a total and a percentage once the total is known (a XAR read
    // while its table of contents is parsed learns it after the first chunks).
    for line in lines {
      #expect(line.contains("/s"), "\(line)", sourceLocation: sourceLocation)
    }
    #expect(
      lines.contains { $0.contains(" of ") && $0.contains("%)") }, "no line with a total: \(lines)",
      sourceLocation: sourceLocation)
    #expect(
      !result.stderr.contains("\r") && !result.stderr.contains("\u{1B}"), "control characters in a log",
      sourceLocation: sourceLocation)
  }

  /// Off a terminal: `--progress` and `PKGTOOL_PROGRESS=1` print plain lines with a total and a
  /// percentage for build, validate, unpack, install and publish.
  @Test func plainProgressOffATerminal() throws {
    let dir = try TemporaryDirectory()
    let (project, package) = try makeProject(dir)
    let built = try pkgtool(
      ["build", project, "-o", dir.appending("y.pkg"), "--progress"], environment: fast.merging(["CI": "1"]) { $1 })
    #expect(built.status == 0, "\(built.stderr)")
    expectPlain(built, "building '\(dir.appending("y.pkg"))': ")
    var environment = fast
    environment["PKGTOOL_PROGRESS"] = "1"
    let validated = try pkgtool(["validate", package], environment: environment)
    #expect(validated.status == 0)
    expectPlain(validated, "validating '\(package)': ")
    let unpacked = try pkgtool(["unpack", package, "-o", dir.appending("out"), "--progress"], environment: fast)
    #expect(unpacked.status == 0)
    expectPlain(unpacked, "unpacking '\(package)': ")
    let installed = try pkgtool(
      ["install", package, "--into", dir.appending("docs"), "--progress"], environment: fast)
    #expect(installed.status == 0, "\(installed.stderr)")
    expectPlain(installed, "installing '\(package)': ")
    #expect(try pkgtool(["keygen", "-o", dir.appending("key")]).status == 0)
    let published = try pkgtool(
      [
        "publish", package, "--key", dir.appending("key"), "--base-url", "https://cdn.example.com/c", "-o",
        dir.appending("catalog.json"), "--progress",
      ], environment: fast)
    #expect(published.status == 0, "\(published.stderr)")
    expectPlain(published, "publishing: validating '\(package)': ")
    // A zip's total comes from its central directory.
    let zip = dir.appending("x.zip")
    #expect(try pkgtool(["build", project, "-o", zip, "-q"]).status == 0)
    expectPlain(
      try pkgtool(["validate", zip, "--progress"], environment: ["PKGTOOL_PROGRESS_INTERVAL": "0"]),
      "validating '\(zip)': ")
    // And a project's from a walk of its files.
    // (Reading a folder is quick: a line at every chunk.)
    expectPlain(
      try pkgtool(["validate", project, "--progress"], environment: ["PKGTOOL_PROGRESS_INTERVAL": "0"]),
      "validating '\(project)': ")
  }

  /// `--quiet` and `--json` stay silent even with `--progress`; so does a machine report on
  /// standard output; short work prints no line at the default interval; nothing without
  /// `--progress` off a terminal.
  @Test func silentWhenAskedOrShort() throws {
    let dir = try TemporaryDirectory()
    let (project, package) = try makeProject(dir, megabytes: 4)
    let commands: [[String]] = [
      ["validate", package, "--progress", "-q"],
      ["validate", package, "--progress", "--json"],
      ["validate", package, "--progress", "--reporter", "sarif"],
      ["build", project, "-o", dir.appending("q.pkg"), "--progress", "-q"],
      ["build", project, "-o", dir.appending("j.pkg"), "--progress", "--json"],
      ["unpack", package, "-o", dir.appending("u"), "--progress", "--json"],
      ["install", package, "--into", dir.appending("d"), "--progress", "-q"],
      ["validate", package],
    ]
    for command in commands {
      let result = try pkgtool(command, environment: fast)
      #expect(result.status == 0, "\(command): \(result.stderr)")
      #expect(result.stderr.isEmpty, "\(command): \(result.stderr)")
    }
    // The default interval (5 s) outlasts this work: no line at all.
    let small = try makeProject(try TemporaryDirectory(), megabytes: 1).package
    let short = try pkgtool(["validate", small, "--progress"])
    #expect(!short.stderr.contains("validating"), "\(short.stderr)")
  }

  /// `export background-assets -o X.aar`: a plain line for each step (unpacking, checking,
  /// writing, reading back), each with a total and a percentage; nothing with `-q` or `--json`;
  /// on a terminal a live line that is erased before the report. The archive is whole either way.
  @Test func exportProgress() throws {
    let dir = try TemporaryDirectory()
    let (project, _) = try makeProject(dir, megabytes: 8)
    let archive = dir.appending("pack.aar")
    let exported = try pkgtool(
      ["export", "background-assets", project, "-o", archive, "--progress"],
      environment: fast.merging(["CI": "1"]) { $1 })
    #expect(exported.status == 0, "\(exported.stderr)")
    for step in ExportBackgroundAssets.Step.allCases {
      expectPlain(exported, "exporting '\(project)': \(step.rawValue): ")
    }
    // The lines of the writing step reach the whole content.
    let writing = plainLines(
      exported.stderr, "exporting '\(project)': \(ExportBackgroundAssets.Step.writing.rawValue): ")
    #expect(writing.last?.contains("(100%)") == true, "\(writing)")
    #expect(try pkgtool(["validate", archive, "-q"]).status == 0)
    for flag in ["-q", "--json"] {
      let silent = try pkgtool(
        ["export", "background-assets", project, "-o", archive, "--force", "--progress", flag], environment: fast)
      #expect(silent.status == 0, "\(flag): \(silent.stderr)")
      #expect(silent.stderr.isEmpty, "\(flag): \(silent.stderr)")
    }
    guard FileManager.default.isExecutableFile(atPath: "/usr/bin/script") else { return }
    let shown = try onTerminal(
      "'\(pkgtoolBinary)' export background-assets '\(project)' -o '\(archive)' --force", environment: fast)
    let erase = "\r\u{1B}[K"
    #expect(shown.contains(erase + "exporting '\(project)': writing the archive: "), "\(shown.debugDescription)")
    guard let lastErase = shown.range(of: erase, options: .backwards) else {
      Issue.record("no erase: \(shown.debugDescription)")
      return
    }
    #expect(!shown[lastErase.upperBound...].contains("exporting '"), "\(shown.debugDescription)")
    #expect(try pkgtool(["validate", archive, "-q"]).status == 0)
  }

  /// `script` runs the command on a pseudo-terminal; its output, as bytes.
  func onTerminal(_ command: String, environment: [String: String] = [:]) throws -> String {
    var arguments = ["-u", "CI"]
    for (key, value) in environment { arguments.append("\(key)=\(value)") }
    arguments += ["script", "-qec", command, "/dev/null"]
    return try runProcess("/usr/bin/env", arguments).stdout
  }

  /// On a terminal: a line with a percentage, redrawn in place and erased at the end.
  @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/script"), "util-linux script is missing"))
  func liveLineOnATerminal() throws {
    let dir = try TemporaryDirectory()
    let (_, package) = try makeProject(dir)
    let shown = try onTerminal("'\(pkgtoolBinary)' validate '\(package)'", environment: fast)
    let erase = "\r\u{1B}[K"
    #expect(shown.contains(erase + "validating '\(package)': "), "\(shown.debugDescription)")
    guard let lastPercent = shown.range(of: "%)", options: .backwards),
      let lastErase = shown.range(of: erase, options: .backwards)
    else {
      Issue.record("no percentage or no erase: \(shown.debugDescription)")
      return
    }
    // The last erase comes after the last drawn line, and the verdict after it.
    #expect(lastErase.lowerBound > lastPercent.upperBound)
    #expect(shown[lastErase.upperBound...].contains("valid"), "\(shown.debugDescription)")
    // --quiet: nothing on the terminal at all.
    let quiet = try onTerminal("'\(pkgtoolBinary)' validate -q '\(package)'", environment: fast)
    #expect(quiet.isEmpty, "\(quiet.debugDescription)")
  }

  /// A shell pipeline: `sh -c SCRIPT pkgtool ARGS…` with `$0` the binary.
  func shell(_ script: String, _ arguments: [String] = [], environment: [String: String]? = nil) throws
    -> ProcessResult
  {
    try runProcess("/bin/sh", ["-c", script, pkgtoolBinary] + arguments, environment: environment)
  }

  /// `-` reads standard input through a pipe, for validate, info, unpack and cat, and names it
  /// `(standard input)`, never a temporary path.
  @Test func standardInputThroughAPipe() throws {
    let dir = try TemporaryDirectory()
    let (project, package) = try makeProject(dir, megabytes: 2)
    let validated = try shell(#"cat "$1" | "$0" validate -"#, [package])
    #expect(validated.status == 0, "\(validated.stderr)")
    #expect(validated.stdout.hasPrefix("(standard input): valid"), "\(validated.stdout)")
    let json = try shell(#"cat "$1" | "$0" validate - --json"#, [package])
    #expect(json.stdout.contains("\"(standard input)\""), "\(json.stdout)")
    #expect(!json.stdout.contains("/tmp") && !json.stdout.contains(NSTemporaryDirectory()), "\(json.stdout)")
    let info = try shell(#"cat "$1" | "$0" info - --files"#, [package])
    #expect(info.status == 0, "\(info.stderr)")
    #expect(info.stdout.contains("package      (standard input)"), "\(info.stdout)")
    #expect(info.stdout.contains("com.example.progress"), "\(info.stdout)")
    #expect(info.stdout.contains("Contents/big.bin"), "\(info.stdout)")
    let out = dir.appending("unpacked")
    let unpacked = try shell(#"cat "$1" | "$0" unpack - -o "$2""#, [package, out])
    #expect(unpacked.status == 0, "\(unpacked.stderr)")
    #expect(try readFile(out + "/Contents/big.bin") == readFile(project + "/Contents/big.bin"))
    let cat = try shell(
      #"cat "$1" | "$0" cat - Contents/big.bin | cmp - "$2" && echo same"#,
      [
        package, project + "/Contents/big.bin",
      ])
    #expect(cat.stdout == "same\n", "\(cat.stderr)")
    // A zip's form is sniffed from its bytes too.
    let zip = dir.appending("x.zip")
    #expect(try pkgtool(["build", project, "-o", zip, "-q"]).status == 0)
    let zipped = try shell(#"cat "$1" | "$0" validate -"#, [zip])
    #expect(zipped.status == 0 && zipped.stdout.contains("zip"), "\(zipped.stdout)\(zipped.stderr)")
    // A file on standard input (`< x.pkg`) is read in place.
    let redirected = try shell(#""$0" info - --json < "$1""#, [package])
    #expect(redirected.stdout.contains("\"(standard input)\""), "\(redirected.stdout)\(redirected.stderr)")
    // Not a package: the message names standard input.
    let junk = try shell(#"echo hello | "$0" validate -"#)
    #expect(junk.status == 1)
    #expect(junk.stdout.contains("(standard input)"), "\(junk.stdout)")
    #expect(!junk.stdout.contains(NSTemporaryDirectory()), "\(junk.stdout)")
    // `unpack -` still needs -o.
    let noOutput = try shell(#"cat "$1" | "$0" unpack -"#, [package])
    #expect(noOutput.status == 2 && noOutput.stderr.contains("--output"), "\(noOutput.stderr)")
  }

  /// Flat packages from Apple's tools read from standard input as from the file.
  @Test(.enabled(if: FileManager.default.fileExists(atPath: interopFlat), "../shared/interop is missing"))
  func flatPackageThroughAPipe() throws {
    let fromFile = try pkgtool(["info", interopFlat, "--files"])
    let fromPipe = try shell(#"cat "$1" | "$0" info - --files"#, [interopFlat])
    #expect(fromPipe.status == fromFile.status)
    #expect(fromPipe.stdout.contains("flat-package"), "\(fromPipe.stdout)\(fromPipe.stderr)")
    #expect(
      fromPipe.stdout.replacingOccurrences(of: "(standard input)", with: interopFlat)
        == fromFile.stdout, "\(fromPipe.stdout)\n---\n\(fromFile.stdout)")
  }

  /// Standard input over `--max-size` is refused as a file over it is (size-limit, exit 1),
  /// while it is read, and leaves no temporary in `$TMPDIR`.
  @Test func standardInputOverTheLimit() throws {
    let dir = try TemporaryDirectory()
    let (_, package) = try makeProject(dir, megabytes: 3)
    let temporary = dir.appending("tmp")
    try FileManager.default.createDirectory(atPath: temporary, withIntermediateDirectories: false)
    let environment = ["TMPDIR": temporary]
    let validated = try shell(#"cat "$1" | "$0" validate - --max-size 1M"#, [package], environment: environment)
    #expect(validated.status == 1, "\(validated.stdout)\(validated.stderr)")
    #expect(validated.stdout.contains("more than 1,000,000 bytes"), "\(validated.stdout)")
    #expect(validated.stdout.contains("[size-limit]"), "\(validated.stdout)")
    let unpacked = try shell(
      #"cat "$1" | "$0" unpack - -o "$2" --max-size 1M"#, [package, dir.appending("o")], environment: environment)
    #expect(unpacked.status == 1, "\(unpacked.stderr)")
    #expect(unpacked.stderr.contains("(standard input)") && unpacked.stderr.contains("1,000,000"), "\(unpacked.stderr)")
    #expect(!FileManager.default.fileExists(atPath: dir.appending("o")))
    #expect(try FileManager.default.contentsOfDirectory(atPath: temporary).isEmpty)
    // Under the limit, the spooled copy is gone too once the command ends.
    #expect(try shell(#"cat "$1" | "$0" validate -"#, [package], environment: environment).status == 0)
    #expect(try FileManager.default.contentsOfDirectory(atPath: temporary).isEmpty)
  }

  /// `build -o -` writes the whole package to standard output (and the summary to stderr);
  /// `validate -o -` the report; `build -o -` to a terminal is refused.
  @Test func standardOutput() throws {
    let dir = try TemporaryDirectory()
    let (project, package) = try makeProject(dir, megabytes: 1)
    let temporary = dir.appending("tmp")
    try FileManager.default.createDirectory(atPath: temporary, withIntermediateDirectories: false)
    let piped = dir.appending("f.pkg")
    let built = try shell(#""$0" build "$1" -o - > "$2""#, [project, piped], environment: ["TMPDIR": temporary])
    #expect(built.status == 0, "\(built.stderr)")
    #expect(built.stderr.contains("built (standard output)"), "\(built.stderr)")
    #expect(!built.stderr.contains(temporary), "\(built.stderr)")
    #expect(try readFile(piped) == readFile(package), "the same package as -o x.pkg")
    #expect(try pkgtool(["validate", piped]).status == 0)
    #expect(try FileManager.default.contentsOfDirectory(atPath: temporary).isEmpty)
    let zip = try shell(#""$0" build "$1" -o - --format zip | "$0" validate -"#, [project])
    #expect(zip.status == 0 && zip.stdout.contains("zip"), "\(zip.stdout)\(zip.stderr)")
    let report = try pkgtool(["validate", package, "--reporter", "sarif", "-o", "-"])
    #expect(report.status == 0)
    #expect(
      report.stdout.contains("\"version\" : \"2.1.0\"") || report.stdout.contains("\"2.1.0\""), "\(report.stdout)")
    #expect(!FileManager.default.fileExists(atPath: "-"))
    let both = try pkgtool(["build", project, "-o", "-", "--json"])
    #expect(both.status == 2 && both.stderr.contains("--json would print there too"), "\(both.stderr)")
    if FileManager.default.isExecutableFile(atPath: "/usr/bin/script") {
      let shown = try onTerminal("'\(pkgtoolBinary)' build '\(project)' -o -; echo status=$?")
      #expect(shown.contains("standard output, which is a terminal"), "\(shown.debugDescription)")
      #expect(shown.contains("status=2"), "\(shown.debugDescription)")
    }
  }
}

/// A flat package from the interop folder (read in place).
let interopFlat = repositoryRoot + "/../shared/interop/pkg/composed-cg-test_odc.pkg"
