import Foundation
import HostedContent
import TestSupport
import Testing

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// `build --exclude`, `validate --exclude` and `.pkgtoolignore`, through the real binary: what is
/// left out, that a project and its package get one verdict, that what is left out is never
/// opened, and the patterns that are refused. (These inputs are projects with a side file, which
/// the `HostilePackage` shape — one package file and a rule finding — cannot express, so the
/// hostile ignore files are here rather than in HostileRound3Exclude.swift.)
@Suite struct ExcludeTests {
  /// A project from `init`, with junk, a script, a .gitkeep, a folder of drafts holding a FIFO,
  /// and two images differing in case.
  func project(_ dir: TemporaryDirectory) throws -> String {
    let path = dir.appending("Book")
    let created = try pkgtool(["init", path, "--product-id", "com.example.book"])
    #expect(created.status == 0, "\(created.stderr)")
    try writeFile(path + "/Contents/chapter1.txt", "Once upon a time.\n")
    try writeFile(path + "/Contents/.gitkeep", "")
    try writeFile(path + "/Contents/.DS_Store", [0, 0, 0, 1, 0x42, 0x75, 0x64, 0x31])
    try FileManager.default.createDirectory(atPath: path + "/Contents/tools", withIntermediateDirectories: true)
    try writeFile(path + "/Contents/tools/make.sh", "#!/bin/sh\necho hi\n", mode: 0o755)
    try FileManager.default.createDirectory(atPath: path + "/Contents/drafts", withIntermediateDirectories: true)
    #expect(mkfifo(path + "/Contents/drafts/pipe", 0o644) == 0)
    try writeFile(path + "/Contents/drafts/unreadable.txt", "secret", mode: 0o000)
    try writeFile(path + "/Contents/art.psd", "psd")
    try writeFile(path + "/Contents/Cover.PSD", "PSD")
    try writeFile(path + "/build.sh", "#!/bin/sh\n", mode: 0o755)
    return path
  }

  func tarList(_ pkg: String) throws -> [String] {
    let listed = try bsdtar(["-tf", pkg])
    #expect(listed.status == 0, "\(listed.stderr)")
    return listed.stdout.split(separator: "\n").map { $0.hasSuffix("/") ? String($0.dropLast()) : String($0) }.sorted()
  }

  /// The ignore file leaves out junk, a .gitkeep, a script and a folder with a FIFO and an
  /// unreadable file: the project validates clean, builds a package that validates clean and
  /// holds exactly the other entries (bsdtar's listing), and the output counts what was left out.
  @Test func ignoreFileGivesOneVerdictForProjectAndPackage() throws {
    let dir = try TemporaryDirectory()
    let book = try project(dir)
    // Without exclusions the script and the FIFO break rules.
    let before = try pkgtool(["validate", book])
    #expect(before.status == 1, "\(before.stdout)")
    #expect(before.stdout.contains("[no-executable]") && before.stdout.contains("[special-file]"), "\(before.stdout)")

    try writeFile(
      book + "/.pkgtoolignore",
      "# left out of the package\n.DS_Store\n.gitkeep\n/build.sh\n*.sh\nContents/drafts/\n*.psd\n")
    let project = try pkgtool(["validate", book, "--strict"])
    #expect(project.status == 0, "\(project.stdout)\(project.stderr)")
    #expect(project.stdout.contains("valid: 0 errors, 0 warnings"), "\(project.stdout)")
    #expect(!project.stdout.contains(".DS_Store") && !project.stdout.contains("build.sh"), "\(project.stdout)")

    let pkg = dir.appending("book.pkg")
    let built = try pkgtool(["build", book, "-o", pkg])
    #expect(built.status == 0, "\(built.stdout)\(built.stderr)")
    #expect(built.stdout.contains("left out 8 entries (6 excluded by a pattern"), "\(built.stdout)")
    #expect(
      try tarList(pkg) == [
        "ContentInfo.plist", "Contents", "Contents/Cover.PSD", "Contents/chapter1.txt", "Contents/tools",
      ])
    #expect(try pkgtool(["validate", pkg, "--strict"]).status == 0)

    let json = try pkgtool(["build", book, "-o", pkg, "--json"])
    let summary = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any]
    #expect(summary?["leftOutCount"] as? Int == 8)
    #expect(
      (summary?["excluded"] as? [String])?.sorted()
        == [
          "Contents/.DS_Store", "Contents/.gitkeep", "Contents/art.psd", "Contents/drafts", "Contents/tools/make.sh",
          "build.sh",
        ].sorted())

    let dry = try pkgtool(["build", book, "-o", dir.appending("dry.pkg"), "--dry-run"])
    #expect(dry.status == 0)
    for line in [
      "left out: Contents/drafts (excluded by a pattern)", "left out: .pkgtoolignore (the ignore file)",
      "left out: build.sh (excluded by a pattern)",
    ] {
      #expect(dry.stdout.contains(line), "\(dry.stdout)")
    }
    #expect(!FileManager.default.fileExists(atPath: dir.appending("dry.pkg")))
  }

  /// `--exclude` on the command line, after the ignore file (so it wins), for build and validate;
  /// a package input is refused.
  @Test func excludeOptionForBuildAndValidate() throws {
    let dir = try TemporaryDirectory()
    let book = try project(dir)
    try writeFile(book + "/.pkgtoolignore", "*.psd\n")
    let args = ["--exclude", "/build.sh", "--exclude", "Contents/drafts/", "--exclude", "*.sh", "--exclude", "!*.psd"]
    let validated = try pkgtool(["validate", book] + args)
    #expect(validated.status == 0, "\(validated.stdout)\(validated.stderr)")
    let pkg = dir.appending("book.pkg")
    #expect(try pkgtool(["build", book, "-o", pkg] + args).status == 0)
    #expect(try tarList(pkg).contains("Contents/art.psd"))  // !*.psd came last
    #expect(try !tarList(pkg).contains("Contents/drafts"))

    let refused = try pkgtool(["validate", pkg, "--exclude", "*.psd"])
    #expect(refused.status == 2)
    #expect(refused.stderr.contains("exclusions apply to content projects only"), "\(refused.stderr)")
  }

  /// Names match case-sensitively, as stored: `*.psd` leaves out art.psd, not Cover.PSD.
  @Test func matchingIsCaseSensitive() throws {
    let dir = try TemporaryDirectory()
    let book = try project(dir)
    let pkg = dir.appending("book.pkg")
    let built = try pkgtool([
      "build", book, "-o", pkg, "--exclude", "*.psd", "--exclude", "drafts/", "--exclude", "tools/",
    ])
    #expect(built.status == 0, "\(built.stdout)\(built.stderr)")
    let names = try tarList(pkg)
    #expect(names.contains("Contents/Cover.PSD") && !names.contains("Contents/art.psd"))
  }

  /// A plain folder's own .pkgtoolignore is honoured and never packaged.
  @Test func plainFolderIgnoreFileIsNotPackaged() throws {
    let dir = try TemporaryDirectory()
    let folder = dir.appending("assets")
    try writeFile(folder + "/level1.json", "{}")
    try writeFile(folder + "/notes.md", "draft")
    try writeFile(folder + "/.pkgtoolignore", "notes.md\n")
    let pkg = dir.appending("levels.pkg")
    let built = try pkgtool([
      "build", folder, "--product-id", "com.example.levels", "--content-version", "1.0", "-o", pkg,
    ])
    #expect(built.status == 0, "\(built.stdout)\(built.stderr)")
    #expect(try tarList(pkg) == ["ContentInfo.plist", "Contents", "Contents/level1.json"])
  }

  /// Hostile ignore files and patterns: each is refused before anything is written, with one line
  /// naming where the pattern came from and what to do.
  @Test func unusablePatternsAreRefused() throws {
    let cases: [(ignore: String?, exclude: [String], expect: String)] = [
      ("*.plist\n", [], "'*.plist' would leave out ContentInfo.plist"),
      ("/ContentInfo.plist\n", [], "would leave out ContentInfo.plist"),
      ("Contents/**/*.plist\n!Contents\n", ["/Contents"], "would leave out Contents/"),
      (nil, ["*"], "would leave out ContentInfo.plist"),
      (nil, ["../secret"], "holds a '.' or '..' name"),
      ("levels/../../x\n", [], ".pkgtoolignore' line 1: the pattern 'levels/../../x'"),
      ("ok\n\nx\\\n", [], "line 3: the pattern 'x\\' ends in a backslash"),
    ]
    for (index, c) in cases.enumerated() {
      let dir = try TemporaryDirectory()
      let book = dir.appending("Book")
      #expect(try pkgtool(["init", book, "--product-id", "com.example.book"]).status == 0)
      if let ignore = c.ignore { try writeFile(book + "/.pkgtoolignore", ignore) }
      let pkg = dir.appending("out.pkg")
      for command in [["build", book, "-o", pkg], ["validate", book]] {
        let args = command + c.exclude.flatMap { ["--exclude", $0] }
        let result = try pkgtool(args)
        #expect(result.status == 2, "case \(index) \(command[0]): \(result.stdout)\(result.stderr)")
        #expect(result.stderr.contains(c.expect), "case \(index) \(command[0]): \(result.stderr)")
        #expect(result.stderr.split(separator: "\n").count == 1, "case \(index): \(result.stderr)")
      }
      #expect(!FileManager.default.fileExists(atPath: pkg))
    }
    // An ignore file that is a FIFO is refused, not opened (which would hang).
    let dir = try TemporaryDirectory()
    let book = dir.appending("Book")
    #expect(try pkgtool(["init", book, "--product-id", "com.example.book"]).status == 0)
    #expect(mkfifo(book + "/.pkgtoolignore", 0o644) == 0)
    let result = try pkgtool(["build", book, "-o", dir.appending("o.pkg")])
    #expect(result.status == 2 && result.stderr.contains(".pkgtoolignore' is not a regular file"), "\(result.stderr)")
  }
}
