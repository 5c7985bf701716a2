import Foundation
import TestSupport
import Testing

/// Every option that takes a time reads it the same way (one parser: a number and s, m, h or d,
/// or seconds alone), and refuses a value out of its range before anything is done. A root
/// file is written whole and never over an existing one.
@Suite struct DurationAndRootFileTests {
  func keys(in dir: TemporaryDirectory) throws {
    for key in ["root-a", "c1"] {
      #expect(try pkgtool(["keygen", "-o", key + ".key", "-q"], in: dir.path).status == 0)
    }
  }

  func rootInit(_ dir: TemporaryDirectory, _ output: String, expires: String) throws -> ProcessResult {
    try pkgtool(
      [
        "root", "init", "-o", output, "--root-key", "root-a.key", "--catalog-key", "c1.key.pub", "--expires-in",
        expires,
      ],
      in: dir.path)
  }

  @Test func timesAreReadAlikeAndRangesAreChecked() throws {
    let dir = try TemporaryDirectory()
    try keys(in: dir)
    // Fractions and every unit: 1.5h is 5,400 s.
    let made = try rootInit(dir, "root-1.json", expires: "1.5h")
    #expect(made.status == 0, "\(made.stderr)")
    let root =
      try JSONSerialization.jsonObject(with: Data(try readFile(dir.appending("root-1.json")))) as? [String: Any]
    let signed = root?["signed"] as? [String: Any]
    #expect(signed?["expires"] != nil, "\(String(describing: root))")
    for (value, expected) in [
      ("2w", "'2w' is invalid for '--expires-in <duration>': not a duration"),
      ("0.5s", "'0.5s' is invalid for '--expires-in <duration>': not a time from 1s to 3650d"),
      ("3651d", "not a time from 1s to 3650d"), ("1e3s", "not a duration"),
      // A lifetime needs its unit: 30 alone is more likely 30 days meant than 30 seconds.
      ("30", "not a duration: a number and s, m, h or d (90s, 15m, 12h, 30d), from 1s to 3650d"),
    ] {
      let refused = try rootInit(dir, "root-x.json", expires: value)
      #expect(refused.status == 2, "\(value): \(refused.stderr)")
      #expect(refused.stderr.contains(expected), "\(value): \(refused.stderr)")
      #expect(!FileManager.default.fileExists(atPath: dir.appending("root-x.json")))
    }
    let install = try pkgtool(["install", "missing.pkg", "--into", "docs", "--lock-timeout", "2d"], in: dir.path)
    #expect(install.status == 2)
    #expect(
      install.stderr.contains("'2d' is invalid for '--lock-timeout <duration>': not a time from 0s to 1d"),
      "\(install.stderr)")
    // Seconds alone are taken where no unit is required: 0.3 waits 0.3 s.
    let quick = try pkgtool(["install", "missing.pkg", "--into", "docs", "--lock-timeout", "0.3"], in: dir.path)
    #expect(quick.status == 2 && quick.stderr.contains("missing.pkg"), "\(quick.stderr)")
  }

  @Test func aRootIsNeverWrittenOverAnExistingFile() throws {
    let dir = try TemporaryDirectory()
    try keys(in: dir)
    #expect(try rootInit(dir, "root-1.json", expires: "365d").status == 0)
    let before = try readFile(dir.appending("root-1.json"))
    let again = try rootInit(dir, "root-1.json", expires: "30d")
    #expect(again.status == 2, "\(again.stderr)")
    #expect(again.stderr.contains("'root-1.json' already exists"), "\(again.stderr)")
    #expect(try readFile(dir.appending("root-1.json")) == before)
    // A dangling symlink in the way is not followed: nothing is made at its target.
    #expect(symlink(dir.appending("elsewhere.json"), dir.appending("root-2.json")) == 0)
    let link = try rootInit(dir, "root-2.json", expires: "30d")
    #expect(link.status == 2 && link.stderr.contains("already exists"), "\(link.stderr)")
    #expect(!FileManager.default.fileExists(atPath: dir.appending("elsewhere.json")))
    let left = try FileManager.default.contentsOfDirectory(atPath: dir.path).sorted()
    #expect(left == ["c1.key", "c1.key.pub", "root-1.json", "root-2.json", "root-a.key", "root-a.key.pub"], "\(left)")
  }
}
