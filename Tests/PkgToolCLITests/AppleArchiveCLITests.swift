import Foundation
import TestSupport
import Testing

/// Apple Archive (`.aar`) through the real `pkgtool` binary: Apple's own payloads read as they
/// were written, asset packs exported and read back byte for byte (checked by an independent
/// Python reader too), and hostile archives refused with nothing written outside the
/// destination.
@Suite struct AppleArchiveCLITests {
  static let interop = repositoryRoot + "/../shared/interop/aar"
  static let available = FileManager.default.fileExists(atPath: interop)

  /// The SHA-256 of `bytes`, by Python's hashlib.
  static func sha256(_ path: String, from offset: Int = 0) throws -> String {
    let result = try runProcess(
      "/usr/bin/env",
      [
        "python3", "-c",
        "import hashlib,sys; d=open(sys.argv[1],'rb').read()[int(sys.argv[2]):]; print(hashlib.sha256(d).hexdigest())",
        path, String(offset),
      ])
    return result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
  }

  static func json(_ text: String) throws -> [String: Any] {
    try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any] ?? [:]
  }

  /// Apple-written payloads: one file, `Shortcut.wflow` (the last 145,199 bytes of the archive,
  /// its DAT blob), listed with its mode and SHA-256, and written byte for byte by `unpack
  /// --keep-going` (they are not asset packs: validate says so, and exits 1).
  @Test(.enabled(if: available, "../shared/interop is missing"), arguments: ["contact", "iCloud"])
  func applesPayloadsReadAsWritten(name: String) throws {
    let archive = Self.interop + "/shortcut-\(name)-signed.aar"
    let size = try readFile(archive).count
    let expected = try Self.sha256(archive, from: size - 145_199)
    let info = try pkgtool(["info", archive, "--files", "--json"])
    #expect(info.status == 0, "\(info.stderr)")
    let listing = try Self.json(info.stdout)
    #expect(listing["format"] as? String == "apple-archive")
    let files = listing["files"] as? [[String: Any]] ?? []
    #expect(files.count == 1)
    #expect(files.first?["path"] as? String == "Shortcut.wflow")
    #expect(files.first?["mode"] as? String == "0644")
    #expect(files.first?["size"] as? Int == 145_199)
    #expect(files.first?["sha256"] as? String == expected)

    let validate = try pkgtool(["validate", archive])
    #expect(validate.status == 1)
    #expect(validate.stdout.contains("no Manifest.json"), "\(validate.stdout)")

    let dir = try TemporaryDirectory()
    let out = dir.appending("out")
    let unpack = try pkgtool(["unpack", archive, "-o", out, "--keep-going"])
    #expect(unpack.status == 1)
    let written = try readFile(out + "/Shortcut.wflow")
    #expect(Array(written.prefix(8)) == Array("bplist00".utf8))
    #expect(try Self.sha256(out + "/Shortcut.wflow") == expected)
    #expect(try snapshot(out).keys.sorted() == ["Shortcut.wflow"])
  }

  /// The signed shortcut around a payload is an AEA container: refused by name, no crash.
  @Test(.enabled(if: available, "../shared/interop is missing"))
  func encryptedArchivesAreRefusedByName() throws {
    let result = try pkgtool(["validate", Self.interop + "/shortcut-contact-signed.shortcut"])
    #expect(result.status == 1)
    #expect(result.stdout.contains("Apple Encrypted Archive (AEA1"), "\(result.stdout)")
  }

  /// A content project with nested folders, an empty file, a Unicode name, text and 5 MB of
  /// random bytes (two 4 MiB blocks).
  static func project(in dir: TemporaryDirectory) throws -> String {
    let project = dir.appending("Book")
    #expect(try pkgtool(["init", project, "--product-id", "com.example.pack"]).status == 0)
    var generator = SystemRandomNumberGenerator()
    let random = (0..<5_000_000).map { _ in UInt8.random(in: 0...255, using: &generator) }
    try writeFile(project + "/Contents/media/noise.bin", random)
    try writeFile(project + "/Contents/levels/1/map.json", String(repeating: "{\"tile\": 7}, ", count: 20_000))
    try writeFile(project + "/Contents/levels/2/empty.dat", [])
    try writeFile(project + "/Contents/Überblick ß.txt", "grüße\n")
    return project
  }

  /// `.aar` in the everyday commands: `validate dist/` covers the `.aar` files in the folder,
  /// and `info` and `diff` name the pack by its ID, never `product: ?`.
  @Test func everydayCommandsKnowAnAssetPackArchive() throws {
    let dir = try TemporaryDirectory()
    let project = dir.appending("Small")
    #expect(try pkgtool(["init", project, "--product-id", "com.example.pack"]).status == 0)
    try writeFile(project + "/Contents/a.txt", "hello\n")
    try FileManager.default.createDirectory(atPath: dir.appending("dist"), withIntermediateDirectories: true)
    let archive = dir.appending("dist/Pack.aar")
    #expect(try pkgtool(["export", "background-assets", project, "-o", archive, "-q"]).status == 0)
    #expect(try pkgtool(["export", "background-assets", project, "-o", dir.appending("Pack"), "-q"]).status == 0)
    #expect(try pkgtool(["build", project, "-o", dir.appending("dist/book.pkg")]).status == 0)

    let folder = try pkgtool(["validate", "dist"], in: dir.path)
    #expect(folder.status == 0, "\(folder.stdout)\(folder.stderr)")
    #expect(folder.stdout.contains("dist/Pack.aar: valid: 0 errors, 0 warnings (asset pack com-example-pack, "))
    #expect(folder.stdout.contains("dist/book.pkg: valid"))
    // Only .aar files: the folder is still a folder of packages.
    try FileManager.default.removeItem(atPath: dir.appending("dist/book.pkg"))
    #expect(try pkgtool(["validate", "dist"], in: dir.path).status == 0)

    let info = try pkgtool(["info", archive])
    #expect(info.stdout.contains("\nasset pack   com-example-pack\n"), "\(info.stdout)")
    #expect(!info.stdout.contains("product") && !info.stdout.contains("(unknown)"))
    let json = try Self.json(try pkgtool(["info", archive, "--json"]).stdout)
    #expect(json["assetPackID"] as? String == "com-example-pack")
    let diff = try pkgtool(["diff", dir.appending("Pack"), archive])
    #expect(diff.stdout.hasPrefix("asset pack: com-example-pack\n"), "\(diff.stdout)")
    #expect(!diff.stdout.contains("?"))
  }

  /// project → `.aar` (each compression) → unpack: the same bytes as the folder export, the
  /// same archive bytes on a second export, and the independent reader lists the same files.
  @Test(arguments: ["lzfse", "zlib", "lzma", "none"])
  func roundTripIsByteIdentical(compression: String) throws {
    let dir = try TemporaryDirectory()
    let project = try Self.project(in: dir)
    let folder = dir.appending("Pack")
    #expect(try pkgtool(["export", "background-assets", project, "-o", folder, "-q"]).status == 0)
    let archive = dir.appending("Pack.aar")
    let export = try pkgtool([
      "export", "background-assets", project, "-o", archive, "--aar-compression", compression, "--json",
    ])
    #expect(export.status == 0, "\(export.stderr)")
    let summary = try Self.json(export.stdout)
    #expect(summary["archiveSHA256"] as? String == (try Self.sha256(archive)))
    let again = dir.appending("Again.aar")
    #expect(
      try pkgtool(["export", "background-assets", project, "-o", again, "--aar-compression", compression, "-q"])
        .status == 0)
    #expect(try readFile(archive) == (try readFile(again)), "two exports of one project differ")
    // Blocks compressed on one thread or on three: the same bytes.
    let single = dir.appending("Single.aar")
    #expect(
      try pkgtool([
        "export", "background-assets", project, "-o", single, "--aar-compression", compression, "--jobs", "1", "-q",
      ]).status == 0)
    #expect(try readFile(single) == (try readFile(archive)), "--jobs 1 wrote other bytes")
    let three = dir.appending("Three.aar")
    #expect(
      try pkgtool([
        "export", "background-assets", project, "-o", three, "--aar-compression", compression, "--jobs", "3", "-q",
      ]).status == 0)
    #expect(try readFile(three) == (try readFile(archive)), "--jobs 3 wrote other bytes")

    let head = Array(try readFile(archive).prefix(4))
    let magic = ["lzfse": "pbze", "zlib": "pbzz", "lzma": "pbzx", "none": "AA01"][compression]!
    #expect(head == Array(magic.utf8))

    #expect(try pkgtool(["validate", archive]).status == 0)
    // The folder and the archive hold the same files (info on an asset-pack folder used to fail).
    let same = try pkgtool(["diff", folder, archive])
    #expect(same.status == 0, "\(same.stderr)")
    #expect(same.stdout.contains("0 added, 0 removed, 0 changed"), "\(same.stdout)")
    let out = dir.appending("out")
    let unpack = try pkgtool(["unpack", archive, "-o", out])
    #expect(unpack.status == 0, "\(unpack.stderr)")
    let expected = try snapshot(folder).mapValues { node in
      var node = node
      node.inode = 0
      return node
    }
    let got = try snapshot(out).mapValues { node in
      var node = node
      node.inode = 0
      return node
    }
    #expect(got == expected)
    #expect(got["Contents/media/noise.bin"]?.bytes.count == 5_000_000)

    // The independent reader (scripts/aar_oracle.py, our own Python, PyPI's lzfse) agrees.
    let oracle = try runProcess("/usr/bin/env", ["python3", repositoryRoot + "/scripts/aar_oracle.py", archive])
    #expect(oracle.status == 0, "\(oracle.stderr)")
    let entries = (try Self.json(oracle.stdout)["entries"] as? [[String: Any]]) ?? []
    var oracleFiles: [String: String] = [:]
    for entry in entries where entry["type"] as? String == "F" {
      let hex = entry["path"] as? String ?? ""
      let bytes = stride(from: 0, to: hex.count, by: 2).map { i -> UInt8 in
        let start = hex.index(hex.startIndex, offsetBy: i)
        return UInt8(hex[start..<hex.index(start, offsetBy: 2)], radix: 16)!
      }
      oracleFiles[String(decoding: bytes, as: UTF8.self)] = entry["sha256"] as? String
    }
    let files = got.filter { $0.value.kind == .file }
    #expect(Set(oracleFiles.keys) == Set(files.keys))
    for (path, _) in files {
      #expect(oracleFiles[path] == (try Self.sha256(out + "/" + path)), "\(path)")
    }
  }

  /// Hostile archives the codec reads but the engine must refuse: validate exits 1 naming the
  /// rule, unpack writes nothing, and unpack --keep-going writes nothing outside its folder.
  static let hostile: [(name: String, bytes: [UInt8], rule: String)] = [
    (
      "same path twice",
      CraftedAAR.pack([CraftedAAR.file("Contents/a.txt", "1"), CraftedAAR.file("Contents/a.txt", "2")]),
      "duplicate-path"
    ),
    (
      "paths equal up to case",
      CraftedAAR.pack([CraftedAAR.file("Contents/a.txt", "1"), CraftedAAR.file("Contents/A.TXT", "2")]),
      "duplicate-path"
    ),
    (
      "paths equal up to normalization",
      CraftedAAR.pack([CraftedAAR.file("Contents/caf\u{E9}", "1"), CraftedAAR.file("Contents/cafe\u{301}", "2")]),
      "duplicate-path"
    ),
    (
      "a folder and a file of one name",
      CraftedAAR.pack([CraftedAAR.folder("Contents/a"), CraftedAAR.file("Contents/a", "2")]), "duplicate-path"
    ),
    (
      "a file with entries under it",
      CraftedAAR.pack([CraftedAAR.file("Contents/a", "1"), CraftedAAR.file("Contents/a/b", "2")]), "path-safety"
    ),
    (
      "entries under a file, child first",
      CraftedAAR.pack([CraftedAAR.file("Contents/a/b", "1"), CraftedAAR.file("Contents/a", "2")]), "path-safety"
    ),
    ("a second Manifest.json", CraftedAAR.pack([CraftedAAR.manifest]), "duplicate-path"),
    (
      "symlink out of the pack",
      CraftedAAR.pack([CraftedAAR.entry("L", "Contents/l", mode: 0o755, link: "../../../etc/passwd")]),
      "asset-pack-files"
    ),
    (
      "absolute symlink", CraftedAAR.pack([CraftedAAR.entry("L", "Contents/l", mode: 0o755, link: "/etc")]),
      "asset-pack-files"
    ),
    (
      "file under a symlink",
      CraftedAAR.pack([
        CraftedAAR.entry("L", "Contents/d", mode: 0o755, link: "/tmp"), CraftedAAR.file("Contents/d/x", "x"),
      ]), "path-safety"
    ),
    ("setuid file", CraftedAAR.pack([CraftedAAR.file("Contents/a", "1", mode: 0o4755)]), "special-file"),
    ("setgid file", CraftedAAR.pack([CraftedAAR.file("Contents/a", "1", mode: 0o2755)]), "special-file"),
    ("FIFO", CraftedAAR.pack([CraftedAAR.entry("P", "Contents/f", mode: 0o644)]), "special-file"),
    ("character device", CraftedAAR.pack([CraftedAAR.entry("C", "Contents/c", mode: 0o644)]), "special-file"),
    ("block device", CraftedAAR.pack([CraftedAAR.entry("B", "Contents/b", mode: 0o644)]), "special-file"),
    ("socket", CraftedAAR.pack([CraftedAAR.entry("S", "Contents/s", mode: 0o644)]), "special-file"),
    ("whiteout", CraftedAAR.pack([CraftedAAR.entry("W", "Contents/w", mode: 0o644)]), "special-file"),
    (
      "Mach-O executable",
      CraftedAAR.pack([
        CraftedAAR.entry(
          "F", "Contents/x", mode: 0o644, data: [0xCF, 0xFA, 0xED, 0xFE] + [UInt8](repeating: 0, count: 60))
      ]), "no-executable"
    ),
    (
      "name not UTF-8",
      CraftedAAR.pack([CraftedAAR.entry("F", Array("Contents/a".utf8) + [0xFF], mode: 0o644, data: [1])]), "path-safety"
    ),
    (
      "over-long path", CraftedAAR.pack([CraftedAAR.file("Contents/" + String(repeating: "n", count: 2000), "1")]),
      "path-safety"
    ),
    (
      "nested past the depth limit",
      CraftedAAR.pack([CraftedAAR.file("Contents/" + String(repeating: "d/", count: 300) + "f", "1")]),
      "archive-integrity"
    ),
    ("traversal", CraftedAAR.pack([CraftedAAR.file("Contents/../../evil", "1")]), "archive-integrity"),
    ("absolute path", CraftedAAR.pack([CraftedAAR.file("/tmp/evil", "1")]), "archive-integrity"),
    (
      "NUL in a name",
      CraftedAAR.pack([CraftedAAR.entry("F", Array("Contents/a".utf8) + [0] + Array("b".utf8), mode: 0o644, data: [1])]
      ), "archive-integrity"
    ),
    ("newline in a name", CraftedAAR.pack([CraftedAAR.file("Contents/a\nb", "1")]), "archive-integrity"),
    ("second root entry", CraftedAAR.pack([CraftedAAR.folder("")]), "archive-integrity"),
    (
      "data on a folder", CraftedAAR.pack([CraftedAAR.entry("D", "Contents/q", mode: 0o755, data: [1, 2])]),
      "archive-integrity"
    ),
    (
      "SIZ that lies",
      CraftedAAR.pack([
        CraftedAAR.entry("F", "Contents/a", mode: 0o644, data: [1, 2, 3], extra: [Array("SIZ1".utf8) + [9]])
      ]), "archive-integrity"
    ),
    (
      "SHA-256 that lies",
      CraftedAAR.pack([
        CraftedAAR.entry(
          "F", "Contents/a", mode: 0o644, data: [1, 2, 3],
          extra: [Array("SH2H".utf8) + [UInt8](repeating: 7, count: 32)])
      ]), "archive-integrity"
    ),
    (
      "unknown field",
      CraftedAAR.pack([CraftedAAR.entry("F", "Contents/a", mode: 0o644, data: [1], extra: [Array("ZZZ1".utf8) + [1]])]),
      "archive-integrity"
    ),
    (
      "cut inside a file's data",
      Array(CraftedAAR.pack([CraftedAAR.file("Contents/a", String(repeating: "x", count: 100))]).dropLast(10)),
      "archive-integrity"
    ),
    (
      "junk after the last entry", CraftedAAR.pack([CraftedAAR.file("Contents/a", "1")]) + Array("garbage!".utf8),
      "archive-integrity"
    ),
    ("LZ4 blocks", Array("pbz4".utf8) + CraftedAAR.le(0, 4) + [0, 0x40, 0, 0], "archive-integrity"),
    ("a file selectors do not cover", CraftedAAR.pack([CraftedAAR.file("Other/x", "1")]), "asset-pack-files"),
  ]

  @Test(arguments: hostile.indices)
  func hostileArchivesAreRefused(index: Int) throws {
    let (name, bytes, rule) = Self.hostile[index]
    let dir = try TemporaryDirectory()
    let archive = dir.appending("pack.aar")
    try writeFile(archive, bytes)
    let validate = try pkgtool(["validate", archive, "--json"])
    #expect(validate.status == 1, "\(name): \(validate.stdout) \(validate.stderr)")
    let findings = (try Self.json(validate.stdout)["findings"] as? [[String: Any]]) ?? []
    #expect(
      findings.contains { $0["rule"] as? String == rule && $0["severity"] as? String == "error" },
      "\(name): expected a \(rule) error, got \(validate.stdout)")

    let box = dir.appending("box")
    try FileManager.default.createDirectory(atPath: box, withIntermediateDirectories: false)
    let before = try snapshot(dir.path).keys.sorted()
    let unpack = try pkgtool(["unpack", archive, "-o", box + "/out"])
    #expect(unpack.status == 1, "\(name)")
    #expect(!FileManager.default.fileExists(atPath: box + "/out"), "\(name): unpack wrote its output")
    // install judges the archive as validate does: the package broke a rule (1), whichever
    // reader's error it was; it was 2 for Apple Archive's, missing from a hand-kept list.
    let install = try pkgtool(["install", archive, "--into", box + "/docs"])
    #expect(install.status == 1, "\(name): \(install.stderr)")
    #expect(install.stderr.contains("broke a rule; nothing was changed"), "\(name): \(install.stderr)")
    #expect(!FileManager.default.fileExists(atPath: box + "/docs/com-example-book"), "\(name)")
    _ = try pkgtool(["unpack", archive, "-o", box + "/kept", "--keep-going"])
    let after = try snapshot(dir.path).keys.filter { !$0.hasPrefix("box/kept") && !$0.hasPrefix("box/docs") }.sorted()
    #expect(after == before, "\(name): something was written outside the destination")
  }

  /// A decompression bomb in one pbz block (raw 64 MiB declared from a few bytes) is refused by
  /// its ratio; and content past --max-size stops the reading.
  @Test func bombsStop() throws {
    let dir = try TemporaryDirectory()
    let project = dir.appending("P")
    #expect(try pkgtool(["init", project, "--product-id", "com.example.bomb"]).status == 0)
    try writeFile(project + "/Contents/zeros.bin", [UInt8](repeating: 0, count: 12_000_000))
    let archive = dir.appending("zeros.aar")
    #expect(
      try pkgtool(["export", "background-assets", project, "-o", archive, "--aar-compression", "zlib", "-q"]).status
        == 0)
    let capped = try pkgtool(["validate", archive, "--max-size", "5000000", "--json"])
    #expect(capped.status == 1)
    #expect(capped.stdout.contains("size-limit"), "\(capped.stdout)")
    let ratio = try pkgtool(["validate", archive, "--max-ratio", "100", "--json"])
    #expect(ratio.status == 1)
    #expect(ratio.stdout.contains("--max-ratio"), "\(ratio.stdout)")
  }

  /// `diff` of two pack versions warns about files removed and files changed in place.
  @Test func diffWarnsAboutRemovedAndChangedFiles() throws {
    let dir = try TemporaryDirectory()
    let project = try Self.project(in: dir)
    let old = dir.appending("v1.aar")
    #expect(try pkgtool(["export", "background-assets", project, "-o", old, "-q"]).status == 0)
    try FileManager.default.removeItem(atPath: project + "/Contents/levels/2/empty.dat")
    try writeFile(project + "/Contents/levels/1/map.json", "{}")
    let new = dir.appending("v2.aar")
    #expect(try pkgtool(["export", "background-assets", project, "-o", new, "-q"]).status == 0)
    let diff = try pkgtool(["diff", old, new])
    #expect(diff.status == 0)
    #expect(diff.stdout.contains("- Contents/levels/2/empty.dat"), "\(diff.stdout)")
    #expect(diff.stdout.contains("warning: 1 file is removed from the asset pack ('Contents/levels/2/empty.dat')"))
    #expect(diff.stdout.contains("warning: 1 file changes in place ('Contents/levels/1/map.json')"))
  }

  /// The name and the bytes agree: an Apple Archive named .pkg, and a XAR named .aar, are each
  /// refused by package-form.
  @Test func theNameAndTheBytesAgree() throws {
    let dir = try TemporaryDirectory()
    let archive = dir.appending("pack.pkg")
    try writeFile(archive, CraftedAAR.pack([CraftedAAR.file("Contents/a", "1")]))
    let named = try pkgtool(["validate", archive])
    #expect(named.status == 1)
    #expect(named.stdout.contains("[package-form]"), "\(named.stdout)")
    let project = dir.appending("P")
    #expect(try pkgtool(["init", project, "--product-id", "com.example.x"]).status == 0)
    let xar = dir.appending("x.aar")
    #expect(try pkgtool(["build", project, "-o", dir.appending("x.pkg"), "-q"]).status == 0)
    try FileManager.default.moveItem(atPath: dir.appending("x.pkg"), toPath: xar)
    let wrong = try pkgtool(["validate", xar])
    #expect(wrong.status == 1)
    #expect(wrong.stdout.contains("[package-form]"), "\(wrong.stdout)")
  }

  /// Found by an attacker's look (each failed before its fix): a rule that reads a file's first
  /// bytes saw only what was left of the current block, so a Mach-O whose magic straddled two
  /// blocks passed, and a manifest that did was "larger than 256 KiB"; a file with a declared
  /// hash and no data went unchecked; a zip stored as the last file made the archive a zip too;
  /// extended attributes and paths had no total bound; and a C1 control in a name made --json
  /// output that is not JSON.
  @Test func whatTheRedTeamFoundIsRefused() throws {
    let dir = try TemporaryDirectory()
    func validate(_ name: String, _ bytes: [UInt8], _ extra: [String] = []) throws -> (Int32, String) {
      let path = dir.appending(name)
      try writeFile(path, bytes)
      let result = try pkgtool(["validate", path, "--json"] + extra)
      return (result.status, result.stdout)
    }
    let macho = [UInt8]([0xCF, 0xFA, 0xED, 0xFE, 7, 0, 0, 1]) + [UInt8](repeating: 0, count: 200)
    let raw = CraftedAAR.pack([CraftedAAR.entry("F", "Contents/x.dylib", mode: 0o644, data: macho)])
    // Every block boundary from 1 to 16 bytes into the data.
    let start = raw.count - macho.count
    for cut in 1...16 {
      let (status, out) = try validate("macho\(cut).aar", CraftedAAR.storedBlocks(raw, blockSize: start + cut))
      #expect(status == 1 && out.contains("no-executable"), "block boundary \(cut) bytes into the magic: \(out)")
    }
    let tiny = CraftedAAR.storedBlocks(CraftedAAR.pack([CraftedAAR.file("Contents/a.txt", "hello")]), blockSize: 7)
    let (tinyStatus, tinyOut) = try validate("tiny.aar", tiny)
    #expect(tinyStatus == 0, "a valid pack in 7-byte blocks: \(tinyOut)")

    let hashed = CraftedAAR.pack([
      CraftedAAR.entry("F", "Contents/a", mode: 0o644, extra: [Array("SH2H".utf8) + [UInt8](repeating: 0, count: 32)])
    ])
    let (hashStatus, hashOut) = try validate("nodat.aar", hashed)
    #expect(hashStatus == 1 && hashOut.contains("SH2"), "\(hashOut)")

    let zip = try runProcess(
      "/usr/bin/env",
      [
        "python3", "-c",
        "import io,zipfile,sys; b=io.BytesIO(); z=zipfile.ZipFile(b,'w'); z.writestr('Contents/evil.txt','x'); z.close(); sys.stdout.buffer.write(b.getvalue().hex().encode())",
      ])
    let zipBytes = stride(from: 0, to: zip.stdout.count, by: 2).map { i -> UInt8 in
      let s = zip.stdout.index(zip.stdout.startIndex, offsetBy: i)
      return UInt8(zip.stdout[s..<zip.stdout.index(s, offsetBy: 2)], radix: 16)!
    }
    let (polyStatus, polyOut) = try validate(
      "poly.aar", CraftedAAR.pack([CraftedAAR.entry("F", "Contents/z.bin", mode: 0o644, data: zipBytes)]))
    #expect(polyStatus == 1 && polyOut.contains("package-form"), "\(polyOut)")

    let xattrs = CraftedAAR.pack([
      CraftedAAR.entry(
        "F", "Contents/a", mode: 0o644, data: [1],
        extra: [Array("XATB".utf8) + CraftedAAR.le(5000, 4)]) + [UInt8](repeating: 0, count: 5000)
    ])
    let (xatStatus, xatOut) = try validate("xat.aar", xattrs, ["--max-toc-size", "4096"])
    #expect(xatStatus == 1 && xatOut.contains("extended attributes"), "\(xatOut)")
    let (pathStatus, pathOut) = try validate(
      "paths.aar", CraftedAAR.pack((0..<20).map { CraftedAAR.file("Contents/file-\($0).txt", "x") }),
      ["--max-path-bytes", "200"])
    #expect(pathStatus == 1 && pathOut.contains("paths so far add up"), "\(pathOut)")

    let c1 = dir.appending("c1.aar")
    try writeFile(c1, CraftedAAR.pack([CraftedAAR.file("Contents/a\u{85}b.txt", "x")]))
    let listed = try pkgtool(["info", c1, "--files", "--json"])
    let json = try? JSONSerialization.jsonObject(with: Data(listed.stdout.utf8)) as? [String: Any]
    let names = (json?["files"] as? [[String: Any]])?.compactMap { $0["path"] as? String }
    #expect(names?.contains("Contents/a\u{85}b.txt") == true, "not JSON, or not the name: \(listed.stdout)")
  }
}
