import Foundation
import HostedContent
import TestSupport
import Testing

/// What a user meets on the second half of a day: messages about outputs that could not be
/// written, a key folder that does not exist yet, and a diff read by a person.
@Suite struct UserDayTests {
  func package(_ dir: TemporaryDirectory, _ name: String, _ extra: [RuleExample.Node]) throws -> String {
    let path = dir.appending(name)
    try Data(ExamplePackages.xarBytes(RuleExample.baseNodes + extra)).write(to: URL(fileURLWithPath: path))
    return path
  }

  /// `diff` says when ContentVersion goes down (a warning, exit 0); `--strict` makes any warning
  /// exit 1, and a version that goes up is no warning.
  @Test func diffWarnsWhenTheVersionGoesDown() throws {
    let dir = try TemporaryDirectory()
    for (folder, version) in [("New", "2.0"), ("Old", "1.0")] {
      let made = try pkgtool(
        ["init", folder, "--product-id", "com.example.book", "--content-version", version], in: dir.path)
      #expect(made.status == 0, "\(made.stderr)")
      try writeFile(dir.appending("\(folder)/Contents/a.txt"), "same\n")
    }
    let down = try pkgtool(["diff", "New", "Old"], in: dir.path)
    #expect(down.status == 0, "\(down.stderr)")
    #expect(down.stdout.contains("version: 2.0 → 1.0\n"))
    #expect(down.stdout.contains("warning: ContentVersion goes down, 2.0 → 1.0: "), "\(down.stdout)")
    let strict = try pkgtool(["diff", "New", "Old", "--strict"], in: dir.path)
    #expect(strict.status == 1)
    #expect(strict.stdout == down.stdout)
    let json = try pkgtool(["diff", "New", "Old", "--json", "--strict"], in: dir.path)
    #expect(json.status == 1)
    #expect(json.stdout.contains("ContentVersion goes down"))
    let up = try pkgtool(["diff", "Old", "New", "--strict"], in: dir.path)
    #expect(up.status == 0, "\(up.stdout)")
    #expect(!up.stdout.contains("warning:"))
  }

  /// An error never names a temporary file: it names the output and the missing folder.
  @Test func errorsNameTheOutputNeverATemporary() throws {
    let dir = try TemporaryDirectory()
    let pkg = try package(dir, "b.pkg", [])
    #expect(try pkgtool(["keygen", "-o", dir.appending("k")]).status == 0)
    let commands: [[String]] = [
      ["validate", pkg, "-o", dir.appending("missing/r.sarif")],
      [
        "publish", pkg, "--key", dir.appending("k"), "--base-url", "https://cdn.example.com/c", "-o",
        dir.appending("missing/catalog.json"),
      ],
      ["unpack", pkg, "-o", dir.appending("missing/out")],
      ["build", dir.appending("none"), "-o", dir.appending("missing/x.pkg")],
    ]
    for command in commands {
      let result = try pkgtool(command)
      #expect(result.status == 2, "\(command[0]): \(result.stderr)")
      #expect(!result.stderr.contains(".pkgtool-"), "\(command[0]): \(result.stderr)")
      #expect(result.stderr.split(separator: "\n").count == 1, "\(command[0]): \(result.stderr)")
    }
    let report = try pkgtool(["validate", pkg, "-o", dir.appending("missing/r.sarif")])
    #expect(report.stderr.contains("the folder '\(dir.appending("missing"))' does not exist"), "\(report.stderr)")
  }

  /// `keygen -o ~/.keys/content` with no ~/.keys yet: the folder is made, private.
  @Test func keygenMakesAMissingKeyFolderPrivate() throws {
    let dir = try TemporaryDirectory()
    let result = try pkgtool(["keygen", "-o", dir.appending(".keys/content")])
    #expect(result.status == 0, "\(result.stderr)")
    let attributes = try FileManager.default.attributesOfItem(atPath: dir.appending(".keys"))
    #expect((attributes[.posixPermissions] as? Int) == 0o700)
    #expect(FileManager.default.fileExists(atPath: dir.appending(".keys/content.pub")))
    #expect(
      try FileManager.default.contentsOfDirectory(atPath: dir.appending(".keys")).sorted() == [
        "content", "content.pub",
      ])
  }

  /// Sizes read as info prints them, the change named in words, and a warning when the
  /// content changed under the same ContentVersion.
  @Test func diffSpeaksToAPerson() throws {
    let dir = try TemporaryDirectory()
    let old = try package(dir, "old.pkg", [.file("Contents/a.txt", String(repeating: "a", count: 1500))])
    let new = try package(
      dir, "new.pkg",
      [
        .file("Contents/a.txt", String(repeating: "b", count: 1500)),
        .file("Contents/big.txt", String(repeating: "c", count: 12_345)),
      ])
    let result = try pkgtool(["diff", old, new])
    #expect(result.status == 0, "\(result.stderr)")
    #expect(result.stdout.contains("+ Contents/big.txt (12,345 bytes (12.3 kB))"), "\(result.stdout)")
    #expect(result.stdout.contains("~ Contents/a.txt (content; same size, 1,500 bytes (1.5 kB))"), "\(result.stdout)")
    #expect(result.stdout.contains("content: grew by 12,345 bytes (12.3 kB)"), "\(result.stdout)")
    #expect(
      result.stdout.contains("warning: the content differs but ContentVersion is 1.0 in both"), "\(result.stdout)")
    let json = try pkgtool(["diff", old, new, "--json"])
    let object = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any]
    #expect((object?["warnings"] as? [String])?.count == 1)

    let back = try pkgtool(["diff", new, old])
    #expect(back.stdout.contains("content: shrank by 12,345 bytes (12.3 kB)"), "\(back.stdout)")
    let same = try pkgtool(["diff", old, old])
    #expect(same.stdout.contains("content: size unchanged"))
    #expect(!same.stdout.contains("warning:"))
  }

  /// The README's sentence about --quiet and --json, held to every command's --help.
  @Test func theREADMEsSentenceOnQuietAndJSONHolds() throws {
    let readme = String(decoding: try readFile(repositoryRoot + "/README.md"), as: UTF8.self)
    #expect(readme.contains("`init`, `keygen` and `cat` have none"))
    #expect(readme.contains("nor do `catalog verify`,\n`remove`, `rebase` and `renew`"))
    let withJSON = [
      "build", "validate", "unpack", "install", "bump", "info", "diff", "rules", "publish", "export", "catalog show",
    ]
    let withoutJSON = ["init", "keygen", "cat", "catalog verify", "catalog remove", "catalog rebase", "catalog renew"]
    let withoutQuiet = ["cat", "rules", "catalog show"]
    for command in withJSON + withoutJSON {
      let words =
        command == "export" ? ["export", "background-assets"] : command.split(separator: " ").map(String.init)
      let help = try pkgtool(words + ["--help"]).stdout
      #expect(help.contains("--json") == withJSON.contains(command), "\(command) --json")
      #expect(help.contains("--quiet") == !withoutQuiet.contains(command), "\(command) --quiet")
    }
  }

  /// `install --into ~/Documents` with no such folder yet makes it; a refused install leaves
  /// no folder behind.
  @Test func installMakesAMissingDocumentsFolderOnlyWhenItInstalls() throws {
    let dir = try TemporaryDirectory()
    let good = try package(dir, "good.pkg", [])
    let bad = try package(dir, "bad.pkg", [.file("Contents/run.sh", "#!/bin/sh\n")])
    let refused = try pkgtool(["install", bad, "--into", dir.appending("Documents")])
    #expect(refused.status == 1, "\(refused.stderr)")
    #expect(!FileManager.default.fileExists(atPath: dir.appending("Documents")))
    let installed = try pkgtool(["install", good, "--into", dir.appending("Documents")])
    #expect(installed.status == 0, "\(installed.stderr)")
    #expect(FileManager.default.fileExists(atPath: dir.appending("Documents/com.example.sample/current")))
    let deeper = try pkgtool(["install", good, "--into", dir.appending("no/such/Documents")])
    #expect(deeper.status == 2)
  }

  /// `bump` keeps every other key exactly, unsigned 64-bit integers too, in XML and binary
  /// plists; Python's plistlib reads the values back.
  @Test(arguments: ["xml", "binary"])
  func bumpKeepsUnsigned64BitIntegers(format: String) throws {
    let dir = try TemporaryDirectory()
    let plist = dir.appending("ContentInfo.plist")
    let write = """
      import plistlib, sys
      value = {"ContentVersion": "1.0", "IAPProductIdentifier": "com.example.big",
               "Max": 2**64 - 1, "Edge": 2**63, "Low": -5, "Nested": [2**63 + 7]}
      fmt = plistlib.FMT_BINARY if sys.argv[2] == "binary" else plistlib.FMT_XML
      open(sys.argv[1], "wb").write(plistlib.dumps(value, fmt=fmt))
      """
    #expect(try runProcess("/usr/bin/env", ["python3", "-c", write, plist, format]).status == 0)
    let result = try pkgtool(["bump", plist])
    #expect(result.status == 0, "\(result.stderr)")
    let read = """
      import plistlib, sys
      v = plistlib.load(open(sys.argv[1], "rb"))
      print(v["ContentVersion"], v["Max"], v["Edge"], v["Low"], v["Nested"][0])
      """
    let check = try runProcess("/usr/bin/env", ["python3", "-c", read, plist])
    #expect(
      check.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        == "1.1 18446744073709551615 9223372036854775808 -5 9223372036854775815", "\(check.stdout)\(check.stderr)")
  }

  /// No help text (and so no man page section) carries a stray backslash: only an example's
  /// continuation ends in one, once.
  @Test func helpTextsHaveNoStrayBackslashes() throws {
    for command in [
      "init", "build", "validate", "unpack", "install", "bump", "info", "cat", "diff", "rules", "keygen",
      "publish", "export background-assets", "catalog", "catalog show", "catalog verify", "catalog remove",
      "catalog rebase", "catalog renew",
    ] {
      let help = try pkgtool(command.split(separator: " ").map(String.init) + ["--help"]).stdout
      for line in help.split(separator: "\n") where line.contains("\\") {
        #expect(line.hasPrefix("  ") && line.hasSuffix(" \\") && !line.hasSuffix("\\\\"), "\(command): \(line)")
      }
    }
  }

  /// export background-assets: the next step writes the .aar beside the folder, --events is
  /// refused for an on-demand pack, --force replaces, and the pack never lands in its project.
  @Test func exportSaysAndDoesWhatItShould() throws {
    let dir = try TemporaryDirectory()
    #expect(try pkgtool(["init", "Book", "--product-id", "com.example.book"], in: dir.path).status == 0)
    try writeFile(dir.appending("Book/Contents/a.txt"), "a")
    let first = try pkgtool(["export", "background-assets", "Book", "-o", "Pack"], in: dir.path)
    #expect(first.status == 0, "\(first.stderr)")
    #expect(first.stdout.contains("xcrun ba-package Manifest.json -o ../Pack.aar"), "\(first.stdout)")
    let again = try pkgtool(["export", "background-assets", "Book", "-o", "Pack"], in: dir.path)
    #expect(again.status == 2)
    try writeFile(dir.appending("Book/Contents/b.txt"), "b")
    let forced = try pkgtool(["export", "background-assets", "Book", "-o", "Pack", "--force"], in: dir.path)
    #expect(forced.status == 0, "\(forced.stderr)")
    #expect(FileManager.default.fileExists(atPath: dir.appending("Pack/Contents/b.txt")))
    #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path).filter { $0.hasPrefix(".") }.isEmpty)
    let events = try pkgtool(
      ["export", "background-assets", "Book", "-o", "P2", "--policy", "on-demand", "--events", "first-installation"],
      in: dir.path)
    #expect(events.status == 2)
    #expect(events.stderr.contains("--events"), "\(events.stderr)")
    let inside = try pkgtool(["export", "background-assets", "Book", "-o", "Book/Pack"], in: dir.path)
    #expect(inside.status == 2)
    #expect(inside.stderr.contains("inside"), "\(inside.stderr)")
    #expect(!FileManager.default.fileExists(atPath: dir.appending("Book/Pack")))
  }
}

/// Unpacking onto a nearly full file system: what fits without pkgtool's own temporaries fits
/// with them. Needs a small tmpfs of its own, so it runs where the tests may mount one (root);
/// elsewhere it does not run.
@Suite struct NearlyFullFileSystemTests {
  @Test(.enabled(if: getuid() == 0, "mounts a tmpfs of its own: root only"))
  func anUnpackThatFitsTheInodesLeftStillFits() throws {
    let dir = try TemporaryDirectory()
    let mountPoint = dir.appending("small")
    try FileManager.default.createDirectory(atPath: mountPoint, withIntermediateDirectories: true)
    // 400 inodes: the 140 folders and 140 files fit, with the staging folder, and little more.
    let mounted = try? runProcess("/bin/mount", ["-t", "tmpfs", "-o", "size=10m,nr_inodes=400", "tmpfs", mountPoint])
    // Root without the right to mount (a container): nothing to measure.
    guard mounted?.status == 0 else { return }
    defer { _ = try? runProcess("/bin/umount", [mountPoint]) }
    var nodes: [RuleExample.Node] = []
    for index in 0..<140 {
      nodes.append(.directory("Contents/d\(index)"))
      nodes.append(.file("Contents/d\(index)/f.txt", "file \(index)"))
    }
    let pkg = dir.appending("many-folders.pkg")
    try Data(ExamplePackages.xarBytes(RuleExample.baseNodes + nodes)).write(to: URL(fileURLWithPath: pkg))
    let out = mountPoint + "/out"
    let result = try pkgtool(["unpack", pkg, "-o", out])
    #expect(result.status == 0, "\(result.stderr)")
    #expect(FileManager.default.fileExists(atPath: out + "/Contents/d139/f.txt"))
    #expect(try FileManager.default.contentsOfDirectory(atPath: mountPoint) == ["out"])
  }
}

/// A package with more folders than the process may hold files open: macOS lets a process open
/// 256, a Linux shell usually 1,024. Unpack once took a descriptor per folder and failed with
/// EMFILE on a package of 300 folders under 256.
@Suite struct ManyFoldersFewDescriptorsTests {
  @Test(arguments: ["unpack", "install"])
  func aPackageOfManyFoldersUnpacksUnderALowDescriptorLimit(command: String) throws {
    let dir = try TemporaryDirectory()
    var nodes: [RuleExample.Node] = []
    for index in 0..<300 {
      nodes.append(.directory("Contents/g\(index % 3)/d\(index)"))
      nodes.append(.file("Contents/g\(index % 3)/d\(index)/f.txt", "file \(index)"))
    }
    // A file in the first folder, long after it was made: its folder is found again.
    nodes.append(.file("Contents/g0/d0/late.txt", "late"))
    let pkg = dir.appending("many-folders.pkg")
    try Data(ExamplePackages.xarBytes(RuleExample.baseNodes + nodes)).write(to: URL(fileURLWithPath: pkg))
    let out = dir.appending("out")
    let arguments = command == "unpack" ? ["unpack", pkg, "-o", out] : ["install", pkg, "--into", out]
    if command == "install" { try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: true) }
    let script = "ulimit -n 64 && exec \"$0\" \"$@\""
    let result = try runProcess("/bin/sh", ["-c", script, pkgtoolBinary] + arguments)
    #expect(result.status == 0, "\(result.stderr)")
    // unpack writes the package's tree; install writes what Contents/ holds under DOCS/<id>/<version>.
    let contents = command == "unpack" ? out + "/Contents" : out + "/com.example.sample/1.0"
    #expect(try String(contentsOfFile: contents + "/g2/d299/f.txt", encoding: .utf8) == "file 299")
    #expect(try String(contentsOfFile: contents + "/g0/d0/late.txt", encoding: .utf8) == "late")
    let folders = try FileManager.default.subpathsOfDirectory(atPath: contents).filter {
      $0.split(separator: "/").count == 2 && !$0.hasPrefix(".")
    }
    #expect(folders.count == 300)
  }
}
