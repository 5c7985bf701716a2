import Foundation
import TestSupport
import Testing

/// What a device remembers of a publisher (docs/catalog.md, "What a device remembers"), tried
/// from outside through the real binary: the highest root version and catalog sequence were kept
/// per product folder, so a product that never saw a rotation (or a newer catalog) let an
/// attacker around it. Each case failed on that code: the attack succeeded.
extension RedTeamCatalogTests {
  /// A folder with one package per `(name, product, version, text)`: `<name>.pkg`, built from a
  /// project of its own whose one file says `text`.
  func trustSetup(_ packages: [(String, String, String, String)]) throws -> TemporaryDirectory {
    let dir = try TemporaryDirectory()
    for (name, product, version, text) in packages {
      let project = "project-" + name
      for arguments in [
        ["init", project, "--product-id", product, "-q"], ["bump", project, "--set", version, "--force", "-q"],
      ] {
        let run = try pkgtool(arguments, in: dir.path)
        #expect(run.status == 0, "\(arguments): \(run.stderr)")
      }
      try writeFile(dir.appending(project + "/Contents/text.txt"), text)
      let built = try pkgtool(["build", project, "-q", "-o", name + ".pkg"], in: dir.path)
      #expect(built.status == 0, "\(built.stderr)")
    }
    return dir
  }

  func run(_ arguments: [String], in dir: TemporaryDirectory) throws {
    let result = try pkgtool(arguments, in: dir.path)
    #expect(result.status == 0, "\(arguments.joined(separator: " ")): \(result.stdout)\(result.stderr)")
  }

  func current(_ dir: TemporaryDirectory, _ product: String) -> String? {
    try? FileManager.default.destinationOfSymbolicLink(atPath: dir.appending("docs/\(product)/current"))
  }

  /// Root 2 retired catalog key c1, which an attacker holds. The device learnt root 2 installing
  /// product A; the attacker withholds root-2.json and serves a catalog signed by c1 alone (its
  /// sequence pushed past the real one). Neither product B, installed before the rotation, nor
  /// product C, never installed, may accept it: the rotation is the publisher's, not A's.
  @Test func aRotationSeenForOneProductHoldsForEveryProductOfThePublisher() throws {
    let dir = try trustSetup([
      ("a", "com.example.a", "1.0", "A\n"), ("b", "com.example.b", "1.0", "B\n"),
      ("evil-b", "com.example.b", "1.1", "the attacker's B\n"),
      ("evil-c", "com.example.c", "1.0", "the attacker's C\n"),
    ])
    for key in ["root", "c1", "c2"] { try run(["keygen", "-o", key + ".key", "-q"], in: dir) }
    try FileManager.default.createDirectory(atPath: dir.appending("roots"), withIntermediateDirectories: true)
    try FileManager.default.createDirectory(atPath: dir.appending("old-roots"), withIntermediateDirectories: true)
    try run(
      [
        "root", "init", "-o", "roots/root-1.json", "--root-key", "root.key", "--catalog-key", "c1.key.pub",
        "--expires-in", "365d", "-q",
      ], in: dir)
    try FileManager.default.copyItem(
      atPath: dir.appending("roots/root-1.json"), toPath: dir.appending("old-roots/root-1.json"))
    let base = ["--base-url", "https://cdn.example.com/c"]
    try run(
      ["publish", "a.pkg", "b.pkg", "--key", "c1.key", "--root", "roots", "-o", "catalog.json", "-q"] + base, in: dir)
    try run(["install", "b.pkg", "--into", "docs", "--catalog", "catalog.json", "--root", "roots"], in: dir)

    // The rotation: root 2 retires c1 for c2; the catalog moves to c2; A is installed under it.
    try run(
      [
        "root", "rotate", "roots/root-1.json", "-o", "roots/root-2.json", "--key", "root.key", "--catalog-key",
        "c2.key.pub", "-q",
      ],
      in: dir)
    try run(["catalog", "renew", "catalog.json", "--key", "c2.key", "--root", "roots", "-q"], in: dir)
    try run(["install", "a.pkg", "--into", "docs", "--catalog", "catalog.json", "--root", "roots"], in: dir)

    // The attacker's catalog, signed by the retired c1 under root 1, at a sequence past the real one.
    try run(
      ["publish", "evil-b.pkg", "evil-c.pkg", "--key", "c1.key", "--root", "old-roots", "-o", "evil.json", "-q"] + base,
      in: dir)
    for _ in 0..<3 {
      try run(["catalog", "renew", "evil.json", "--key", "c1.key", "--root", "old-roots", "-q"], in: dir)
    }
    let before = try snapshot(dir.appending("docs"))
    for package in ["evil-b.pkg", "evil-c.pkg"] {
      let attack = try pkgtool(
        ["install", package, "--into", "docs", "--catalog", "evil.json", "--root", "old-roots"], in: dir.path)
      #expect(attack.status == 1, "\(package): \(attack.stdout)\(attack.stderr)")
      #expect(attack.stderr.contains("the root's version 1 is lower than 2"), "\(package): \(attack.stderr)")
      #expect(attack.stderr.contains("an old root replayed"), "\(package): \(attack.stderr)")
    }
    #expect(current(dir, "com.example.b") == "1.0")
    #expect(current(dir, "com.example.c") == nil)
    #expect(try snapshot(dir.appending("docs")) == before)
  }

  /// Sequence 2 withdrew B 1.1 and the device used sequence 3 for product A; the replayed
  /// sequence-1 catalog, not yet expired, must not install B 1.1.
  @Test func aSequenceUsedForOneProductHoldsForEveryProductOfThePublisher() throws {
    let dir = try trustSetup([
      ("a", "com.example.a", "1.0", "A\n"), ("b", "com.example.b", "1.1", "B, withdrawn\n"),
    ])
    try run(["keygen", "-o", "signing.key", "-q"], in: dir)
    let base = ["--base-url", "https://cdn.example.com/c"]
    try run(["publish", "a.pkg", "b.pkg", "--key", "signing.key", "-o", "catalog.json", "-q"] + base, in: dir)
    try FileManager.default.copyItem(atPath: dir.appending("catalog.json"), toPath: dir.appending("catalog-1.json"))
    try run(["catalog", "remove", "catalog.json", "com.example.b", "1.1", "--key", "signing.key", "-q"], in: dir)
    try run(["catalog", "renew", "catalog.json", "--key", "signing.key", "-q"], in: dir)
    let trusted = ["--into", "docs", "--public-key", "signing.key.pub"]
    try run(["install", "a.pkg", "--catalog", "catalog.json"] + trusted, in: dir)

    let before = try snapshot(dir.appending("docs"))
    let replay = try pkgtool(["install", "b.pkg", "--catalog", "catalog-1.json"] + trusted, in: dir.path)
    #expect(replay.status == 1, "\(replay.stdout)\(replay.stderr)")
    #expect(replay.stderr.contains("the catalog's sequence 1 is lower than 3"), "\(replay.stderr)")
    #expect(replay.stderr.contains("an old catalog replayed"), "\(replay.stderr)")
    #expect(current(dir, "com.example.b") == nil)
    #expect(try snapshot(dir.appending("docs")) == before)
  }

  /// A documents folder as an earlier pkgtool left it (the highest root version and catalog
  /// sequence in each product's `.pkgtool/`): the first install of another product takes the
  /// highest of them as the publisher's, and refuses a lower root version or sequence; the old
  /// files stay as they were.
  @Test func recordsAnEarlierVersionKeptPerProductAreTheFloor() throws {
    let dir = try trustSetup([
      ("a", "com.example.a", "1.0", "A\n"), ("b", "com.example.b", "1.0", "B\n"),
    ])
    for key in ["root", "c1"] { try run(["keygen", "-o", key + ".key", "-q"], in: dir) }
    try FileManager.default.createDirectory(atPath: dir.appending("roots"), withIntermediateDirectories: true)
    try run(
      [
        "root", "init", "-o", "roots/root-1.json", "--root-key", "root.key", "--catalog-key", "c1.key.pub",
        "--expires-in", "365d", "-q",
      ], in: dir)
    try run(
      [
        "publish", "a.pkg", "b.pkg", "--key", "c1.key", "--root", "roots", "-o", "catalog.json", "-q", "--base-url",
        "https://cdn.example.com/c",
      ],
      in: dir)
    try FileManager.default.copyItem(atPath: dir.appending("catalog.json"), toPath: dir.appending("catalog-1.json"))
    try run(["install", "a.pkg", "--into", "docs", "--catalog", "catalog.json", "--root", "roots"], in: dir)
    // What an earlier pkgtool wrote: nothing in docs/.pkgtool, the numbers in A's folder.
    try? FileManager.default.removeItem(atPath: dir.appending("docs/.pkgtool"))
    try writeFile(dir.appending("docs/com.example.a/.pkgtool/root-version"), "2\n")
    try writeFile(dir.appending("docs/com.example.a/.pkgtool/catalog-sequence"), "1\n")
    let before = try snapshot(dir.appending("docs"))
    let rollback = try pkgtool(
      ["install", "b.pkg", "--into", "docs", "--catalog", "catalog.json", "--root", "roots"], in: dir.path)
    #expect(rollback.status == 1, "\(rollback.stdout)\(rollback.stderr)")
    #expect(rollback.stderr.contains("the root's version 1 is lower than 2"), "\(rollback.stderr)")
    #expect(try snapshot(dir.appending("docs")) == before)

    try writeFile(dir.appending("docs/com.example.a/.pkgtool/root-version"), "1\n")
    try writeFile(dir.appending("docs/com.example.a/.pkgtool/catalog-sequence"), "5\n")
    let replay = try pkgtool(
      ["install", "b.pkg", "--into", "docs", "--catalog", "catalog.json", "--root", "roots"], in: dir.path)
    #expect(replay.status == 1, "\(replay.stdout)\(replay.stderr)")
    #expect(replay.stderr.contains("the catalog's sequence 1 is lower than 5"), "\(replay.stderr)")
    #expect(current(dir, "com.example.b") == nil)

    // Once the catalog is past them, the install goes ahead and the folder keeps the numbers.
    for _ in 0..<4 {
      try run(["catalog", "renew", "catalog.json", "--key", "c1.key", "--root", "roots", "-q"], in: dir)
    }
    try run(["install", "b.pkg", "--into", "docs", "--catalog", "catalog.json", "--root", "roots"], in: dir)
    #expect(current(dir, "com.example.b") == "1.0")
    #expect(try readFile(dir.appending("docs/com.example.a/.pkgtool/catalog-sequence")) == Array("5\n".utf8))
    // The folder's record holds them now: without the old files, a replay is still refused.
    try FileManager.default.removeItem(atPath: dir.appending("docs/com.example.a/.pkgtool/catalog-sequence"))
    try FileManager.default.removeItem(atPath: dir.appending("docs/com.example.a/.pkgtool/root-version"))
    let older = try pkgtool(
      ["install", "a.pkg", "--into", "docs", "--catalog", "catalog-1.json", "--root", "roots"], in: dir.path)
    #expect(older.status == 1, "\(older.stdout)\(older.stderr)")
    #expect(older.stderr.contains("the catalog's sequence 1 is lower than 5"), "\(older.stderr)")
  }

  /// A damaged shared record stops the install (exit 2) and names the file, instead of turning
  /// the checks off.
  @Test func aDamagedTrustRecordStopsTheInstall() throws {
    let dir = try trustSetup([("a", "com.example.a", "1.0", "A\n"), ("b", "com.example.b", "1.0", "B\n")])
    try run(["keygen", "-o", "signing.key", "-q"], in: dir)
    try run(
      [
        "publish", "a.pkg", "b.pkg", "--key", "signing.key", "-o", "catalog.json", "-q", "--base-url",
        "https://cdn.example.com/c",
      ],
      in: dir)
    let trusted = ["--into", "docs", "--catalog", "catalog.json", "--public-key", "signing.key.pub"]
    try run(["install", "a.pkg"] + trusted, in: dir)
    for damage in ["", "{", "{\"format\" : 1}", "\u{FEFF}{}", "3\n"] {
      try writeFile(dir.appending("docs/.pkgtool/trust.json"), damage)
      let before = try snapshot(dir.appending("docs"))
      let stopped = try pkgtool(["install", "b.pkg"] + trusted, in: dir.path)
      #expect(stopped.status == 2, "\(damage.debugDescription): \(stopped.stdout)\(stopped.stderr)")
      #expect(
        stopped.stderr.contains("the install record 'docs/.pkgtool/trust.json' is damaged"),
        "\(damage.debugDescription): \(stopped.stderr)")
      #expect(current(dir, "com.example.b") == nil)
      #expect(try snapshot(dir.appending("docs")) == before)
    }
  }
}

/// The highest `field` (`rootVersion` or `catalogSequence`) that the trust record of the
/// documents folder `docs` keeps under any anchor; nil when none does.
func trustRecordHighest(_ field: String, in docs: String) throws -> Int64? {
  let bytes = try readFile(docs + "/.pkgtool/trust.json")
  let record = try JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any]
  let anchors = record?["anchors"] as? [String: [String: Any]] ?? [:]
  return anchors.values.compactMap { ($0[field] as? NSNumber)?.int64Value }.max()
}
