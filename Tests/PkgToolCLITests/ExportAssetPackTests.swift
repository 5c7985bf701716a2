import Foundation
import HostedContent
import TestSupport
import Testing

/// `export background-assets` through the real binary: hard links become copies, junk is left
/// out and said so, a malformed Manifest.json is reported by line and column (checked against
/// Python's json module), and the asset-pack reading of no-executable (Apple: CPU and GPU
/// executables yes, macOS executables no) while packages keep the whole rule.
@Suite struct ExportAssetPackTests {
  func package(_ dir: TemporaryDirectory, _ name: String, _ extra: [RuleExample.Node]) throws -> String {
    let path = dir.appending(name)
    try Data(ExamplePackages.xarBytes(RuleExample.baseNodes + extra)).write(to: URL(fileURLWithPath: path))
    return path
  }

  /// A package with a hard link passes validate and unpack; export copies the file's bytes into
  /// both names (the exported pack validates), and counts the copy against --max-size.
  @Test func hardLinksAreCopied() throws {
    let dir = try TemporaryDirectory()
    let body = String(repeating: "level data\n", count: 100)
    let pkg = try package(
      dir, "linked.pkg",
      [
        .file("Contents/levels/1.json", body),
        RuleExample.Node("Contents/levels/copy.json", .hardLink("Contents/levels/1.json")),
      ])
    #expect(try pkgtool(["validate", pkg]).status == 0)
    #expect(try pkgtool(["unpack", pkg, "-o", dir.appending("unpacked")]).status == 0)
    let out = dir.appending("Pack")
    let exported = try pkgtool(["export", "background-assets", pkg, "-o", out])
    #expect(exported.status == 0, "\(exported.stdout)\(exported.stderr)")
    #expect(
      exported.stdout.contains("copied: Contents/levels/copy.json (a hard link in the package)"), "\(exported.stdout)")
    #expect(try String(contentsOfFile: out + "/Contents/levels/copy.json", encoding: .utf8) == body)
    let a = try FileManager.default.attributesOfItem(atPath: out + "/Contents/levels/copy.json")
    #expect((a[.referenceCount] as? Int) == 1)
    #expect(try pkgtool(["validate", out]).status == 0)
    // The copy counts: the content is 1,100 bytes plus the plist, twice over with the copy.
    let limited = try pkgtool(["export", "background-assets", pkg, "-o", dir.appending("Small"), "--max-size", "1500"])
    #expect(limited.status == 1, "\(limited.stdout)\(limited.stderr)")
    #expect(limited.stdout.contains("[size-limit]"), "\(limited.stdout)")
    #expect(!FileManager.default.fileExists(atPath: dir.appending("Small")))
  }

  /// Junk in the package stays out of the asset pack, and the output says so.
  @Test func junkIsLeftOut() throws {
    let dir = try TemporaryDirectory()
    let pkg = try package(
      dir, "junk.pkg",
      [.file("Contents/.DS_Store", bytes: [0, 0, 0, 1, 0x42, 0x75, 0x64, 0x31]), .file("Contents/a/Thumbs.db", "x")])
    let out = dir.appending("Pack")
    let exported = try pkgtool(["export", "background-assets", pkg, "-o", out])
    #expect(exported.status == 0, "\(exported.stdout)\(exported.stderr)")
    #expect(exported.stdout.contains("left out: Contents/.DS_Store (junk)"), "\(exported.stdout)")
    #expect(exported.stdout.contains("left out: Contents/a/Thumbs.db (junk)"), "\(exported.stdout)")
    #expect(!FileManager.default.fileExists(atPath: out + "/Contents/.DS_Store"))
    #expect(!FileManager.default.fileExists(atPath: out + "/Contents/a/Thumbs.db"))
    let json = try pkgtool(["export", "background-assets", pkg, "-o", dir.appending("Pack2"), "--json"])
    let summary = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any]
    #expect((summary?["leftOutJunk"] as? [String])?.count == 2)
    let check = try pkgtool(["validate", out])
    #expect(check.status == 0 && !check.stdout.contains("junk"), "\(check.stdout)")
  }

  /// A malformed Manifest.json: "Manifest.json line L, column C", the same place Python's json
  /// module names; a number with a fraction and a value of the wrong type name their key path.
  @Test func malformedManifestNamesLineAndColumn() throws {
    let manifests = [
      "{\"assetPackID\": \"x\",\n  \"downloadPolicy\": {\"onDemand\": {}},\n  \"platforms\": [\"iOS\"] x}",
      "{\n  \"assetPackID\": \"caf\u{E9}\" \"y\"\n}",
      "{\"assetPackID\": \"x\",\n \"fileSelectors\": [\n",
      "{\"assetPackID\": \"x\",, \"y\": 1}",
    ]
    for manifest in manifests {
      let dir = try TemporaryDirectory()
      let pack = dir.appending("Pack")
      try writeFile(pack + "/Contents/a.txt", "a")
      try writeFile(pack + "/Manifest.json", manifest)
      let python = try runProcess(
        "/usr/bin/env",
        [
          "python3", "-c",
          "import json,sys\ntry:\n json.load(open(sys.argv[1], encoding='utf-8'))\nexcept json.JSONDecodeError as e:\n print(e.lineno, e.colno)",
          pack + "/Manifest.json",
        ])
      let position = python.stdout.split(separator: " ").map {
        String($0.trimmingCharacters(in: .whitespacesAndNewlines))
      }
      #expect(position.count == 2, "\(python.stdout)\(python.stderr)")
      let result = try pkgtool(["validate", pack])
      #expect(result.status == 1)
      let line = "Manifest.json line \(position.first ?? "?"), column \(position.last ?? "?"):"
      #expect(result.stdout.contains(line), "python: \(python.stdout) ours: \(result.stdout)")
      #expect(!result.stdout.contains("DecodingError") && !result.stdout.contains("Context("), "\(result.stdout)")
    }
    let dir = try TemporaryDirectory()
    let pack = dir.appending("Pack")
    try writeFile(pack + "/Contents/a.txt", "a")
    try writeFile(
      pack + "/Manifest.json",
      #"{"assetPackID": "x", "downloadPolicy": {"essential": {"installationEventTypes": "firstInstallation"}}, "fileSelectors": [{"directory": "Contents"}], "platforms": ["iOS"]}"#
    )
    var result = try pkgtool(["validate", pack])
    #expect(result.stdout.contains("downloadPolicy.essential.installationEventTypes must be"), "\(result.stdout)")
    try writeFile(
      pack + "/Manifest.json",
      #"{"assetPackID": "x", "downloadPolicy": {"essential": {"installationEventTypes": ["firstInstallation"]}}, "fileSelectors": [{"directory": "Contents"}], "platforms": ["iOS", 1.5]}"#
    )
    result = try pkgtool(["validate", pack])
    #expect(result.stdout.contains("Manifest.json: platforms[1] is a number"), "\(result.stdout)")
    // A name twice: Foundation reads the first, Python (and others) the last; refused.
    try writeFile(
      pack + "/Manifest.json",
      #"{"assetPackID": "x", "assetPackID": "y", "downloadPolicy": {"onDemand": {}}, "fileSelectors": [{"directory": "Contents"}], "platforms": ["iOS"]}"#
    )
    result = try pkgtool(["validate", pack])
    #expect(result.status == 1, "\(result.stdout)")
    #expect(result.stdout.contains("the member name \"assetPackID\" appears twice"), "\(result.stdout)")
  }

  /// A thin 64-bit Mach-O with one LC_BUILD_VERSION naming `platform`.
  func machO(platform: UInt32) -> [UInt8] {
    func le(_ v: UInt32) -> [UInt8] { [UInt8(v & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v >> 16 & 0xFF), UInt8(v >> 24)] }
    let command = le(0x32) + le(24) + le(platform) + le(0x000E_0000) + le(0x000E_0000) + le(0)
    return le(0xFEED_FACF) + le(0x0100_000C) + le(0) + le(2) + le(1) + le(UInt32(command.count)) + le(0) + le(0)
      + command
  }

  /// Apple's "Creating managed asset packs": an asset pack may include CPU and GPU executables, but
  /// not macOS executables. An asset-pack folder with iOS code or an ELF file passes; macOS code,
  /// or Mach-O with no platform, does not. A package keeps the whole rule.
  @Test func assetPackExecutablesFollowApple() throws {
    let cases: [(name: String, bytes: [UInt8], refused: Bool)] = [
      ("ios.dylib", machO(platform: 2), false),
      ("vision.bin", machO(platform: 11), false),
      ("mac.bin", machO(platform: 1), true),
      ("catalyst.bin", machO(platform: 6), true),
      ("simulator.bin", machO(platform: 7), true),
      ("noplatform.bin", Array(machO(platform: 2).prefix(32)), true),
      ("kernel.elf", [0x7F, 0x45, 0x4C, 0x46, 2, 1, 1, 0], false),
    ]
    for c in cases {
      let dir = try TemporaryDirectory()
      let pack = dir.appending("Pack")
      try writeFile(pack + "/Contents/" + c.name, c.bytes)
      try writeFile(
        pack + "/Manifest.json",
        #"{"assetPackID": "x", "downloadPolicy": {"onDemand": {}}, "fileSelectors": [{"directory": "Contents"}], "platforms": ["iOS"]}"#
      )
      let result = try pkgtool(["validate", pack])
      #expect(result.stdout.contains("[no-executable]") == c.refused, "\(c.name): \(result.stdout)")
      #expect(result.status == (c.refused ? 1 : 0), "\(c.name): \(result.stdout)")
      let pkg = try package(dir, "p.pkg", [.file("Contents/" + c.name, bytes: c.bytes)])
      let asPackage = try pkgtool(["validate", pkg])
      #expect(asPackage.status == 1 && asPackage.stdout.contains("[no-executable]"), "\(c.name): \(asPackage.stdout)")
    }
  }
}
