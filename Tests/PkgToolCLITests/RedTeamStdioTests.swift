import Foundation
import HostedContent
import TestSupport
import Testing

/// `-` attacked from outside: what the red-team review found, through the real binary.
@Suite struct RedTeamStdioTests {
  /// A built package and a private `$TMPDIR`.
  func setUp(_ dir: TemporaryDirectory) throws -> (project: String, package: String, temporary: String) {
    let project = dir.appending("proj")
    #expect(try pkgtool(["init", project, "--product-id", "com.example.red"]).status == 0)
    let made = try runProcess(
      "/bin/sh", ["-c", #"head -c 2000000 /dev/urandom > "$0""#, project + "/Contents/big.bin"])
    #expect(made.status == 0)
    let package = dir.appending("x.pkg")
    #expect(try pkgtool(["build", project, "-o", package, "-q"]).status == 0)
    let temporary = dir.appending("tmp")
    try FileManager.default.createDirectory(atPath: temporary, withIntermediateDirectories: false)
    return (project, package, temporary)
  }

  func shell(_ script: String, _ arguments: [String] = [], environment: [String: String]? = nil) throws
    -> ProcessResult
  {
    try runProcess("/bin/sh", ["-c", script, pkgtoolBinary] + arguments, environment: environment)
  }

  /// `build -o - | true`: the reader is gone before the package is copied out. The command ends
  /// quietly (exit 0, as for any closed pipe) and its private folder in `$TMPDIR` goes with it
  /// (the EPIPE exit skipped the `defer` that removed it: a whole package was left in $TMPDIR).
  @Test func buildToAClosedPipeLeavesNoTemporary() throws {
    let dir = try TemporaryDirectory()
    let (project, _, temporary) = try setUp(dir)
    let built = try shell(
      #""$0" build "$1" -o - | true; echo "status=$?" >&2"#, [project], environment: ["TMPDIR": temporary])
    #expect(built.stderr.contains("status=0"), "\(built.stderr)")
    #expect(try FileManager.default.contentsOfDirectory(atPath: temporary) == [])
    let zip = try shell(
      #""$0" build "$1" -o - --format zip | true"#, [project], environment: ["TMPDIR": temporary])
    #expect(zip.status == 0, "\(zip.stderr)")
    #expect(try FileManager.default.contentsOfDirectory(atPath: temporary) == [])
  }

  /// Standard input that is a regular file already partly read is read from where it stands, as
  /// `cat` (and a pipe) would give it: the verdict does not depend on how the bytes arrive (it
  /// was read from offset 0 and called valid, while the same bytes through `cat` were not a
  /// package).
  @Test func standardInputReadFromWhereItStands() throws {
    let dir = try TemporaryDirectory()
    let (_, package, temporary) = try setUp(dir)
    let environment = ["TMPDIR": temporary]
    let redirected = try shell(
      #"{ dd bs=100 count=1 of=/dev/null 2>/dev/null; "$0" validate - --json; } < "$1""#, [package],
      environment: environment)
    let piped = try shell(#"tail -c +101 "$1" | "$0" validate - --json"#, [package], environment: environment)
    #expect(piped.status == 1, "\(piped.stdout)")
    #expect(redirected.status == piped.status, "\(redirected.stdout)")
    #expect(redirected.stdout == piped.stdout)
    // From its start it is the file itself, valid.
    #expect(try shell(#""$0" validate - < "$1""#, [package]).status == 0)
    #expect(try FileManager.default.contentsOfDirectory(atPath: temporary) == [])
  }

  /// `-` on a terminal is refused at once, one line naming it (it waited for typed bytes).
  @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/script"), "util-linux script is missing"))
  func standardInputOnATerminal() throws {
    for command in ["validate -", "info -", "unpack - -o out", "cat - ContentInfo.plist"] {
      let dir = try TemporaryDirectory()
      let shown = try runProcess(
        "/usr/bin/env",
        [
          "-u", "CI", "script", "-qec",
          "cd '\(dir.path)' && timeout --foreground 20 '\(pkgtoolBinary)' \(command); echo status=$?", "/dev/null",
        ]
      ).stdout
      #expect(shown.contains("(standard input) is a terminal"), "\(command): \(shown.debugDescription)")
      #expect(shown.contains("status=2"), "\(command): \(shown.debugDescription)")
      #expect(!FileManager.default.fileExists(atPath: dir.appending("out")))
    }
  }
}

/// `unpack --keep-going` on a cut-off download, attacked from outside.
@Suite struct RedTeamRecoverTests {
  /// A link whose target was skipped (its data lies past the cut) is skipped too, with that
  /// reason: it dangled in the folder although the package holds its target. A link to a file
  /// that was written is still created.
  @Test func linkToASkippedEntryIsSkipped() throws {
    let dir = try TemporaryDirectory()
    let project = dir.appending("proj")
    #expect(try pkgtool(["init", project, "--product-id", "com.example.red"]).status == 0)
    let made = try runProcess(
      "/bin/sh",
      [
        "-c",
        #"cd "$0/Contents" && head -c 2000000 /dev/urandom > big.bin && echo hi > a.txt && ln -s big.bin to-big && mkdir d && ln -s ../to-big d/chain && ln -s a.txt to-small"#,
        project,
      ])
    #expect(made.status == 0)
    let package = dir.appending("x.pkg")
    #expect(try pkgtool(["build", project, "-o", package, "-q"]).status == 0)
    let bytes = try readFile(package)
    let cut = dir.appending("cut.pkg")
    try Data(bytes.prefix(bytes.count / 2)).write(to: URL(fileURLWithPath: cut))
    let out = dir.appending("out")
    let unpacked = try pkgtool(["unpack", "--keep-going", cut, "-o", out, "--json"])
    #expect(unpacked.status == 1, "\(unpacked.stderr)")
    struct Summary: Decodable {
      struct Skipped: Decodable {
        var path: String
        var reason: String
      }
      var skipped: [Skipped]
    }
    let summary = try JSONDecoder().decode(Summary.self, from: Data(unpacked.stdout.utf8))
    let reasons = Dictionary(summary.skipped.map { ($0.path, $0.reason) }, uniquingKeysWith: { a, _ in a })
    #expect(reasons["Contents/big.bin"] != nil, "\(reasons)")
    for link in ["Contents/to-big", "Contents/d/chain"] {
      #expect(reasons[link]?.contains("'Contents/big.bin' was skipped") == true, "\(link): \(reasons)")
      #expect((try? FileManager.default.destinationOfSymbolicLink(atPath: out + "/" + link)) == nil, "\(link)")
    }
    #expect(reasons["Contents/to-small"] == nil, "\(reasons)")
    #expect(try FileManager.default.destinationOfSymbolicLink(atPath: out + "/Contents/to-small") == "a.txt")
  }
}

/// `export background-assets` attacked from outside.
@Suite struct RedTeamExportTests {
  /// A link to a junk file is a file of the package: it is copied from the junk before the junk
  /// goes (the junk was removed first, the link dangled and the export was refused with
  /// "an asset pack carries no links", for a package validate and unpack accept).
  @Test func linkToJunkIsCopied() throws {
    let dir = try TemporaryDirectory()
    let path = dir.appending("junk-link.pkg")
    let junk: [UInt8] = [0, 0, 0, 1, 0x42, 0x75, 0x64, 0x31]
    try Data(
      ExamplePackages.xarBytes(
        RuleExample.baseNodes + [
          .file("Contents/.DS_Store", bytes: junk), .symlink("Contents/ds", ".DS_Store"),
          RuleExample.Node("Contents/hl", .hardLink("Contents/.DS_Store")),
        ])
    ).write(to: URL(fileURLWithPath: path))
    #expect(try pkgtool(["validate", path]).status == 0)
    #expect(try pkgtool(["unpack", path, "-o", dir.appending("unpacked")]).status == 0)
    let out = dir.appending("Pack")
    let exported = try pkgtool(["export", "background-assets", path, "-o", out])
    #expect(exported.status == 0, "\(exported.stdout)\(exported.stderr)")
    #expect(try readFile(out + "/Contents/ds") == junk)
    #expect(try readFile(out + "/Contents/hl") == junk)
    #expect(!FileManager.default.fileExists(atPath: out + "/Contents/.DS_Store"))
    #expect(try pkgtool(["validate", out]).status == 0)
  }
}
