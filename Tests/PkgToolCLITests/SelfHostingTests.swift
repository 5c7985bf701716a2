import Foundation
import HostedContent
import TestSupport
import Testing

/// keygen → publish → install/unpack with a signed catalog, through the real binary, and the
/// catalog checked by an independent Ed25519 implementation (Python's cryptography).
@Suite struct SignedCatalogTests {
  struct Setup {
    let dir: TemporaryDirectory
    /// com.example.book 1.0 and 1.1.
    let packages: [String]
  }

  func setup() throws -> Setup {
    let dir = try TemporaryDirectory()
    try makeTwoBookPackages(in: dir)
    try FileManager.default.createDirectory(atPath: dir.appending("docs"), withIntermediateDirectories: true)
    let keygen = try pkgtool(["keygen", "-o", "signing.key"], in: dir.path)
    #expect(keygen.status == 0, "\(keygen.stderr)")
    return Setup(dir: dir, packages: ["book 1.0.pkg", "book 1.1.pkg"])
  }

  func publish(_ s: Setup, _ packages: [String], extra: [String] = []) throws -> ProcessResult {
    try pkgtool(
      ["publish"] + packages + [
        "--key", "signing.key", "--base-url", "https://cdn.example.com/content/", "-o", "catalog.json",
      ] + extra, in: s.dir.path)
  }

  func crosscheck(_ arguments: [String], in dir: TemporaryDirectory) throws -> ProcessResult {
    try runProcess(
      "/usr/bin/env", ["python3", repositoryRoot + "/scripts/catalog-crosscheck.py"] + arguments, in: dir.path)
  }

  @Test func theKeyIsPrivateAndNeverPrinted() throws {
    let s = try setup()
    var info = stat()
    #expect(stat(s.dir.appending("signing.key"), &info) == 0)
    #expect(info.st_mode & 0o777 == 0o600)
    let secret = String(decoding: try readFile(s.dir.appending("signing.key")), as: UTF8.self).trimmingCharacters(
      in: .whitespacesAndNewlines)
    let again = try pkgtool(["keygen", "-o", "signing.key"], in: s.dir.path)
    #expect(again.status == 2)
    #expect(!again.stdout.contains(secret) && !again.stderr.contains(secret))
    let published = try publish(s, s.packages)
    #expect(!published.stdout.contains(secret))
    #expect(!String(decoding: try readFile(s.dir.appending("catalog.json")), as: UTF8.self).contains(secret))
  }

  @Test func aRoundTripVerifiedByAnIndependentEd25519() throws {
    let s = try setup()
    let first = try publish(s, [s.packages[0]], extra: ["--min-app-version", "2.0 \"é\" \\ beta"])
    #expect(first.status == 0, "\(first.stdout)\(first.stderr)")
    let second = try publish(s, [s.packages[1]])
    #expect(second.status == 0, "\(second.stdout)\(second.stderr)")
    let text = String(decoding: try readFile(s.dir.appending("catalog.json")), as: UTF8.self)
    #expect(text.contains(#""url" : "https://cdn.example.com/content/book%201.1.pkg""#))
    #expect(text.contains(#""sequence" : 2"#))
    // Python's cryptography verifies pkgtool's signature over the canonical JSON…
    let verified = try crosscheck(["verify", "catalog.json", "signing.key.pub"], in: s.dir)
    #expect(verified.status == 0, "\(verified.stdout)\(verified.stderr)")
    // …and pkgtool accepts a catalog Python signed with a key Python made.
    #expect(try crosscheck(["resign", "catalog.json", "python.key", "7"], in: s.dir).status == 0)
    let installed = try pkgtool(
      ["install", s.packages[1], "--into", "docs", "--catalog", "catalog.json", "--public-key", "python.key.pub"],
      in: s.dir.path)
    #expect(installed.status == 0, "\(installed.stdout)\(installed.stderr)")
    #expect(try trustRecordHighest("catalogSequence", in: s.dir.appending("docs")) == 7)
  }

  @Test func publishingAgainKeepsOldEntriesInAStableOrder() throws {
    let s = try setup()
    #expect(try publish(s, [s.packages[1]]).status == 0)
    #expect(try publish(s, [s.packages[0]]).status == 0)
    let catalog = try CatalogFile.verify(
      contentsOf: s.dir.appending("catalog.json"),
      publicKey: try CatalogPublicKey(contentsOf: s.dir.appending("signing.key.pub")))
    #expect(catalog.products.map(\.productIdentifier) == ["com.example.book"])
    #expect(catalog.products[0].versions.map(\.contentVersion) == ["1.0", "1.1"])
    #expect(catalog.sequence == 2)
    // The same packages again: nothing new, the file is left as it is.
    let before = try readFile(s.dir.appending("catalog.json"))
    let again = try publish(s, s.packages)
    #expect(again.status == 0)
    #expect(again.stdout.contains("nothing written"))
    #expect(try readFile(s.dir.appending("catalog.json")) == before)
    // The same version from other bytes is refused, and the catalog stays.
    try writeFile(s.dir.appending("Book/Contents/chapter2.txt"), "Another end.\n")
    #expect(try pkgtool(["build", "Book", "-q", "-o", "other 1.1.pkg"], in: s.dir.path).status == 0)
    let conflict = try publish(s, ["other 1.1.pkg"])
    #expect(conflict.status == 2)
    #expect(conflict.stderr.contains("already published from other bytes"))
    #expect(try readFile(s.dir.appending("catalog.json")) == before)
  }

  @Test func publishRefusesAnInvalidPackageAndWritesNothing() throws {
    let s = try setup()
    let bad = try ExamplePackages.package(for: NoExecutableRule.description.triggering[0], in: s.dir.path)
    let result = try publish(s, [s.packages[0], bad])
    #expect(result.status == 1)
    #expect(result.stdout.contains("[no-executable]"))
    #expect(!FileManager.default.fileExists(atPath: s.dir.appending("catalog.json")))
  }

  @Test func aTamperedPackageIsRefusedByInstallAndUnpack() throws {
    let s = try setup()
    #expect(try publish(s, s.packages).status == 0)
    var bytes = try readFile(s.dir.appending(s.packages[1]))
    bytes[bytes.count - 1] ^= 0x01
    try writeFile(s.dir.appending("tampered.pkg"), bytes)
    let install = try pkgtool(
      ["install", "tampered.pkg", "--into", "docs", "--catalog", "catalog.json", "--public-key", "signing.key.pub"],
      in: s.dir.path)
    #expect(install.status == 1)
    #expect(install.stderr.contains("is not in the catalog"))
    #expect(try FileManager.default.contentsOfDirectory(atPath: s.dir.appending("docs")).isEmpty)
    let unpack = try pkgtool(
      ["unpack", "tampered.pkg", "-o", "out", "--catalog", "catalog.json", "--public-key", "signing.key.pub"],
      in: s.dir.path)
    #expect(unpack.status == 1)
    #expect(!FileManager.default.fileExists(atPath: s.dir.appending("out")))
    // A genuine package listed under another version is refused too.
    let renamed = try pkgtool(
      ["unpack", s.packages[0], "-o", "ok", "--catalog", "catalog.json", "--public-key", "signing.key.pub"],
      in: s.dir.path)
    #expect(renamed.status == 0, "\(renamed.stderr)")
  }

  @Test func aTamperedCatalogOrAnotherKeyIsRefused() throws {
    let s = try setup()
    #expect(try publish(s, s.packages).status == 0)
    let original = String(decoding: try readFile(s.dir.appending("catalog.json")), as: UTF8.self)
    try writeFile(
      s.dir.appending("edited.json"),
      original.replacingOccurrences(of: "https://cdn.example.com", with: "https://evil.example.com"))
    let edited = try pkgtool(
      ["install", s.packages[1], "--into", "docs", "--catalog", "edited.json", "--public-key", "signing.key.pub"],
      in: s.dir.path)
    #expect(edited.status == 1)
    #expect(edited.stderr.contains("does not verify"))
    #expect(try crosscheck(["verify", "edited.json", "signing.key.pub"], in: s.dir).status == 1)
    #expect(try pkgtool(["keygen", "-o", "other.key", "-q"], in: s.dir.path).status == 0)
    let wrongKey = try pkgtool(
      ["install", s.packages[1], "--into", "docs", "--catalog", "catalog.json", "--public-key", "other.key.pub"],
      in: s.dir.path)
    #expect(wrongKey.status == 1)
    #expect(wrongKey.stderr.contains("carries no signature of key"))
    #expect(try FileManager.default.contentsOfDirectory(atPath: s.dir.appending("docs")).isEmpty)
    // Extending a catalog needs the key that signed it.
    let foreign = try pkgtool(
      ["publish", s.packages[0], "--key", "other.key", "--base-url", "https://x.example", "-o", "catalog.json"],
      in: s.dir.path)
    #expect(foreign.status == 2)
  }

  @Test func aReplayedOlderCatalogIsRefused() throws {
    let s = try setup()
    #expect(try publish(s, [s.packages[0]]).status == 0)
    try FileManager.default.copyItem(
      atPath: s.dir.appending("catalog.json"), toPath: s.dir.appending("old-catalog.json"))
    #expect(try publish(s, [s.packages[1]]).status == 0)
    let current = try pkgtool(
      ["install", s.packages[1], "--into", "docs", "--catalog", "catalog.json", "--public-key", "signing.key.pub"],
      in: s.dir.path)
    #expect(current.status == 0, "\(current.stderr)")
    // Sequence 1 after sequence 2 was used: refused, even with --allow-downgrade.
    let replay = try pkgtool(
      [
        "install", s.packages[0], "--into", "docs", "--catalog", "old-catalog.json", "--public-key", "signing.key.pub",
        "--allow-downgrade",
      ], in: s.dir.path)
    #expect(replay.status == 1)
    #expect(replay.stderr.contains("an old catalog replayed"))
    #expect(
      try pkgtool(
        [
          "install", s.packages[0], "--into", "docs", "--catalog", "catalog.json", "--public-key", "signing.key.pub",
          "--allow-downgrade",
        ], in: s.dir.path
      ).status == 0)
  }

  @Test func installFetchesAURLAndStopsPastTheCatalogSize() throws {
    let s = try setup()
    let server = try LoopbackHTTPServer(root: s.dir.path)
    defer { server.stop() }
    let base = "http://127.0.0.1:\(server.port)"
    #expect(
      try pkgtool(
        ["publish", s.packages[1], "--key", "signing.key", "--base-url", base, "-o", "catalog.json", "-q"],
        in: s.dir.path
      ).status == 0)
    let url = base + "/book%201.1.pkg"
    let installed = try pkgtool(
      ["install", url, "--into", "docs", "--catalog", "catalog.json", "--public-key", "signing.key.pub"], in: s.dir.path
    )
    #expect(installed.status == 0, "\(installed.stdout)\(installed.stderr)")
    #expect(try readFile(s.dir.appending("docs/com.example.book/current/chapter2.txt")) == Array("The end.\n".utf8))
    // The server now serves more bytes than the catalog says: the download stops there.
    var bigger = try readFile(s.dir.appending(s.packages[1]))
    bigger += Array(repeating: 0, count: 100_000)
    try writeFile(s.dir.appending(s.packages[1]), bigger)
    let oversized = try pkgtool(
      ["unpack", url, "-o", "out", "--catalog", "catalog.json", "--public-key", "signing.key.pub"], in: s.dir.path)
    #expect(oversized.status == 2)
    #expect(oversized.stderr.contains("larger than the"), "\(oversized.stderr)")
    #expect(!FileManager.default.fileExists(atPath: s.dir.appending("out")))
  }
}

/// Python's http.server on 127.0.0.1 and a free port, serving `root`. The port is bound first
/// (port 0) and written to a file the test waits for.
final class LoopbackHTTPServer {
  let process = Process()
  let port: Int
  private let scratch: TemporaryDirectory

  init(root: String) throws {
    scratch = try TemporaryDirectory()
    let portFile = scratch.appending("port")
    let script = """
      import http.server, socketserver, sys, os
      os.chdir(sys.argv[1])
      class Quiet(http.server.SimpleHTTPRequestHandler):
          def log_message(self, *args): pass
      with socketserver.TCPServer(("127.0.0.1", 0), Quiet) as server:
          with open(sys.argv[2] + ".tmp", "w") as f: f.write(str(server.server_address[1]))
          os.rename(sys.argv[2] + ".tmp", sys.argv[2])
          server.serve_forever()
      """
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = ["python3", "-c", script, root, portFile]
    process.standardOutput = FileHandle.nullDevice
    process.standardError = FileHandle.nullDevice
    try process.run()
    var found: Int?
    for _ in 0..<200 where found == nil {
      if let bytes = try? readFile(portFile) {
        found = Int(String(decoding: bytes, as: UTF8.self))
      } else {
        usleep(50_000)
      }
    }
    guard let found else {
      kill(process.processIdentifier, SIGKILL)
      process.waitUntilExit()
      throw TestFailure("the loopback HTTP server did not start")
    }
    port = found
  }

  /// SIGKILL: a child inherits the test runner's ignored signals, SIGTERM among them.
  func stop() {
    kill(process.processIdentifier, SIGKILL)
    process.waitUntilExit()
  }
}

/// export background-assets → validate, through the real binary.
@Suite struct BackgroundAssetsExportTests {
  @Test(arguments: ["book-chapter1", "book-chapter2", "level-pack"])
  func aFolderExportedFromEachSamplePassesValidate(sample: String) throws {
    let dir = try TemporaryDirectory()
    let fromProject = try pkgtool(
      ["export", "background-assets", repositoryRoot + "/samples/" + sample, "-o", "pack"], in: dir.path)
    #expect(fromProject.status == 0, "\(fromProject.stdout)\(fromProject.stderr)")
    let checked = try pkgtool(["validate", "pack", "--strict"], in: dir.path)
    #expect(checked.status == 0, "\(checked.stdout)")
    #expect(checked.stdout.contains("asset-pack folder (Background Assets)"))
    // The same through a built package, with the options.
    #expect(
      try pkgtool(["build", repositoryRoot + "/samples/" + sample, "-o", "s.pkg", "-q"], in: dir.path).status == 0)
    let fromPackage = try pkgtool(
      [
        "export", "background-assets", "s.pkg", "-o", "pack2", "--policy", "on-demand", "--platforms", "iOS,macOS",
        "--asset-pack-id", "Pack_2",
      ], in: dir.path)
    #expect(fromPackage.status == 0, "\(fromPackage.stdout)\(fromPackage.stderr)")
    #expect(try pkgtool(["validate", "pack2"], in: dir.path).status == 0)
    let manifest =
      try JSONSerialization.jsonObject(with: Data(try readFile(dir.appending("pack2/Manifest.json")))) as? [String: Any]
    #expect(manifest?["assetPackID"] as? String == "Pack_2")
    #expect((manifest?["downloadPolicy"] as? [String: Any])?["onDemand"] as? [String: Any] != nil)
    #expect(manifest?["platforms"] as? [String] == ["iOS", "macOS"])
    #expect((manifest?["fileSelectors"] as? [[String: String]]) == [["directory": "Contents"]])
    // The files are the package's, at the same relative paths, without the plist.
    let unpacked = try pkgtool(["unpack", "s.pkg", "-o", "u"], in: dir.path)
    #expect(unpacked.status == 0)
    let packFiles = try snapshot(dir.appending("pack2/Contents")).filter { $0.value.kind == .file }.mapValues(\.bytes)
    let unpackedFiles = try snapshot(dir.appending("u/Contents")).filter { $0.value.kind != .directory }
    #expect(Set(packFiles.keys) == Set(unpackedFiles.keys))
    #expect(!FileManager.default.fileExists(atPath: dir.appending("pack2/ContentInfo.plist")))
  }

  @Test func aBrokenPackageOrAnEditedManifestIsRefusedThroughTheSameRules() throws {
    let dir = try TemporaryDirectory()
    let bad = try ExamplePackages.package(for: NoExecutableRule.description.triggering[0], in: dir.path)
    let refused = try pkgtool(["export", "background-assets", bad, "-o", "pack"], in: dir.path)
    #expect(refused.status == 1)
    #expect(refused.stdout.contains("[no-executable]"))
    #expect(!FileManager.default.fileExists(atPath: dir.appending("pack")))
    let good = try ExamplePackages.package(for: RuleExample.package("ok"), in: dir.path)
    #expect(
      try pkgtool(["export", "background-assets", good, "-o", "pack", "--asset-pack-id", "../x"], in: dir.path).status
        == 2)
    #expect(try pkgtool(["export", "background-assets", good, "-o", "pack"], in: dir.path).status == 0)
    try writeFile(dir.appending("pack/stray.txt"), "not selected")
    let checked = try pkgtool(["validate", "pack", "--reporter", "junit"], in: dir.path)
    #expect(checked.status == 1)
    #expect(checked.stdout.contains(#"classname="pkgtool.asset-pack-files" name="Asset-pack files: stray.txt""#))
    #expect(checked.stdout.contains(#"classname="pkgtool.layout" name="Package layout">"#))  // skipped, not failed
    let rules = try pkgtool(["rules"])
    #expect(rules.stdout.contains("asset-pack-manifest") && rules.stdout.contains("asset-pack-files"))
  }
}
