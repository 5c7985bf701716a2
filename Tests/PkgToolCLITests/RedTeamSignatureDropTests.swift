import Foundation
import TestSupport
import Testing

/// Issue 44, part 5: `catalog renew`, `rebase` and `remove` signed with the keys given and
/// silently dropped any other signature the catalog carried. After a rotation, `catalog renew
/// --key OLD` without `--root` exited 0 with a catalog the root's clients all refuse. Each case
/// failed on that code (the edit was written); through the real binary, real files.
extension RedTeamCatalogTests {
  struct CoSigned {
    let dir: TemporaryDirectory
    /// The id of catalog key c2, the co-signer the edits leave out.
    let c2: String
    var catalog: String { dir.appending("catalog.json") }
  }

  /// Catalog keys c1 and c2; `strict/root-1.json` needs both (catalog threshold 2), and
  /// `lenient/root-1.json` lists the same keys with threshold 1. The catalog is published under
  /// the strict root, co-signed by c1 and c2.
  func coSigned() throws -> CoSigned {
    let dir = try TemporaryDirectory()
    try makeTwoBookPackages(in: dir)
    var ids: [String: String] = [:]
    for key in ["root-a", "c1", "c2"] {
      let made = try pkgtool(["keygen", "-o", key + ".key"], in: dir.path)
      #expect(made.status == 0, "\(made.stderr)")
      let id = try #require(made.stdout.range(of: #"id [0-9a-f]{16}\)"#, options: .regularExpression))
      ids[key] = String(made.stdout[id].dropFirst(3).dropLast())
    }
    for (folder, threshold) in [("strict", "2"), ("lenient", "1")] {
      try FileManager.default.createDirectory(atPath: dir.appending(folder), withIntermediateDirectories: true)
      let root = try pkgtool(
        [
          "root", "init", "-o", folder + "/root-1.json", "--root-key", "root-a.key", "--catalog-key", "c1.key.pub",
          "--catalog-key", "c2.key.pub", "--catalog-threshold", threshold, "--expires-in", "365d",
        ], in: dir.path)
      #expect(root.status == 0, "\(root.stderr)")
    }
    let published = try pkgtool(
      [
        "publish", "book 1.0.pkg", "book 1.1.pkg", "--base-url", "https://cdn.example.com/c", "-o", "catalog.json",
        "--key", "c1.key", "--key", "c2.key", "--root", "strict", "-q",
      ], in: dir.path)
    #expect(published.status == 0, "\(published.stderr)")
    return CoSigned(dir: dir, c2: try #require(ids["c2"]))
  }

  /// Exit 2, one line naming `message`, and the folder exactly as before: the catalog intact and
  /// no temporary beside it.
  func expectNothingWritten(_ result: ProcessResult, _ message: String, _ s: CoSigned, before: [String: SnapshotNode])
    throws
  {
    #expect(result.status == 2, "\(result.stdout)\(result.stderr)")
    #expect(result.stderr.contains(message), "\(result.stderr)")
    #expect(result.stderr.split(separator: "\n").count == 1, "\(result.stderr)")
    #expect(try snapshot(s.dir.path) == before)
  }

  func verified(_ s: CoSigned, root: String) throws -> ProcessResult {
    try pkgtool(["catalog", "verify", "catalog.json", "--root", root], in: s.dir.path)
  }

  @Test(arguments: [
    ["renew"], ["rebase", "--base-url", "https://cdn2.example.com/c"], ["remove", "com.example.book", "1.1"],
  ])
  func anEditWithOneCoSignerIsRefusedNamingTheOther(_ edit: [String]) throws {
    let s = try coSigned()
    let command = ["catalog", edit[0], "catalog.json"] + edit.dropFirst()
    let before = try snapshot(s.dir.path)
    try expectNothingWritten(
      try pkgtool(command + ["--key", "c1.key"], in: s.dir.path),
      "catalog \(edit[0]) would drop the signature of key \(s.c2) from 'catalog.json'", s, before: before)
    #expect(try verified(s, root: "strict").status == 0)

    // --root whose threshold one key cannot meet: refused as before.
    try expectNothingWritten(
      try pkgtool(command + ["--key", "c1.key", "--root", "strict"], in: s.dir.path),
      "its threshold is 2", s, before: before)

    // --root whose threshold one key meets: written, and it verifies under that root.
    let lenient = try pkgtool(command + ["--key", "c1.key", "--root", "lenient", "-q"], in: s.dir.path)
    #expect(lenient.status == 0, "\(lenient.stderr)")
    #expect(try verified(s, root: "lenient").status == 0)
    #expect(try snapshot(s.dir.path).keys.sorted() == before.keys.sorted())
  }

  @Test func dropSignatureSaysSoAndIsCheckedAgainstTheCatalog() throws {
    let s = try coSigned()
    let before = try snapshot(s.dir.path)
    let renew = ["catalog", "renew", "catalog.json", "--key", "c1.key"]

    // A --drop-signature that names no signature of the catalog (a typo) is not consent.
    try expectNothingWritten(
      try pkgtool(renew + ["--drop-signature", "0123456789abcdef"], in: s.dir.path),
      "--drop-signature 0123456789abcdef: 'catalog.json' carries no signature by key 0123456789abcdef", s,
      before: before)
    // Nor is one that names a key that signs.
    try expectNothingWritten(
      try pkgtool(
        ["catalog", "renew", "catalog.json", "--key", "c1.key", "--key", "c2.key", "--drop-signature", s.c2],
        in: s.dir.path),
      "--drop-signature \(s.c2) names a key that signs the new catalog", s, before: before)

    let dropped = try pkgtool(renew + ["--drop-signature", s.c2], in: s.dir.path)
    #expect(dropped.status == 0, "\(dropped.stderr)")
    #expect(dropped.stdout.contains("renewed in catalog.json: sequence 1 -> 2"), "\(dropped.stdout)")
    let shown = try pkgtool(["catalog", "show", "catalog.json", "--json"], in: s.dir.path)
    #expect(!shown.stdout.contains(s.c2), "\(shown.stdout)")
    // What the refusal protected: the strict root's clients refuse the catalog now.
    #expect(try verified(s, root: "strict").status == 1)

    // Both keys again: nothing is dropped, nothing to say.
    let both = try pkgtool(["catalog", "renew", "catalog.json", "--key", "c1.key", "--key", "c2.key"], in: s.dir.path)
    #expect(both.status == 0, "\(both.stderr)")
  }
}
