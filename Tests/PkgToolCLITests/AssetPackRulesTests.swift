import Foundation
import HostedContent
import TestSupport
import Testing

/// The asset-pack rules through the real binary, on folders and on `.aar` archives crafted by
/// hand: the pack ID without dots (and export's derived default), the 2.x manifest form
/// (sourceRoot, fileSource/fileDestination) next to 1.x, platforms named once, the size Apple
/// allows, and stale packaging output left in the folder.
@Suite struct AssetPackRulesTests {
  /// A manifest with `rest` after the ID and the policy.
  static func manifest(id: String = "levels", _ rest: String) -> String {
    #"{"assetPackID": "\#(id)", "downloadPolicy": {"onDemand": {}}, \#(rest)}"#
  }
  static let v1 = #""fileSelectors": [{"directory": "Contents"}], "platforms": ["iOS"]"#

  /// An asset-pack folder holding `Contents/a.txt` and `manifest`.
  func folder(_ dir: TemporaryDirectory, _ name: String, manifest: String, extra: [(String, [UInt8])] = [])
    throws -> String
  {
    let pack = dir.appending(name)
    try writeFile(pack + "/Contents/a.txt", "a\n")
    for (path, bytes) in extra { try writeFile(pack + "/" + path, bytes) }
    try writeFile(pack + "/Manifest.json", manifest)
    return pack
  }

  /// An `.aar` holding the root, `manifest`, `Contents/`, `Contents/a.txt` and `extra` entries.
  func archive(_ dir: TemporaryDirectory, _ name: String, manifest: String, extra: [[UInt8]] = []) throws -> String {
    let path = dir.appending(name)
    let bytes =
      CraftedAAR.folder("") + CraftedAAR.file("Manifest.json", manifest) + CraftedAAR.folder("Contents")
      + CraftedAAR.file("Contents/a.txt", "a\n") + extra.flatMap { $0 }
    try writeFile(path, bytes)
    return path
  }

  /// Both a folder and an `.aar` with `manifest` are refused by `rule`, with `text` in the message.
  func expectRefused(_ manifest: String, by rule: String, saying text: String) throws {
    let dir = try TemporaryDirectory()
    for path in [try folder(dir, "Pack", manifest: manifest), try archive(dir, "Pack.aar", manifest: manifest)] {
      let result = try pkgtool(["validate", path])
      #expect(result.status == 1, "\(path): \(result.stdout)")
      #expect(result.stdout.contains("[\(rule)]"), "\(path): \(result.stdout)")
      #expect(result.stdout.contains(text), "\(path): \(result.stdout)")
    }
  }

  /// A dot in the pack ID is refused (App Store Connect refuses it), in folders, archives and
  /// --asset-pack-id; the same manifest with '-' passes.
  @Test func dottedPackIDIsRefused() throws {
    try expectRefused(
      Self.manifest(id: "com.example.book", Self.v1), by: "asset-pack-manifest",
      saying: "App Store Connect refuses dots")
    let dir = try TemporaryDirectory()
    let good = try folder(dir, "Good", manifest: Self.manifest(id: "com-example-book", Self.v1))
    let passed = try pkgtool(["validate", good])
    #expect(passed.status == 0, "\(passed.stdout)")
    let project = dir.appending("Book")
    #expect(try pkgtool(["init", project, "--product-id", "com.example.book", "-q"]).status == 0)
    let explicit = try pkgtool([
      "export", "background-assets", project, "-o", dir.appending("P"), "--asset-pack-id", "com.example.book",
    ])
    #expect(explicit.status != 0, "\(explicit.stdout)\(explicit.stderr)")
    #expect(explicit.stderr.contains("refuses dots"), "\(explicit.stderr)")
    #expect(!FileManager.default.fileExists(atPath: dir.appending("P")))
  }

  /// Export's default ID is the product identifier with '.' made '-', in a folder and a `.aar`,
  /// and both validate.
  @Test func exportDerivesAnIDWithoutDots() throws {
    let dir = try TemporaryDirectory()
    let project = dir.appending("Book")
    #expect(try pkgtool(["init", project, "--product-id", "com.example.book", "-q"]).status == 0)
    let out = dir.appending("Pack")
    let exported = try pkgtool(["export", "background-assets", project, "-o", out])
    #expect(exported.status == 0, "\(exported.stdout)\(exported.stderr)")
    #expect(exported.stdout.contains("exported com-example-book "), "\(exported.stdout)")
    let manifest =
      try JSONSerialization.jsonObject(with: Data(readFile(out + "/Manifest.json"))) as? [String: Any]
    #expect(manifest?["assetPackID"] as? String == "com-example-book")
    #expect(try pkgtool(["validate", out]).status == 0)
    let aar = dir.appending("Pack.aar")
    let archived = try pkgtool(["export", "background-assets", project, "-o", aar, "--json"])
    #expect(archived.status == 0, "\(archived.stdout)\(archived.stderr)")
    #expect(archived.stdout.contains("\"assetPackID\" : \"com-example-book\""), "\(archived.stdout)")
    #expect(try pkgtool(["validate", aar]).status == 0)
    let help = try pkgtool(["export", "background-assets", "--help"])
    #expect(help.stdout.contains("com-example-book"), "\(help.stdout)")
  }

  /// --manifest-format 2 writes the 2.x form (sourceRoot ".", Contents to Contents), which
  /// validates as a folder and as a `.aar`; 1 stays the default; 3 is refused.
  @Test func exportWritesTheSecondForm() throws {
    let dir = try TemporaryDirectory()
    let project = dir.appending("Book")
    #expect(try pkgtool(["init", project, "--product-id", "com.example.book", "-q"]).status == 0)
    try writeFile(project + "/Contents/levels/1.json", "{}")
    let out = dir.appending("Pack2")
    let exported = try pkgtool(["export", "background-assets", project, "-o", out, "--manifest-format", "2"])
    #expect(exported.status == 0, "\(exported.stdout)\(exported.stderr)")
    let manifest =
      try JSONSerialization.jsonObject(with: Data(readFile(out + "/Manifest.json"))) as? [String: Any]
    #expect(manifest?["sourceRoot"] as? String == ".")
    #expect(
      (manifest?["fileSelectors"] as? [[String: String]]) == [
        ["fileSource": "Contents", "fileDestination": "Contents"]
      ])
    #expect(try pkgtool(["validate", out]).status == 0)
    let aar = dir.appending("Pack2.aar")
    #expect(
      try pkgtool(["export", "background-assets", project, "-o", aar, "--manifest-format", "2", "-q"]).status == 0)
    let validated = try pkgtool(["validate", aar])
    #expect(validated.status == 0, "\(validated.stdout)")
    let first = dir.appending("Pack1")
    #expect(try pkgtool(["export", "background-assets", project, "-o", first, "-q"]).status == 0)
    let v1 = try JSONSerialization.jsonObject(with: Data(readFile(first + "/Manifest.json"))) as? [String: Any]
    #expect((v1?["fileSelectors"] as? [[String: String]]) == [["directory": "Contents"]])
    #expect(v1?["sourceRoot"] == nil)
    let bad = try pkgtool(["export", "background-assets", project, "-o", dir.appending("P3"), "--manifest-format", "3"])
    #expect(bad.status != 0)
  }

  /// A 2.x manifest is read and resolved: sourceRoot and fileSource inside the folder pass; an
  /// absolute or escaping sourceRoot, an escaping or absolute fileDestination, two selectors
  /// writing one destination, and a mix of 1.x and 2.x selectors are refused.
  @Test func secondFormIsResolved() throws {
    let dir = try TemporaryDirectory()
    let good = try folder(
      dir, "Good",
      manifest: Self.manifest(
        #""sourceRoot": ".", "language": "ja", "fileSelectors": [{"fileSource": "Contents", "fileDestination": "Data"}], "platforms": ["iOS"]"#
      ))
    let passed = try pkgtool(["validate", good])
    #expect(passed.status == 0, "\(passed.stdout)")
    let nested = try folder(
      dir, "Nested",
      manifest: Self.manifest(
        #""sourceRoot": "Contents", "fileSelectors": [{"fileSource": "a.txt", "fileDestination": "a.txt"}], "platforms": ["iOS"]"#
      ))
    #expect(try pkgtool(["validate", nested]).status == 0)

    let selector = #"[{"fileSource": "Contents", "fileDestination": "Contents"}]"#
    try expectRefused(
      Self.manifest(#""sourceRoot": "/tmp", "fileSelectors": \#(selector), "platforms": ["iOS"]"#),
      by: "asset-pack-files", saying: "is absolute")
    try expectRefused(
      Self.manifest(#""sourceRoot": "../..", "fileSelectors": \#(selector), "platforms": ["iOS"]"#),
      by: "asset-pack-files", saying: "holds '..'")
    try expectRefused(
      Self.manifest(
        #""sourceRoot": ".", "fileSelectors": [{"fileSource": "Contents", "fileDestination": "../out"}], "platforms": ["iOS"]"#
      ), by: "asset-pack-files", saying: "would leave the pack")
    try expectRefused(
      Self.manifest(
        #""sourceRoot": ".", "fileSelectors": [{"fileSource": "Contents", "fileDestination": "/abs"}], "platforms": ["iOS"]"#
      ), by: "asset-pack-files", saying: "is absolute")
    try expectRefused(
      Self.manifest(
        #""sourceRoot": ".", "fileSelectors": [{"fileSource": "Contents", "fileDestination": "D"}, {"fileSource": "Contents/a.txt", "fileDestination": "D"}], "platforms": ["iOS"]"#
      ), by: "asset-pack-files", saying: "both write 'D'")
    try expectRefused(
      Self.manifest(
        #""sourceRoot": ".", "fileSelectors": [{"directory": "Contents"}, {"fileSource": "Contents", "fileDestination": "C"}], "platforms": ["iOS"]"#
      ), by: "asset-pack-manifest", saying: "mixes the 1.x form")
    try expectRefused(
      Self.manifest(#""fileSelectors": \#(selector), "platforms": ["iOS"]"#), by: "asset-pack-manifest",
      saying: "needs a sourceRoot")
    try expectRefused(
      Self.manifest(#""sourceRoot": ".", "fileSelectors": [{"directory": "Contents"}], "platforms": ["iOS"]"#),
      by: "asset-pack-manifest", saying: "sourceRoot belongs to the 2.x form")
  }

  /// watchOS and a platform named twice are refused.
  @Test func platformsAreKnownAndNamedOnce() throws {
    try expectRefused(
      Self.manifest(#""fileSelectors": [{"directory": "Contents"}], "platforms": ["iOS", "tvOS", "iOS"]"#),
      by: "asset-pack-manifest", saying: "lists 'iOS' twice")
    try expectRefused(
      Self.manifest(#""fileSelectors": [{"directory": "Contents"}], "platforms": ["watchOS"]"#),
      by: "asset-pack-manifest", saying: "watchOS")
  }

  /// An old archive or a manifest copy inside the pack is a warning (an error with --strict), in
  /// a folder and in a `.aar`.
  @Test func staleOutputIsReported() throws {
    let dir = try TemporaryDirectory()
    let pack = try folder(
      dir, "Pack", manifest: Self.manifest(Self.v1),
      extra: [
        ("Contents/Pack.aar", Array("AA01".utf8) + [0, 0, 0, 0]),
        ("Contents/Manifest copy.json", Array(Self.manifest(Self.v1).utf8)),
        ("Contents/levels/manifest.json", Array(#"{"levels": 3}"#.utf8)),
      ])
    let result = try pkgtool(["validate", pack])
    #expect(result.status == 0, "\(result.stdout)")
    #expect(result.stdout.contains("[asset-pack-stale-output]"), "\(result.stdout)")
    #expect(result.stdout.contains("Contents/Pack.aar"), "\(result.stdout)")
    #expect(result.stdout.contains("Contents/Manifest copy.json"), "\(result.stdout)")
    // A level list that happens to be called manifest.json is content, not a stale manifest.
    #expect(!result.stdout.contains("Contents/levels/manifest.json"), "\(result.stdout)")
    #expect(try pkgtool(["validate", pack, "--strict"]).status == 1)
    let aar = try archive(
      dir, "Pack.aar", manifest: Self.manifest(Self.v1), extra: [CraftedAAR.file("Contents/old.bin", "YAA1....")])
    let fromArchive = try pkgtool(["validate", aar])
    #expect(fromArchive.status == 0, "\(fromArchive.stdout)")
    #expect(fromArchive.stdout.contains("[asset-pack-stale-output]"), "\(fromArchive.stdout)")
    let clean = try pkgtool(["validate", try folder(dir, "Clean", manifest: Self.manifest(Self.v1))])
    #expect(!clean.stdout.contains("[asset-pack-stale-output]"), "\(clean.stdout)")
  }

  /// A file declaring more than 200 GB (a sparse file: nothing is written) is over the total App
  /// Store Connect allows for an app's asset packs.
  @Test func declaredSizeOverAppleTotal() throws {
    let dir = try TemporaryDirectory()
    let pack = try folder(dir, "Big", manifest: Self.manifest(Self.v1))
    let path = pack + "/Contents/huge.bin"
    #expect(FileManager.default.createFile(atPath: path, contents: nil))
    let handle = try #require(FileHandle(forWritingAtPath: path))
    try handle.truncate(atOffset: 200_000_000_001)
    try handle.close()
    // Reading stops at --max-size (size-limit's error); the declared size is known from the
    // start. The text report leads with the error, so the JSON report is read.
    let result = try pkgtool(["validate", pack, "--max-size", "1000000", "--json"])
    #expect(result.stdout.contains("\"asset-pack-size\""), "\(result.stdout)")
    #expect(result.stdout.contains("declare 200,000,000,00"), "\(result.stdout)")
    let smallPack = try folder(dir, "Small", manifest: Self.manifest(Self.v1))
    let small = try pkgtool(["validate", smallPack])
    #expect(small.status == 0 && !small.stdout.contains("[asset-pack-size]"), "\(small.stdout)")
    // The room the app's other packs leave: a warning past it, an error with --strict.
    let tight = try pkgtool(["validate", smallPack, "--asset-pack-room", "1", "--strict"])
    #expect(tight.status == 1, "\(tight.stdout)")
    #expect(tight.stdout.contains("[asset-pack-size]") && tight.stdout.contains("--asset-pack-room"), "\(tight.stdout)")
  }
}
