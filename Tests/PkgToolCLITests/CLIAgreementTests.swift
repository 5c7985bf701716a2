import Foundation
import HostedContent
import TestSupport
import Testing
import XAR

/// The commands agree with each other: a project and its package get the same verdict, a file
/// that is not a package reads the same everywhere, reports exist even when input cannot be read.
@Suite struct CLIAgreementTests {
  /// init → add files → validate (0) → build → build --format zip → validate, unpack and install
  /// both outputs, through the real binary.
  @Test func initToInstallThroughBothForms() throws {
    let dir = try TemporaryDirectory()
    let made = try pkgtool(["init", "Book", "--product-id", "com.example.book"], in: dir.path)
    #expect(made.status == 0, "\(made.stderr)")
    try writeFile(dir.appending("Book/Contents/chapter1.txt"), "Once upon a time.\n")
    try FileManager.default.createDirectory(
      atPath: dir.appending("Book/Contents/art"), withIntermediateDirectories: true)
    try Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + Array(repeating: 7, count: 500)).write(
      to: URL(fileURLWithPath: dir.appending("Book/Contents/art/cover.png")))
    try writeFile(dir.appending("Book/Contents/art/.DS_Store"), "junk")

    let project = try pkgtool(["validate", "Book"], in: dir.path)
    #expect(project.status == 0, "\(project.stdout)\(project.stderr)")
    // What build leaves out is listed, never silent: the README (in the summary) and the junk
    // (a note).
    #expect(!project.stdout.contains("README.md: note:"))
    #expect(project.stdout.contains("Book:Contents/art/.DS_Store: note:"))
    #expect(project.stdout.contains("Book: valid: 0 errors, 0 warnings, 1 note ("))
    #expect(project.stdout.contains(", build leaves out README.md)"))

    let pkg = try pkgtool(["build", "Book"], in: dir.path)
    #expect(pkg.status == 0, "\(pkg.stdout)\(pkg.stderr)")
    let zip = try pkgtool(["build", "Book", "--format", "zip", "-o", "book.zip"], in: dir.path)
    #expect(zip.status == 0, "\(zip.stdout)\(zip.stderr)")
    // The PNG is stored as it is, and the summary says so.
    #expect(
      zip.stdout.contains(
        "files    3 (1 deflated, 1 stored as already compressed, 1 stored as deflating made them no smaller)"),
      "\(zip.stdout)")
    #expect(
      pkg.stdout.contains(
        "files    3 (1 deflated, 1 stored as already compressed, 1 stored as deflating made them no smaller)"),
      "\(pkg.stdout)")

    for (output, folder) in [("com.example.book-1.0.pkg", "u1"), ("book.zip", "u2")] {
      let checked = try pkgtool(["validate", output], in: dir.path)
      #expect(checked.status == 0, "\(output): \(checked.stdout)")
      #expect(checked.stdout.contains("valid: 0 errors, 0 warnings ("), "\(checked.stdout)")
      let unpacked = try pkgtool(["unpack", output, "-o", folder], in: dir.path)
      #expect(unpacked.status == 0, "\(output): \(unpacked.stdout)\(unpacked.stderr)")
      #expect(try readFile(dir.appending("\(folder)/Contents/chapter1.txt")) == Array("Once upon a time.\n".utf8))
      #expect(!FileManager.default.fileExists(atPath: dir.appending("\(folder)/README.md")))
      try FileManager.default.createDirectory(
        atPath: dir.appending("docs-\(folder)"), withIntermediateDirectories: true)
      let installed = try pkgtool(["install", output, "--into", "docs-\(folder)"], in: dir.path)
      #expect(installed.status == 0, "\(output): \(installed.stdout)\(installed.stderr)")
      #expect(
        try readFile(dir.appending("docs-\(folder)/com.example.book/current/chapter1.txt"))
          == Array("Once upon a time.\n".utf8))
    }
  }

  /// A project fresh from `init` validates with no finding at all, in every reporter: its README
  /// is named in the summary (build leaves it out), never a note or an annotation.
  @Test func anInitMadeProjectValidatesWithNoFinding() throws {
    let dir = try TemporaryDirectory()
    #expect(try pkgtool(["init", "Book", "--product-id", "com.example.book"], in: dir.path).status == 0)
    let text = try pkgtool(["validate", "Book"], in: dir.path)
    #expect(text.status == 0, "\(text.stderr)")
    #expect(
      text.stdout
        == "Book: valid: 0 errors, 0 warnings (com.example.book 1.0, content folder, 2 entries, "
        + "305 bytes of content, build leaves out README.md)\n")
    let json = try pkgtool(["validate", "Book", "--json"], in: dir.path)
    let document = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
    #expect((document["findings"] as? [Any])?.isEmpty == true)
    #expect((document["package"] as? [String: Any])?["projectFiles"] as? [String] == ["README.md"])
    let sarif = try pkgtool(["validate", "Book", "--reporter", "sarif"], in: dir.path)
    let log = try #require(try JSONSerialization.jsonObject(with: Data(sarif.stdout.utf8)) as? [String: Any])
    #expect(((log["runs"] as? [[String: Any]])?.first?["results"] as? [Any])?.isEmpty == true)
    let strict = try pkgtool(["validate", "Book", "--strict", "--reporter", "github"], in: dir.path)
    #expect(strict.status == 0)
    #expect(strict.stdout.hasPrefix("::notice ") && !strict.stdout.contains("README.md,"))
  }

  @Test func initFillsTheCurrentFolderAndTheReadmeNamesTheProduct() throws {
    let dir = try TemporaryDirectory()
    try FileManager.default.createDirectory(atPath: dir.appending("MyLevels"), withIntermediateDirectories: true)
    let made = try pkgtool(
      ["init", ".", "--product-id", "com.example.levels", "--content-version", "2.0"], in: dir.appending("MyLevels"))
    #expect(made.status == 0, "\(made.stderr)")
    let readme = String(decoding: try readFile(dir.appending("MyLevels/README.md")), as: UTF8.self)
    #expect(!readme.contains("{{"))
    #expect(readme.contains("pkgtool build MyLevels          # -> com.example.levels-2.0.pkg"))
    #expect(try pkgtool(["validate", "MyLevels"], in: dir.path).status == 0)
    // A folder that is not empty is left alone.
    let again = try pkgtool(["init", ".", "--product-id", "com.example.levels"], in: dir.appending("MyLevels"))
    #expect(again.status == 2)
    #expect(again.stderr.contains("already exists and is not an empty folder"))
  }

  @Test func aStrayRootFileIsAWarningInTheProjectAndAbsentFromThePackage() throws {
    let dir = try TemporaryDirectory()
    #expect(try pkgtool(["init", "P", "--product-id", "com.example.p"], in: dir.path).status == 0)
    try writeFile(dir.appending("P/Contents/a.txt"), "a")
    try writeFile(dir.appending("P/levels.json"), "{}")
    let project = try pkgtool(["validate", "P"], in: dir.path)
    #expect(project.status == 0)
    #expect(
      project.stdout.contains(
        "P:levels.json: warning: 'levels.json' is at the project root, outside Contents/; build leaves it out of the package [layout]"
      ))
    #expect(try pkgtool(["validate", "P", "--strict"], in: dir.path).status == 1)
    #expect(try pkgtool(["build", "P", "--strict"], in: dir.path).status == 1)
    #expect(try pkgtool(["build", "P"], in: dir.path).status == 0)
    let entries = try XARReader(path: dir.appending("com.example.p-1.0.pkg")).entries.map(\.path)
    #expect(!entries.contains("levels.json") && !entries.contains("README.md"))
  }

  @Test func aFileThatIsNotAPackageReadsTheSameInValidateInfoAndUnpack() throws {
    let dir = try TemporaryDirectory()
    try writeFile(dir.appending("x.pkg"), "hello, not a package")
    let line = "x.pkg: error: not a readable package:"
    for arguments in [["validate", "x.pkg"], ["info", "x.pkg"], ["unpack", "x.pkg", "-o", "out"]] {
      let result = try pkgtool(arguments, in: dir.path)
      #expect(result.status == 1, "\(arguments)")
      #expect(result.stdout.hasPrefix(line), "\(arguments): \(result.stdout)")
      #expect(!result.stdout.contains("[package-form]"), "\(arguments): \(result.stdout)")
    }
    #expect(!FileManager.default.fileExists(atPath: dir.appending("out")))
  }

  @Test func maxSizeGivesOneFindingForOneCause() throws {
    let dir = try TemporaryDirectory()
    let package = try ExamplePackages.package(
      for: RuleExample.package("big", adding: [.file("Contents/big.txt", String(repeating: "x", count: 5000))]),
      in: dir.path)
    let result = try pkgtool(["validate", package, "--max-size", "1000", "--json"])
    #expect(result.status == 1)
    let json = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
    let size = (json["findings"] as? [[String: Any]] ?? []).filter { $0["rule"] as? String == "size-limit" }
    #expect(size.count == 1, "\(size)")
    let message = size.first?["message"] as? String ?? ""
    #expect(message.contains("the package file is") && message.contains("over the limit of 1,000 bytes"), "\(message)")
  }

  @Test func validateTakesSeveralInputsAndWritesItsReportEvenWhenOneCannotBeRead() throws {
    let dir = try TemporaryDirectory()
    let good = try ExamplePackages.package(for: RuleExample.package("ok"), in: dir.path)
    for reporter in ["sarif", "junit", "json", "github", "text"] {
      let out = dir.appending("report.\(reporter)")
      let result = try pkgtool([
        "validate", good, dir.appending("missing.pkg"), "--reporter", reporter, "-o", out, "--force",
      ])
      #expect(result.status == 2, "\(reporter)")
      #expect(
        result.stderr.hasPrefix("pkgtool: error: cannot open '\(dir.appending("missing.pkg"))'"), "\(result.stderr)")
      let report = String(decoding: try readFile(out), as: UTF8.self)
      #expect(report.contains("missing.pkg"), "\(reporter): \(report)")
      switch reporter {
      case "sarif":
        #expect(report.contains(#""executionSuccessful" : false"#))
        #expect(report.contains("toolExecutionNotifications"))
        let check = try runProcess("/usr/bin/env", ["python3", repositoryRoot + "/scripts/check-sarif.py", out])
        #expect(check.status == 0, "\(check.stdout)")
      case "junit": #expect(report.contains("<error message=\"cannot open"))
      case "json": #expect(report.contains(#""error" : "cannot open"#))
      default: #expect(report.contains("could not"))
      }
    }
    let both = try pkgtool(["validate", good, good, "--json"])
    #expect(both.status == 0)
    let json = try #require(try JSONSerialization.jsonObject(with: Data(both.stdout.utf8)) as? [String: Any])
    #expect((json["reports"] as? [[String: Any]])?.count == 2)
    #expect(try pkgtool(["validate", good, "--quiet"]).stdout.isEmpty)
  }

  @Test func strictLinesSummaryJSONAndExitAgree() throws {
    let dir = try TemporaryDirectory()
    let package = try ExamplePackages.package(
      for: RuleExample.package("junk", adding: [.file("Contents/.DS_Store", "junk")]), in: dir.path)
    let text = try pkgtool(["validate", package, "--strict"])
    #expect(text.status == 1)
    #expect(text.stdout.contains(": error: '.DS_Store' is junk"))
    #expect(text.stdout.contains("invalid: 1 error, 0 warnings"))
    let json = try pkgtool(["validate", package, "--strict", "--json"])
    let object = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
    #expect((object["summary"] as? [String: Int])?["errors"] == 1)
    #expect(object["valid"] as? Bool == false)
  }

  @Test func bumpDryRunChangesNothingAndNotGreaterExits1() throws {
    let dir = try TemporaryDirectory()
    #expect(
      try pkgtool(["init", "B", "--product-id", "com.example.b", "--content-version", "2.0"], in: dir.path).status == 0)
    let before = try readFile(dir.appending("B/ContentInfo.plist"))
    let dry = try pkgtool(["bump", "B", "--dry-run"], in: dir.path)
    #expect(dry.status == 0)
    #expect(dry.stdout == "com.example.b: 2.0 → 2.1 (dry run: nothing changed)\n")
    #expect(try readFile(dir.appending("B/ContentInfo.plist")) == before)
    let lower = try pkgtool(["bump", "B", "--set", "1.0"], in: dir.path)
    #expect(lower.status == 1)
    #expect(
      lower.stderr == "pkgtool: bump refused: 1.0 is not greater than the current 2.0 (pass --force to set it anyway)\n"
    )
    #expect(try readFile(dir.appending("B/ContentInfo.plist")) == before)
  }

  @Test func installSaysWhatItDidWithoutContradiction() throws {
    let dir = try TemporaryDirectory()
    var packages: [String] = []
    for version in ["1.0", "2.0"] {
      let plist = String(
        decoding: ContentInfo(productIdentifier: "com.example.sample", contentVersion: ContentVersion(version)!)
          .encoded(), as: UTF8.self)
      let example = RuleExample.package("v\(version)", adding: [.file(ContentInfo.fileName, plist)]).with {
        $0.packageFileName = "p\(version).pkg"
      }
      packages.append(try ExamplePackages.package(for: example, in: dir.path))
    }
    try FileManager.default.createDirectory(atPath: dir.appending("docs"), withIntermediateDirectories: true)
    #expect(try pkgtool(["install", packages[0], "--into", dir.appending("docs")]).status == 0)
    #expect(try pkgtool(["install", packages[1], "--into", dir.appending("docs")]).status == 0)
    let again = try pkgtool(["install", packages[1], "--into", dir.appending("docs"), "--keep", "1"])
    #expect(again.status == 0)
    #expect(!again.stdout.contains("nothing to do"), "\(again.stdout)")
    #expect(again.stdout.contains("already installed from these same bytes and is current"))
    #expect(again.stdout.contains("removed an older version beyond --keep 1: 1.0"), "\(again.stdout)")
  }

  @Test func unpackKeepGoingExtractsWhatIsSafeAndSaysWhatItSkipped() throws {
    let dir = try TemporaryDirectory()
    let package = try ExamplePackages.package(
      for: RuleExample.package(
        "broken",
        adding: [
          .file("Contents/tool", bytes: [0x7F, 0x45, 0x4C, 0x46, 2, 1, 1, 0]), .file("notes.txt", "stray"),
          .symlink("Contents/out", "../../../etc/passwd"),
        ]), in: dir.path)
    let refused = try pkgtool(["unpack", package, "-o", dir.appending("a")])
    #expect(refused.status == 1)
    #expect(!FileManager.default.fileExists(atPath: dir.appending("a")))
    let result = try pkgtool(["unpack", package, "-o", dir.appending("b"), "--keep-going"])
    #expect(result.status == 1)
    #expect(result.stdout.contains("skipped: Contents/tool"))
    #expect(result.stdout.contains("skipped: notes.txt"))
    #expect(result.stdout.contains("skipped: Contents/out"))
    #expect(FileManager.default.fileExists(atPath: dir.appending("b/Contents/readme.txt")))
    #expect(FileManager.default.fileExists(atPath: dir.appending("b/ContentInfo.plist")))
    for absent in ["b/Contents/tool", "b/notes.txt", "b/Contents/out"] {
      #expect((try? FileManager.default.attributesOfItem(atPath: dir.appending(absent))) == nil, "\(absent)")
    }
  }

  @Test func catPrintsOneEntryAndInfoTOCPrintsTheTableOfContents() throws {
    let dir = try TemporaryDirectory()
    let package = try ExamplePackages.package(for: RuleExample.package("ok"), in: dir.path)
    let cat = try pkgtool(["cat", package, "Contents/readme.txt"])
    #expect(cat.status == 0)
    #expect(cat.stdout == "Chapter one.\n")
    let missing = try pkgtool(["cat", package, "Contents/nope.txt"])
    #expect(missing.status == 2)
    #expect(missing.stderr.contains("has no entry 'Contents/nope.txt'"))
    let toc = try pkgtool(["info", package, "--toc"])
    #expect(toc.status == 0)
    #expect(toc.stdout.hasPrefix("<?xml"))
    #expect(toc.stdout.contains("<name>readme.txt</name>"))
    let info = try pkgtool(["info", package])
    #expect(info.stdout.contains("compression  content "))
    #expect(!info.stdout.contains("package / content"))
    let json = try pkgtool(["info", package, "--json"])
    #expect(!json.stdout.contains("\"files\""))
  }

  /// A project folder zipped whole (`zip -r MyBook.zip MyBook`): the hints point inside the
  /// folder (package what it holds), never "move it into Contents/" or "add a plist".
  @Test func aZippedProjectFolderGetsHintsThatPointInside() throws {
    let dir = try TemporaryDirectory()
    #expect(try pkgtool(["init", "MyBook", "--product-id", "com.example.book"], in: dir.path).status == 0)
    try writeFile(dir.appending("MyBook/Contents/a.txt"), "hello\n")
    #expect(try bsdtar(["-a", "-cf", "MyBook.zip", "MyBook"], in: dir.path).status == 0)
    let result = try pkgtool(["validate", "MyBook.zip"], in: dir.path)
    #expect(result.status == 1)
    #expect(
      result.stdout.contains("MyBook.zip:MyBook: error: 'MyBook' is the project folder itself: "), "\(result.stdout)")
    #expect(result.stdout.contains("hint: package what is inside the folder, not the folder: pkgtool build MyBook"))
    #expect(result.stdout.contains("there is one in 'MyBook/', one level down [content-info]"))
    #expect(!result.stdout.contains("move it into Contents/"))
    #expect(!result.stdout.contains("pkgtool init makes one"))
    #expect(!result.stdout.contains("no Contents/ folder"))
    let build = try pkgtool(["build", "MyBook.zip"], in: dir.path)
    #expect(build.status == 2)
    #expect(build.stderr.contains("if it is a zipped project folder, build the folder it holds"), "\(build.stderr)")
    // A folder put at the root by mistake still gets "move it into Contents/".
    try FileManager.default.createDirectory(atPath: dir.appending("Loose/Contents"), withIntermediateDirectories: true)
    try writeFile(
      dir.appending("Loose/ContentInfo.plist"),
      try String(contentsOfFile: dir.appending("MyBook/ContentInfo.plist"), encoding: .utf8))
    try writeFile(dir.appending("Loose/levels/1.json"), "{}")
    #expect(
      try bsdtar(["-a", "-cf", "../loose.zip", "ContentInfo.plist", "Contents", "levels"], in: dir.appending("Loose"))
        .status == 0)
    let loose = try pkgtool(["validate", "loose.zip"], in: dir.path)
    #expect(loose.stdout.contains("hint: move it into Contents/ or leave it out"), "\(loose.stdout)")
  }

  /// `--asset-pack-room` is an asset pack's: shown by the commands that take one, not by
  /// `publish` and `install`, which take hosted-content packages only.
  @Test func assetPackRoomShowsOnlyWhereAssetPacksGo() throws {
    for command in ["publish", "install"] {
      let help = try pkgtool([command, "--help"])
      #expect(help.status == 0)
      #expect(!help.stdout.contains("--asset-pack-room"), "\(command)")
      #expect(help.stdout.contains("--max-size") && help.stdout.contains("--product-id"), "\(command)")
    }
    for command in ["validate", "unpack"] {
      #expect(try pkgtool([command, "--help"]).stdout.contains("--asset-pack-room"), "\(command)")
    }
  }

  /// A typo in a nested command gets a "did you mean" naming its group, and an option spelled as
  /// the value of another (`--sarif`) points at that option, not at the nearest spelling.
  @Test func nestedTyposAndValuesAsOptionsGetTheRightSuggestion() throws {
    let nested = try pkgtool(["catalog", "renw", "catalog.json"])
    #expect(nested.status == 2)
    #expect(
      nested.stderr
        == "pkgtool: error: 'renw' is not a pkgtool catalog command; did you mean 'renew'?\n"
        + "Run 'pkgtool catalog --help' for usage.\n")
    #expect(try pkgtool(["root", "shw", "root.json"]).stderr.contains("did you mean 'show'?"))
    let unknown = try pkgtool(["catalog", "frobnicate"])
    #expect(unknown.stderr.contains("the commands are show, verify, remove, rebase, renew"))
    // Right words still run: the group's help, and a command under it.
    #expect(try pkgtool(["catalog", "--help"]).status == 0)
    #expect(try pkgtool(["help", "catalog", "renew"]).status == 0)

    let sarif = try pkgtool(["validate", "x.pkg", "--sarif"])
    #expect(sarif.status == 2)
    #expect(sarif.stderr.hasPrefix("pkgtool: error: unknown option '--sarif'; did you mean '--reporter sarif'?\n"))
    #expect(!sarif.stderr.contains("--strict"))
    #expect(try pkgtool(["validate", "x.pkg", "--junit"]).stderr.contains("did you mean '--reporter junit'?"))
    #expect(try pkgtool(["build", "Book", "--zip"]).stderr.contains("did you mean '--format zip'?"))
    // Any other unknown option keeps argument-parser's own suggestion.
    #expect(try pkgtool(["validate", "x.pkg", "--stirct"]).stderr.contains("Did you mean '--strict'?"))
  }

  @Test func aMistypedCommandGetsASuggestionAndHelpExamplesAreWhole() throws {
    let typo = try pkgtool(["vaildate", "x.pkg"])
    #expect(typo.status == 2)
    #expect(typo.stderr.hasPrefix("pkgtool: error: 'vaildate' is not a pkgtool command; did you mean 'validate'?"))
    #expect(try pkgtool(["inf", "x.pkg"]).stderr.contains("did you mean 'info'?"))
    for command in [
      "init", "build", "validate", "unpack", "install", "bump", "info", "cat", "diff", "rules", "keygen", "publish",
      "export background-assets", "catalog", "catalog show", "catalog verify", "catalog remove", "catalog rebase",
      "catalog renew", "download-manifest", "download-manifest create", "download-manifest update", "migrate",
    ] {
      let help = try pkgtool(
        command.split(separator: " ").map(String.init) + ["--help"], environment: ["COLUMNS": "80"])
      #expect(help.stdout.contains("Examples:") || help.stdout.contains("Example:"), "\(command) has examples")
      // An example never wraps: every line after "Examples:" that is part of one starts with
      // two spaces and `pkgtool`, or four spaces (a continued command ending in a backslash).
      let lines = help.stdout.split(separator: "\n", omittingEmptySubsequences: false)
      guard let start = lines.firstIndex(where: { $0.hasPrefix("Example") }) else { continue }
      var previousContinues = false
      for line in lines[(start + 1)...] {
        if line.isEmpty { break }
        #expect(
          line.hasPrefix("  pkgtool ") || line.hasPrefix("  cp ") || (previousContinues && line.hasPrefix("      ")),
          "\(command): '\(line)'")
        previousContinues = line.hasSuffix("\\")
      }
    }
    let rule = try pkgtool(["rules", "no-external-symlink"])
    #expect(rule.status == 0)
    #expect(rule.stdout.contains("Why: "))
    #expect(rule.stdout.contains("Reported, for example:"))
    #expect(try pkgtool(["rules", "no-exec"]).stderr.contains("did you mean 'no-executable'?"))
  }

  @Test func completionScriptsKnowEveryCommandAndParse() throws {
    let dir = try TemporaryDirectory()
    for shell in ["bash", "zsh", "fish"] {
      let script = try pkgtool(["--generate-completion-script", shell])
      #expect(script.status == 0, "\(shell)")
      for command in ["validate", "unpack", "cat", "rules"] {
        #expect(script.stdout.contains(command), "\(shell): \(command)")
      }
      if shell == "bash" {
        try writeFile(dir.appending("pkgtool.bash"), script.stdout)
        #expect(try runProcess("/bin/bash", ["-n", dir.appending("pkgtool.bash")]).status == 0)
      }
    }
  }

  /// Every argument that names a file or a folder completes paths, in all three shells: the
  /// commands' own description (`--experimental-dump-help`) says so for each, and the generated
  /// scripts complete files (`_files`, `-rF`, `-f`) or folders (`_files -/`, directories, `-d`).
  @Test func completionScriptsCompletePathsForEveryPathArgument() throws {
    // The value names pkgtool gives path arguments; `cat`'s second argument is a path inside
    // the package, not on disk.
    let fileNames: Set<String> = [
      "file", "package", "old.pkg", "catalog.json", "key.pub", "root.json", "key", "old-key", "old.json", "new.json",
      "old", "new", "path", "pack.aar", "package|folder",
    ]
    let folderNames: Set<String> = ["dir", "docs"]
    let dump = try pkgtool(["--experimental-dump-help"])
    let root = try #require(
      (try JSONSerialization.jsonObject(with: Data(dump.stdout.utf8)) as? [String: Any])?["command"] as? [String: Any])
    var options: [String: Bool] = [:]  // long or short option name → completes folders
    var checked = 0
    func walk(_ command: [String: Any], _ path: [String]) {
      for argument in command["arguments"] as? [[String: Any]] ?? [] {
        guard let value = argument["valueName"] as? String, fileNames.contains(value) || folderNames.contains(value)
        else { continue }
        if path == ["cat"] && value == "path" { continue }
        let kind = argument["completionKind"] as? [String: Any]
        #expect(
          kind?["file"] != nil || kind?["directory"] != nil,
          "\(path.joined(separator: " ")) <\(value)> completes no path")
        checked += 1
        if let name = (argument["names"] as? [[String: Any]])?.first?["name"] as? String {
          options[name] = kind?["directory"] != nil
        }
      }
      for sub in command["subcommands"] as? [[String: Any]] ?? [] {
        walk(sub, path + [(sub["commandName"] as? String) ?? "?"])
      }
    }
    walk(root, [])
    #expect(checked >= 40, "\(checked)")
    #expect(options["into"] == true && options["o"] != nil && options["catalog"] == false)

    let zsh = try pkgtool(["--generate-completion-script", "zsh"]).stdout.split(separator: "\n")
    let fish = try pkgtool(["--generate-completion-script", "fish"]).stdout.split(separator: "\n")
    let bash = try pkgtool(["--generate-completion-script", "bash"]).stdout.split(separator: "\n").map {
      $0.trimmingCharacters(in: .whitespaces)
    }
    for (name, folder) in options where name.count > 1 {
      // `-o` is a file in some commands and a folder in others: both complete paths.
      let zshLines = zsh.filter { $0.contains("'--\(name)[") || $0.contains("'*--\(name)[") }
      #expect(!zshLines.isEmpty, "zsh --\(name)")
      for line in zshLines {
        #expect(line.hasSuffix(folder ? ":_files -/'" : ":_files'"), "zsh: \(line)")
      }
      let fishLines = fish.filter { $0.contains("-l '\(name)'") }
      #expect(!fishLines.isEmpty, "fish --\(name)")
      for line in fishLines {
        #expect(line.hasSuffix(folder ? "-rfa '(__pkgtool_complete_directories)'" : "-rF"), "fish: \(line)")
      }
      var cases = 0
      for (index, line) in bash.enumerated() where line == "'--\(name)')" {
        cases += 1
        #expect(bash[index + 1] == "__pkgtool_add_completions \(folder ? "-d" : "-f")", "bash --\(name)")
      }
      #expect(cases > 0, "bash --\(name)")
    }
    // Positional paths: zsh completes them too (`:package:_files`, `:dir:_files -/`).
    #expect(zsh.contains { $0.contains("':package:_files'") })
    #expect(zsh.contains { $0.contains("':dir:_files -/'") })
    #expect(zsh.contains { $0.contains("':root.json:_files'") })
  }

  @Test func everyCommandsJSONCarriesTheSchemaVersion() throws {
    let dir = try TemporaryDirectory()
    let package = try ExamplePackages.package(for: RuleExample.package("ok"), in: dir.path)
    #expect(try pkgtool(["init", "P", "--product-id", "com.example.p"], in: dir.path).status == 0)
    try writeFile(dir.appending("P/Contents/a.txt"), "a")
    let runs: [[String]] = [
      ["validate", package, "--json"], ["info", package, "--json"], ["diff", package, package, "--json"],
      ["rules", "--json"],
      ["rules", "layout", "--json"], ["bump", "P", "--dry-run", "--json"], ["build", "P", "--json", "-o", "p.pkg"],
      ["unpack", package, "-o", "u", "--json"], ["keygen", "-o", "k", "-q"],
      ["publish", package, "--key", "k", "--base-url", "https://cdn.example.com", "-o", "c.json", "--json"],
      ["export", "background-assets", package, "-o", "pack", "--json"], ["catalog", "show", "c.json", "--json"],
    ]
    for arguments in runs {
      let result = try pkgtool(arguments, in: dir.path)
      #expect(result.status == 0, "\(arguments): \(result.stderr)")
      if arguments[0] == "keygen" { continue }
      let object = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any]
      #expect(object?["schemaVersion"] as? Int == 1, "\(arguments)")
    }
  }
}
