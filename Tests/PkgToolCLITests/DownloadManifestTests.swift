import AppleArchive
import Crypto
import Foundation
import HostedContent
import TestSupport
import Testing

/// `download-manifest create` / `update` and `migrate` through the real binary, on asset packs
/// exported by pkgtool itself and on hostile ones written with the Apple Archive writer: the
/// manifest in Apple's shape, versions that never go down and rise exactly for the packs whose
/// bytes changed, byte-identical extensionless payloads, refusals that leave nothing, and packs
/// whose files equal their packages' Contents/ (checked by the independent Python reader too).
@Suite struct DownloadManifestTests {
  static func json(_ text: String) throws -> [String: Any] {
    try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any] ?? [:]
  }

  static func sha256(_ path: String) throws -> String {
    SHA256.hash(data: try readFile(path)).map { String(format: "%02x", $0) }.joined()
  }

  /// A project `name` of `product` holding `files`, exported as `name.aar` in `dir`.
  @discardableResult
  static func pack(
    _ dir: TemporaryDirectory, _ name: String, product: String, files: [String: String], force: Bool = false,
    extra: [String] = []
  ) throws -> String {
    let project = dir.appending("src/" + name)
    if !FileManager.default.fileExists(atPath: project) {
      try FileManager.default.createDirectory(atPath: dir.appending("src"), withIntermediateDirectories: true)
      let made = try pkgtool(["init", project, "--product-id", product])
      #expect(made.status == 0, "\(made.stderr)")
    }
    for (path, text) in files { try writeFile(project + "/Contents/" + path, text) }
    let archive = dir.appending(name + ".aar")
    let exported = try pkgtool(
      ["export", "background-assets", project, "-o", archive, "-q"] + (force ? ["--force"] : []) + extra)
    #expect(exported.status == 0, "\(exported.stdout)\(exported.stderr)")
    return archive
  }

  /// Writes an asset pack whose Manifest.json says `id`, with the writer (what export refuses
  /// to make).
  static func craftedPack(at path: String, id: String, manifest: Bool = true) throws {
    var out: [UInt8] = []
    let writer = try AppleArchiveWriter(compression: .none) { out += $0 }
    try writer.addDirectory([])
    try writer.addDirectory(Array("Contents".utf8))
    try writer.addFile(Array("Contents/a.txt".utf8), contents: Array("a\n".utf8))
    if manifest {
      let text = """
        {"assetPackID": "\(id)", "downloadPolicy": {"onDemand": {}}, "fileSelectors": [{"directory": "Contents"}], "platforms": ["iOS"]}
        """
      try writer.addFile(Array("Manifest.json".utf8), contents: Array(text.utf8))
    }
    try writer.finish()
    try writeFile(path, out)
  }

  static let base = "https://cdn.example.com/packs"

  /// `create`: Apple's shape and nothing else, the IDs from the packs, downloadSize the file's
  /// size, url the base URL with a slash and the ID, --versions by position; --json agrees.
  @Test func createWritesApplesShape() throws {
    let dir = try TemporaryDirectory()
    let book = try Self.pack(dir, "Book", product: "com.example.book", files: ["chapter1.txt": "Once.\n"])
    let levels = try Self.pack(dir, "Levels", product: "com.example.levels", files: ["1.json": "{}\n"])
    let out = dir.appending("download-manifest.json")
    let run = try pkgtool([
      "download-manifest", "create", book, levels, "--platform", "ios", "--base-url", Self.base, "-o", out,
      "--versions", "3", "1", "--json",
    ])
    #expect(run.status == 0, "\(run.stdout)\(run.stderr)")
    let manifest = try Self.json(String(decoding: try readFile(out), as: UTF8.self))
    #expect(Array(manifest.keys) == ["assetPacks"])
    let packs = manifest["assetPacks"] as? [[String: Any]] ?? []
    #expect(packs.count == 2)
    for pack in packs { #expect(Set(pack.keys) == ["id", "version", "downloadSize", "url"]) }
    #expect(packs.map { $0["id"] as? String } == ["com-example-book", "com-example-levels"])
    #expect(packs.map { $0["version"] as? Int } == [3, 1])
    #expect(packs[0]["downloadSize"] as? Int == (try readFile(book)).count)
    #expect(packs[1]["downloadSize"] as? Int == (try readFile(levels)).count)
    #expect(packs[0]["url"] as? String == Self.base + "/com-example-book")
    let report = try Self.json(run.stdout)
    #expect(report["schemaVersion"] as? Int == 1)
    #expect(report["publishOrder"] as? [String] == [out])
    let reported = report["packs"] as? [[String: Any]] ?? []
    #expect(reported.first?["sha256"] as? String == (try Self.sha256(book)))
    // The digests beside it, in sha256sum's form, by pack ID.
    let sums = String(decoding: try readFile(out + ".sha256sums"), as: UTF8.self)
    #expect(sums == "\(try Self.sha256(book))  com-example-book\n\(try Self.sha256(levels))  com-example-levels\n")
    // A pack for another platform is refused.
    let tv = try pkgtool([
      "download-manifest", "create", book, "--platform", "tvos", "--base-url", Self.base, "-o",
      dir.appending("tv.json"),
    ])
    #expect(tv.status == 2 && tv.stderr.contains("not tvOS"), "\(tv.stderr)")
    #expect(!FileManager.default.fileExists(atPath: dir.appending("tv.json")))
  }

  /// `create` over an existing manifest: a lower version is refused and the file kept; without
  /// --versions the same bytes keep their version and changed bytes get one more; the same
  /// version for other bytes is refused.
  @Test func createOverAnExistingManifestNeverLowers() throws {
    let dir = try TemporaryDirectory()
    let book = try Self.pack(dir, "Book", product: "com.example.book", files: ["c.txt": "one\n"])
    let levels = try Self.pack(dir, "Levels", product: "com.example.levels", files: ["1.json": "{}\n"])
    let out = dir.appending("m.json")
    func create(_ extra: [String]) throws -> ProcessResult {
      try pkgtool(
        ["download-manifest", "create", book, levels, "--platform", "ios", "--base-url", Self.base, "-o", out] + extra)
    }
    func versions() throws -> [Int?] {
      (try Self.json(String(decoding: try readFile(out), as: UTF8.self))["assetPacks"] as? [[String: Any]] ?? []).map {
        $0["version"] as? Int
      }
    }
    #expect(try create(["--versions", "3", "1"]).status == 0)
    let before = try readFile(out)
    let lower = try create(["--versions", "2", "1"])
    #expect(lower.status == 2)
    #expect(lower.stderr.contains("'com-example-book' would go from version 3 down to 2"), "\(lower.stderr)")
    #expect(try readFile(out) == before)
    // Without --versions: the same bytes, the same versions (ba-package would reset them to 1).
    #expect(try create([]).status == 0)
    #expect(try versions() == [3, 1])
    // Changed bytes: exactly that pack rises.
    try Self.pack(dir, "Levels", product: "com.example.levels", files: ["2.json": "{}\n"], force: true)
    let raised = try create([])
    #expect(raised.status == 0)
    #expect(raised.stdout.contains("version 2 (raised from 1: its bytes changed)"), "\(raised.stdout)")
    #expect(try versions() == [3, 2])
    // The same version for other bytes strands devices: refused.
    try Self.pack(dir, "Levels", product: "com.example.levels", files: ["3.json": "{}\n"], force: true)
    let same = try create(["--versions", "3", "2"])
    #expect(same.status == 2)
    #expect(same.stderr.contains("has other bytes than its version 2"), "\(same.stderr)")
    #expect(try versions() == [3, 2])
    #expect(try create(["--versions", "3", "7"]).status == 0)
    #expect(try versions() == [3, 7])
    // --versions must give one per pack.
    let count = try create(["--versions", "4"])
    #expect(count.status == 2 && count.stderr.contains("--versions gives 1 version for 2 packs"), "\(count.stderr)")
  }

  /// `update` after a content change raises exactly that pack's version; the pack not named,
  /// and the named one with the same bytes, stay; a new pack joins at version 1 under the base.
  @Test func updateRaisesExactlyTheChangedPack() throws {
    let dir = try TemporaryDirectory()
    let book = try Self.pack(dir, "Book", product: "com.example.book", files: ["c.txt": "one\n"])
    let levels = try Self.pack(dir, "Levels", product: "com.example.levels", files: ["1.json": "{}\n"])
    let music = try Self.pack(dir, "Music", product: "com.example.music", files: ["a.txt": "la\n"])
    let out = dir.appending("m.json")
    #expect(
      try pkgtool([
        "download-manifest", "create", book, levels, music, "--platform", "ios", "--base-url", Self.base + "/",
        "-o", out, "--versions", "2", "5", "1",
      ]).status == 0)
    try Self.pack(dir, "Levels", product: "com.example.levels", files: ["1.json": "{\"v\": 2}\n"], force: true)
    let extra = try Self.pack(dir, "Extra", product: "com.example.extra", files: ["x.txt": "x\n"])
    let update = try pkgtool(["download-manifest", "update", out, book, levels, extra, "--json"])
    #expect(update.status == 0, "\(update.stdout)\(update.stderr)")
    let packs =
      try Self.json(String(decoding: try readFile(out), as: UTF8.self))["assetPacks"] as? [[String: Any]] ?? []
    #expect(
      packs.map { $0["id"] as? String } == [
        "com-example-book", "com-example-levels", "com-example-music", "com-example-extra",
      ])
    #expect(packs.map { $0["version"] as? Int } == [2, 6, 1, 1])
    #expect(packs[1]["downloadSize"] as? Int == (try readFile(levels)).count)
    #expect(packs[3]["url"] as? String == Self.base + "/com-example-extra")
    let changes = (try Self.json(update.stdout)["packs"] as? [[String: Any]] ?? []).map { $0["change"] as? String }
    #expect(changes == ["unchanged", "raised", "added"])
    // Run again: nothing changed, nothing rises.
    #expect(try pkgtool(["download-manifest", "update", out, book, levels, extra, "-q"]).status == 0)
    let again = try Self.json(String(decoding: try readFile(out), as: UTF8.self))["assetPacks"] as? [[String: Any]]
    #expect(again?.map { $0["version"] as? Int } == [2, 6, 1, 1])
    // A manifest that is not there: update says to create one.
    let missing = try pkgtool(["download-manifest", "update", dir.appending("none.json"), book])
    #expect(missing.status == 2 && missing.stderr.contains("download-manifest create"), "\(missing.stderr)")
  }

  /// `--payloads`: DIR/ID with no extension, byte for byte the .aar; sha256sum -c checks them
  /// against the digests file; the output says payloads first, manifest last. The independent
  /// Python reader (PyPI's LZFSE) reads a payload's files as the project's.
  @Test func payloadsAreByteIdenticalAndExtensionless() throws {
    let dir = try TemporaryDirectory()
    let text = String(repeating: "Once upon a time.\n", count: 500)
    let book = try Self.pack(dir, "Book", product: "com.example.book", files: ["chapter1.txt": text])
    let levels = try Self.pack(dir, "Levels", product: "com.example.levels", files: ["1.json": "{}\n"])
    let out = dir.appending("m.json")
    let run = try pkgtool([
      "download-manifest", "create", book, levels, "--platform", "ios", "--base-url", Self.base, "-o", out,
      "--payloads", dir.appending("upload"),
    ])
    #expect(run.status == 0, "\(run.stdout)\(run.stderr)")
    #expect(
      try FileManager.default.contentsOfDirectory(atPath: dir.appending("upload")).sorted() == [
        "com-example-book", "com-example-levels",
      ])
    #expect(try readFile(dir.appending("upload/com-example-book")) == (try readFile(book)))
    #expect(try readFile(dir.appending("upload/com-example-levels")) == (try readFile(levels)))
    let first = try #require(run.stdout.range(of: "Publish the payloads first"))
    #expect(run.stdout[first.lowerBound...].contains("then \(out) last"), "\(run.stdout)")
    let check = try runProcess("/usr/bin/env", ["sha256sum", "-c", out + ".sha256sums"], in: dir.appending("upload"))
    #expect(check.status == 0, "\(check.stdout)\(check.stderr)")
    let oracle = try runProcess(
      "/usr/bin/env", ["python3", repositoryRoot + "/scripts/aar_oracle.py", dir.appending("upload/com-example-book")])
    #expect(oracle.status == 0, "\(oracle.stderr)")
    let entries = try Self.json(oracle.stdout)["entries"] as? [[String: Any]] ?? []
    let chapter = entries.first {
      ($0["path"] as? String) == Data("Contents/chapter1.txt".utf8).map { String(format: "%02x", $0) }.joined()
    }
    #expect(chapter?["sha256"] as? String == (try Self.sha256(dir.appending("src/Book/Contents/chapter1.txt"))))
    // update writes the copies too.
    try Self.pack(dir, "Book", product: "com.example.book", files: ["chapter1.txt": text + "The end.\n"], force: true)
    #expect(try pkgtool(["download-manifest", "update", out, book, "--payloads", dir.appending("upload")]).status == 0)
    #expect(try readFile(dir.appending("upload/com-example-book")) == (try readFile(book)))
  }

  /// Hostile inputs: a pack ID with '/' or '..', a .aar that is not an asset pack, a package,
  /// two packs with one ID, a plain-http base URL that is not loopback, a manifest to update
  /// whose ID is a path. Each a clear error, and no manifest, digests or payloads left.
  @Test func hostileInputsLeaveNothing() throws {
    let dir = try TemporaryDirectory()
    let out = dir.appending("m.json")
    let upload = dir.appending("upload")
    func create(_ packs: [String], base: String = Self.base) throws -> ProcessResult {
      try pkgtool(
        ["download-manifest", "create"] + packs + [
          "--platform", "ios", "--base-url", base, "-o", out, "--payloads", upload,
        ])
    }
    func nothingLeft() -> Bool {
      !FileManager.default.fileExists(atPath: out) && !FileManager.default.fileExists(atPath: out + ".sha256sums")
        && !FileManager.default.fileExists(atPath: upload)
    }
    for (name, id) in [("slash", "packs/evil"), ("dots", ".."), ("up", "../etc"), ("dot", "com.example.x")] {
      let path = dir.appending(name + ".aar")
      try Self.craftedPack(at: path, id: id)
      let run = try create([path])
      #expect(run.status == 1, "\(id): \(run.stdout)\(run.stderr)")
      #expect(run.stdout.contains("[asset-pack-manifest]") && run.stdout.contains("asset-pack ID"), "\(run.stdout)")
      #expect(run.stderr.contains("'\(out)' was left as it was"), "\(run.stderr)")
      #expect(nothingLeft(), "\(id)")
    }
    let bare = dir.appending("bare.aar")
    try Self.craftedPack(at: bare, id: "", manifest: false)
    let notAPack = try create([bare])
    #expect(notAPack.status == 1)
    #expect(notAPack.stdout.contains("it is not an asset pack"), "\(notAPack.stdout)")
    #expect(nothingLeft())
    let package = dir.appending("book.pkg")
    try Data(ExamplePackages.xarBytes(RuleExample.baseNodes)).write(to: URL(fileURLWithPath: package))
    let pkg = try create([package])
    #expect(pkg.status == 2 && pkg.stderr.contains("is not an asset pack: it reads as XAR package"), "\(pkg.stderr)")
    #expect(nothingLeft())

    let good = try Self.pack(dir, "Book", product: "com.example.book", files: ["c.txt": "c\n"])
    let twin = try Self.pack(
      dir, "Other", product: "com.example.other", files: ["d.txt": "d\n"],
      extra: [
        "--asset-pack-id", "com-example-book",
      ])
    let twice = try create([good, twin])
    #expect(twice.status == 2)
    #expect(twice.stderr.contains("are both the asset pack 'com-example-book'"), "\(twice.stderr)")
    #expect(nothingLeft())
    for base in ["http://cdn.example.com/packs", "ftp://cdn.example.com/", "http://127.0.0.1.example.com/"] {
      let plain = try create([good], base: base)
      #expect(plain.status == 2, "\(base)")
      #expect(plain.stderr.contains("--base-url '\(base)'"), "\(plain.stderr)")
      #expect(nothingLeft())
    }
    let loopback = try create([good], base: "http://127.0.0.1:8080/packs")
    #expect(loopback.status == 0, "\(loopback.stderr)")
    let written = String(decoding: try readFile(out), as: UTF8.self)
    #expect(written.contains("\"url\" : \"http://127.0.0.1:8080/packs/com-example-book\""), "\(written)")

    // A manifest to update whose pack ID is a path: refused before anything is named after it.
    let hostile = dir.appending("hostile.json")
    try writeFile(
      hostile,
      #"{"assetPacks": [{"id": "../x", "version": 1, "downloadSize": 3, "url": "https://cdn.example.com/../x"}]}"#)
    let update = try pkgtool(["download-manifest", "update", hostile, good, "--payloads", dir.appending("up2")])
    #expect(update.status == 2 && update.stderr.contains("is not a download manifest pkgtool can continue"))
    #expect(!FileManager.default.fileExists(atPath: dir.appending("up2")))
    #expect(!FileManager.default.fileExists(atPath: hostile + ".sha256sums"))
  }

  /// `migrate` of the samples: one pack per product, whose files (read back by pkgtool's
  /// reader, and by the independent Python one) equal the sample's Contents/, symlinks as
  /// copies of their targets; the manifest lists them; run again with one sample changed, only
  /// that pack's version rises.
  @Test func migrateOfTheSamplesGivesPacksEqualToTheirContents() throws {
    let dir = try TemporaryDirectory()
    let samples = dir.appending("samples")
    try FileManager.default.copyItem(atPath: repositoryRoot + "/samples", toPath: samples)
    let out = dir.appending("packs")
    let run = try pkgtool([
      "migrate", samples, "-o", out, "--platform", "ios", "--base-url", Self.base, "--json",
    ])
    #expect(run.status == 0, "\(run.stdout)\(run.stderr)")
    let report = try Self.json(run.stdout)
    let packs = report["packs"] as? [[String: Any]] ?? []
    #expect(packs.count == 3)
    for pack in packs {
      let archive = try #require(pack["archive"] as? String)
      let source = try #require(pack["source"] as? String)
      #expect(pack["filesEqualContents"] as? Bool == true)
      // The sample's Contents/ files, links followed, by SHA-256.
      var expected: [String: String] = [:]
      let contents = source + "/Contents"
      for case let relative as String in FileManager.default.enumerator(atPath: contents)! {
        var isDirectory: ObjCBool = false
        let full = contents + "/" + relative
        guard FileManager.default.fileExists(atPath: full, isDirectory: &isDirectory), !isDirectory.boolValue else {
          continue
        }
        expected["Contents/" + relative] = try Self.sha256(full)
      }
      // pkgtool's reader.
      let info = try Self.json(try pkgtool(["info", archive, "--files", "--json"]).stdout)
      var listed: [String: String] = [:]
      for file in info["files"] as? [[String: Any]] ?? [] {
        guard let path = file["path"] as? String, path != "Manifest.json", let sha = file["sha256"] as? String
        else { continue }
        listed[path] = sha
      }
      #expect(listed == expected, "\(archive)")
      // The independent reader (Python, PyPI's LZFSE).
      let oracle = try runProcess("/usr/bin/env", ["python3", repositoryRoot + "/scripts/aar_oracle.py", archive])
      #expect(oracle.status == 0, "\(oracle.stderr)")
      var read: [String: String] = [:]
      for entry in try Self.json(oracle.stdout)["entries"] as? [[String: Any]] ?? [] {
        guard let hex = entry["path"] as? String, let sha = entry["sha256"] as? String else { continue }
        var bytes: [UInt8] = []
        var index = hex.startIndex
        while index < hex.endIndex {
          let next = hex.index(index, offsetBy: 2)
          bytes.append(UInt8(hex[index..<next], radix: 16)!)
          index = next
        }
        let path = String(decoding: bytes, as: UTF8.self)
        if path.hasPrefix("Contents/") { read[path] = sha }
      }
      #expect(read == expected, "\(archive)")
    }
    let manifest = try Self.json(String(decoding: try readFile(out + "/download-manifest.json"), as: UTF8.self))
    let listed = manifest["assetPacks"] as? [[String: Any]] ?? []
    #expect(
      listed.map { $0["id"] as? String } == [
        "com-example-book-chapter1", "com-example-book-chapter2", "com-example-game-levelpack1",
      ])
    for pack in listed {
      let id = pack["id"] as? String ?? ""
      #expect(try readFile(out + "/payloads/" + id) == (try readFile(out + "/" + id + ".aar")))
    }
    // Again, with chapter 2 changed and its version bumped: only its pack rises.
    try writeFile(samples + "/book-chapter2/Contents/chapter2.txt", "A new chapter two.\n")
    #expect(try pkgtool(["bump", samples + "/book-chapter2"]).status == 0)
    let again = try pkgtool(["migrate", samples, "-o", out, "--platform", "ios", "--base-url", Self.base])
    #expect(again.status == 0, "\(again.stdout)\(again.stderr)")
    let versions =
      (try Self.json(String(decoding: try readFile(out + "/download-manifest.json"), as: UTF8.self))[
        "assetPacks"] as? [[String: Any]] ?? []).map { $0["version"] as? Int }
    #expect(versions == [1, 2, 1])
    // The same product and version twice: the same Contents/ is taken once; other content is
    // refused, and the manifest stays as it was.
    try FileManager.default.copyItem(atPath: samples + "/book-chapter1", toPath: samples + "/copy")
    let twice = try pkgtool(["migrate", samples, "-o", out, "--platform", "ios", "--base-url", Self.base])
    #expect(twice.status == 0 && twice.stdout.contains("passed over: \(samples)/copy"), "\(twice.stdout)")
    let manifestBytes = try readFile(out + "/download-manifest.json")
    try writeFile(samples + "/copy/Contents/chapter1.txt", "Another text.\n")
    let clash = try pkgtool(["migrate", samples, "-o", out, "--platform", "ios", "--base-url", Self.base])
    #expect(clash.status == 2 && clash.stderr.contains("are both com.example.book.chapter1 1.0"), "\(clash.stderr)")
    #expect(try readFile(out + "/download-manifest.json") == manifestBytes)
    // A folder that holds no package.
    try FileManager.default.createDirectory(atPath: dir.appending("empty"), withIntermediateDirectories: true)
    let empty = try pkgtool([
      "migrate", dir.appending("empty"), "-o", dir.appending("p2"), "--platform", "ios",
      "--base-url", Self.base,
    ])
    #expect(empty.status == 2 && empty.stderr.contains("holds no package"), "\(empty.stderr)")
    #expect(!FileManager.default.fileExists(atPath: dir.appending("p2")))
  }
}
