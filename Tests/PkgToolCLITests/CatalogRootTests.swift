import Foundation
import HostedContent
import TestSupport
import Testing

/// Trust beyond one key (issue 32), through the real binary: `root init/rotate/show/verify`,
/// catalogs signed by a threshold of catalog keys, clients given `--root`; every step checked
/// by pkgtool and by the independent Python check (scripts/catalog-crosscheck.py `roots` and
/// `verify-root`). Each refusal exits 1 (or 2) with one line and changes nothing on disk.
@Suite struct CatalogRootTests {
  struct Setup {
    let dir: TemporaryDirectory
    let packages = ["book 1.0.pkg", "book 1.1.pkg"]
    func path(_ name: String) -> String { dir.appending(name) }
  }

  /// Two packages, keys root-a, root-b, root-c (root role), c1, c2, c3 (catalog role), and
  /// `roots/root-1.json`: root threshold 2 of root-a and root-b, catalog threshold 2 of c1, c2.
  func setup() throws -> Setup {
    let dir = try TemporaryDirectory()
    try makeTwoBookPackages(in: dir)
    for key in ["root-a", "root-b", "root-c", "c1", "c2", "c3"] {
      #expect(try pkgtool(["keygen", "-o", key + ".key", "-q"], in: dir.path).status == 0)
    }
    try FileManager.default.createDirectory(atPath: dir.appending("roots"), withIntermediateDirectories: true)
    let made = try pkgtool(
      [
        "root", "init", "-o", "roots/root-1.json", "--root-key", "root-a.key", "--root-key", "root-b.key",
        "--root-threshold", "2", "--catalog-key", "c1.key.pub", "--catalog-key", "c2.key.pub",
        "--catalog-threshold", "2", "--expires-in", "365d",
      ], in: dir.path)
    #expect(made.status == 0, "\(made.stderr)")
    #expect(made.stdout.contains("root version 1, expires 20"), "\(made.stdout)")
    return Setup(dir: dir)
  }

  let underRoot1 = ["--key", "c1.key", "--key", "c2.key", "--root", "roots/root-1.json"]

  func publish(_ s: Setup, _ packages: [String], keys: [String]) throws -> ProcessResult {
    try pkgtool(
      ["publish"] + packages + ["--base-url", "https://cdn.example.com/content/", "-o", "catalog.json"] + keys,
      in: s.dir.path)
  }

  func python(_ arguments: [String], in s: Setup) throws -> ProcessResult {
    try runProcess(
      "/usr/bin/env", ["python3", repositoryRoot + "/scripts/catalog-crosscheck.py"] + arguments, in: s.dir.path)
  }

  /// pkgtool (`root verify`, `catalog verify --root`) and Python both accept the roots and the catalog.
  func expectValid(_ s: Setup, roots: [String], sequence: Int64, rootVersion: Int64) throws {
    let root = try pkgtool(["root", "verify"] + roots, in: s.dir.path)
    #expect(root.status == 0, "\(root.stderr)")
    #expect(root.stdout.hasPrefix("valid: root version \(rootVersion), "), "\(root.stdout)")
    let catalog = try pkgtool(
      ["catalog", "verify", "catalog.json"] + roots.flatMap { ["--root", $0] }, in: s.dir.path)
    #expect(catalog.status == 0, "\(catalog.stderr)")
    #expect(
      catalog.stdout.contains("sequence \(sequence), expires 20")
        && catalog.stdout.contains("root version \(rootVersion) (2 of 2 catalog keys)"), "\(catalog.stdout)")
    let files = roots.flatMap { name in
      name.hasSuffix(".json")
        ? [name]
        : ((try? FileManager.default.contentsOfDirectory(atPath: s.path(name))) ?? []).sorted().map { name + "/" + $0 }
    }
    let pyRoots = try python(["roots"] + files, in: s)
    #expect(pyRoots.status == 0 && pyRoots.stdout.contains("root version \(rootVersion)"), "\(pyRoots.stderr)")
    let pyCatalog = try python(["verify-root", "catalog.json"] + files, in: s)
    #expect(pyCatalog.status == 0, "\(pyCatalog.stderr)")
    #expect(
      pyCatalog.stdout.contains("verified: sequence \(sequence), root version \(rootVersion), 2 of 2"),
      "\(pyCatalog.stdout)")
  }

  /// Exit `status`, exactly one line on stderr containing `message` (a usage error adds the
  /// usual "Run 'pkgtool --help'" line), and `before` unchanged.
  func expectRefused(
    _ result: ProcessResult, status: Int32 = 1, _ message: String, _ s: Setup, unchanged before: [String: SnapshotNode]
  ) throws {
    #expect(result.status == status, "\(result.stdout)\(result.stderr)")
    #expect(result.stderr.contains(message), "\(result.stderr)")
    #expect(
      result.stderr.split(separator: "\n").filter { !$0.hasPrefix("Run 'pkgtool --help'") }.count == 1,
      "\(result.stderr)")
    #expect(try snapshot(s.dir.path) == before)
  }

  @Test func aCatalogLivesThroughAMoveAKeyRotationAWithdrawalAndAnExpiry() throws {
    let s = try setup()
    // Two distinct catalog keys sign: the root's catalog threshold is 2.
    let published = try publish(s, s.packages, keys: underRoot1)
    #expect(published.status == 0, "\(published.stderr)")
    #expect(published.stdout.contains("signed by keys "), "\(published.stdout)")
    try expectValid(s, roots: ["roots/root-1.json"], sequence: 1, rootVersion: 1)
    let shown = try pkgtool(["root", "show", "roots/root-1.json"], in: s.dir.path)
    #expect(shown.status == 0 && shown.stdout.contains("catalog keys (2 must sign): "), "\(shown.stdout)")

    // A move to another CDN.
    let moved = try pkgtool(
      ["catalog", "rebase", "catalog.json", "--base-url", "https://cdn2.example.net/c"] + underRoot1, in: s.dir.path)
    #expect(moved.status == 0, "\(moved.stderr)")
    try expectValid(s, roots: ["roots/root-1.json"], sequence: 2, rootVersion: 1)
    let installed = try pkgtool(
      ["install", s.packages[0], "--into", "docs", "--catalog", "catalog.json", "--root", "roots"], in: s.dir.path)
    #expect(installed.status == 0, "\(installed.stderr)")
    #expect(try trustRecordHighest("rootVersion", in: s.path("docs")) == 1)
    let signedByC1 = try readFile(s.path("catalog.json"))

    // A key rotation: root version 2 retires c1 for c3, signed by both old root keys.
    let rotated = try pkgtool(
      [
        "root", "rotate", "roots/root-1.json", "-o", "roots/root-2.json", "--key", "root-a.key", "--key", "root-b.key",
        "--catalog-key", "c2.key.pub", "--catalog-key", "c3.key.pub",
      ], in: s.dir.path)
    #expect(rotated.status == 0, "\(rotated.stderr)")
    #expect(rotated.stdout.contains("root version 2, "), "\(rotated.stdout)")
    // Under root 2, the catalog signed by c1 and c2 no longer meets the threshold.
    let stale = try pkgtool(["catalog", "verify", "catalog.json", "--root", "roots"], in: s.dir.path)
    #expect(
      stale.status == 1 && stale.stderr.contains("1 valid signature(s) by catalog keys of root version 2; 2 needed"))
    let renewed = try pkgtool(
      ["catalog", "renew", "catalog.json", "--key", "c2.key", "--key", "c3.key", "--root", "roots"], in: s.dir.path)
    #expect(renewed.status == 0, "\(renewed.stderr)")
    try expectValid(s, roots: ["roots"], sequence: 3, rootVersion: 2)
    try expectValid(s, roots: ["roots/root-1.json", "roots/root-2.json"], sequence: 3, rootVersion: 2)
    let upgraded = try pkgtool(
      ["install", s.packages[1], "--into", "docs", "--catalog", "catalog.json", "--root", "roots"], in: s.dir.path)
    #expect(upgraded.status == 0, "\(upgraded.stderr)")
    #expect(try trustRecordHighest("rootVersion", in: s.path("docs")) == 2)
    #expect(signedByC1 != (try readFile(s.path("catalog.json"))))

    // A withdrawn version.
    let removed = try pkgtool(
      [
        "catalog", "remove", "catalog.json", "com.example.book", "1.1", "--key", "c2.key", "--key", "c3.key", "--root",
        "roots",
      ], in: s.dir.path)
    #expect(removed.status == 0, "\(removed.stderr)")
    try expectValid(s, roots: ["roots"], sequence: 4, rootVersion: 2)
    let withdrawn = try pkgtool(
      ["unpack", s.packages[1], "-o", "out", "--catalog", "catalog.json", "--root", "roots"], in: s.dir.path)
    #expect(withdrawn.status == 1 && withdrawn.stderr.contains("not in the catalog"), "\(withdrawn.stderr)")

    // An expiry.
    let short = try pkgtool(
      [
        "catalog", "renew", "catalog.json", "--key", "c2.key", "--key", "c3.key", "--root", "roots", "--expires-in",
        "1s",
      ], in: s.dir.path)
    #expect(short.status == 0, "\(short.stderr)")
    Thread.sleep(forTimeInterval: 2.2)
    let expired = try pkgtool(["catalog", "verify", "catalog.json", "--root", "roots"], in: s.dir.path)
    #expect(expired.status == 1 && expired.stderr.contains("the catalog expired at 20"), "\(expired.stderr)")
    let pyExpired = try python(["verify-root", "catalog.json", "roots/root-1.json", "roots/root-2.json"], in: s)
    #expect(pyExpired.status == 1 && pyExpired.stderr.contains("expired"), "\(pyExpired.stderr)")
  }

  /// Several distinct keys sign a catalog; the same key twice is still refused.
  @Test func theSameKeyTwiceIsRefusedDistinctKeysSign() throws {
    let s = try setup()
    let before = try snapshot(s.dir.path)
    let twice = try publish(s, [s.packages[0]], keys: ["--key", "c1.key", "--key", "c1.key"])
    try expectRefused(twice, status: 2, "--key 'c1.key' was given twice", s, unchanged: before)
    try FileManager.default.copyItem(atPath: s.path("c1.key"), toPath: s.path("copy.key"))
    let before2 = try snapshot(s.dir.path)
    let same = try publish(s, [s.packages[0]], keys: ["--key", "c1.key", "--key", "copy.key"])
    try expectRefused(same, status: 2, "hold the same key", s, unchanged: before2)
    // Too few catalog keys for the root: refused before anything is written.
    let few = try publish(s, [s.packages[0]], keys: ["--key", "c1.key", "--root", "roots/root-1.json"])
    try expectRefused(
      few, status: 2, "would carry 1 signature(s) by catalog keys of root version 1", s, unchanged: before2)
  }

  /// The other way round: a root written and signed by Python (its own canonical form) verifies
  /// in pkgtool, and a catalog signed under it installs.
  @Test func aRootWrittenByPythonIsAccepted() throws {
    let s = try setup()
    let made = try python(["make-root", "py-root.json", "root-c.key", "c3.key.pub"], in: s)
    #expect(made.status == 0, "\(made.stderr)")
    let verified = try pkgtool(["root", "verify", "py-root.json"], in: s.dir.path)
    #expect(verified.status == 0 && verified.stdout.hasPrefix("valid: root version 1, "), "\(verified.stderr)")
    #expect(try publish(s, s.packages, keys: ["--key", "c3.key", "--root", "py-root.json"]).status == 0)
    let installed = try pkgtool(
      ["install", s.packages[1], "--into", "docs", "--catalog", "catalog.json", "--root", "py-root.json"],
      in: s.dir.path)
    #expect(installed.status == 0, "\(installed.stderr)")
  }

  @Test func aTamperedRootIsRefused() throws {
    let s = try setup()
    #expect(try publish(s, s.packages, keys: underRoot1).status == 0)
    var text = String(decoding: try readFile(s.path("roots/root-1.json")), as: UTF8.self)
    let expires = try #require(text.range(of: "\"expires\" : \"20"))
    text.replaceSubrange(expires, with: "\"expires\" : \"21")
    try writeFile(s.path("roots/root-1.json"), text)
    let before = try snapshot(s.dir.path)
    try expectRefused(
      try pkgtool(["root", "verify", "roots/root-1.json"], in: s.dir.path),
      "carries 0 valid signature(s) by its own root keys; 2 needed", s, unchanged: before)
    try expectRefused(
      try pkgtool(
        ["install", s.packages[0], "--into", "docs", "--catalog", "catalog.json", "--root", "roots"], in: s.dir.path),
      "pkgtool: refused: the root cannot be trusted: ", s, unchanged: before)
    #expect(try python(["roots", "roots/root-1.json"], in: s).status == 1)
  }

  @Test func aTamperedCatalogIsRefused() throws {
    let s = try setup()
    #expect(try publish(s, s.packages, keys: underRoot1).status == 0)
    var text = String(decoding: try readFile(s.path("catalog.json")), as: UTF8.self)
    text = text.replacingOccurrences(of: "https://cdn.example.com/", with: "https://cdn.example.org/")
    try writeFile(s.path("catalog.json"), text)
    let before = try snapshot(s.dir.path)
    try expectRefused(
      try pkgtool(
        ["install", s.packages[0], "--into", "docs", "--catalog", "catalog.json", "--root", "roots"], in: s.dir.path),
      "carries 0 valid signature(s) by catalog keys of root version 1; 2 needed; the signature of key", s,
      unchanged: before)
    try expectRefused(
      try pkgtool(["catalog", "verify", "catalog.json", "--root", "roots"], in: s.dir.path),
      "does not verify: changed after signing", s, unchanged: before)
    #expect(try python(["verify-root", "catalog.json", "roots/root-1.json"], in: s).status == 1)
  }

  @Test func aRotationWithoutTheOldThresholdIsRefused() throws {
    let s = try setup()
    #expect(try publish(s, s.packages, keys: underRoot1).status == 0)
    // The command: one of two old root keys is not enough.
    let before = try snapshot(s.dir.path)
    try expectRefused(
      try pkgtool(
        [
          "root", "rotate", "roots/root-1.json", "-o", "roots/root-2.json", "--key", "root-a.key", "--root-key",
          "root-c.key", "--root-threshold", "1",
        ], in: s.dir.path),
      status: 2, "carry 1 signature(s) by root keys of the old root (version 1); its threshold is 2", s,
      unchanged: before)
    // A client given a version 2 signed only by its own new key (whoever holds root-c).
    let rootC = try CatalogSigningKey(contentsOf: s.path("root-c.key"))
    let forged = try Root(
      version: 2, rootKeys: [rootC.publicKey], rootThreshold: 1,
      catalogKeys: [try CatalogPublicKey(contentsOf: s.path("c3.key.pub"))], catalogThreshold: 1, lifetime: 86_400)
    try Data(try RootFile.encode(forged, signedWith: [rootC])).write(
      to: URL(fileURLWithPath: s.path("roots/root-2.json")))
    let before2 = try snapshot(s.dir.path)
    try expectRefused(
      try pkgtool(["root", "verify", "roots"], in: s.dir.path),
      "carries 0 valid signature(s) by root keys of version 1 (2 needed to rotate); 2 needed", s, unchanged: before2)
    try expectRefused(
      try pkgtool(
        ["install", s.packages[0], "--into", "docs", "--catalog", "catalog.json", "--root", "roots"], in: s.dir.path),
      "root keys of version 1", s, unchanged: before2)
    let py = try python(["roots", "roots/root-1.json", "roots/root-2.json"], in: s)
    #expect(py.status == 1 && py.stderr.contains("lacks the threshold of version 1"), "\(py.stderr)")
  }

  @Test func anExpiredRootIsRefused() throws {
    let s = try setup()
    let rootA = try CatalogSigningKey(contentsOf: s.path("root-a.key"))
    let old = try Root(
      version: 1, rootKeys: [rootA.publicKey], rootThreshold: 1,
      catalogKeys: [try CatalogPublicKey(contentsOf: s.path("c1.key.pub"))], catalogThreshold: 1, lifetime: 60,
      now: Date(timeIntervalSinceNow: -3600))
    try Data(try RootFile.encode(old, signedWith: [rootA])).write(to: URL(fileURLWithPath: s.path("old-root.json")))
    #expect(try publish(s, [s.packages[0]], keys: ["--key", "c1.key"]).status == 0)
    let before = try snapshot(s.dir.path)
    try expectRefused(
      try pkgtool(["root", "verify", "old-root.json"], in: s.dir.path), "root version 1 expired at 20", s,
      unchanged: before)
    try expectRefused(
      try pkgtool(
        ["unpack", s.packages[0], "-o", "out", "--catalog", "catalog.json", "--root", "old-root.json"], in: s.dir.path),
      "root version 1 expired at 20", s, unchanged: before)
    #expect(try python(["verify-root", "catalog.json", "old-root.json"], in: s).status == 1)
    // The publisher can still rotate it: its keys sign the next version.
    let rotated = try pkgtool(
      ["root", "rotate", "old-root.json", "-o", "new-root.json", "--key", "root-a.key"], in: s.dir.path)
    #expect(rotated.status == 0, "\(rotated.stderr)")
    #expect(try pkgtool(["root", "verify", "old-root.json", "new-root.json"], in: s.dir.path).status == 0)
  }

  @Test func aCatalogBelowTheThresholdOrSignedByARootKeyIsRefused() throws {
    let s = try setup()
    // One catalog key of the two the root requires.
    #expect(try publish(s, s.packages, keys: ["--key", "c1.key"]).status == 0)
    let before = try snapshot(s.dir.path)
    try expectRefused(
      try pkgtool(["catalog", "verify", "catalog.json", "--root", "roots/root-1.json"], in: s.dir.path),
      "carries 1 valid signature(s) by catalog keys of root version 1; 2 needed", s, unchanged: before)
    try expectRefused(
      try pkgtool(
        ["install", s.packages[0], "--into", "docs", "--catalog", "catalog.json", "--root", "roots"], in: s.dir.path),
      "2 needed", s, unchanged: before)
    let py = try python(["verify-root", "catalog.json", "roots/root-1.json"], in: s)
    #expect(py.status == 1 && py.stderr.contains("1 valid catalog signature(s); 2 needed"), "\(py.stderr)")
    // The one signature listed twice still counts once: the threshold is of distinct keys.
    var document = try #require(
      try JSONSerialization.jsonObject(with: Data(try readFile(s.path("catalog.json")))) as? [String: Any])
    let signatures = try #require(document["signatures"] as? [Any])
    document["signatures"] = signatures + signatures
    try JSONSerialization.data(withJSONObject: document, options: [.sortedKeys, .withoutEscapingSlashes]).write(
      to: URL(fileURLWithPath: s.path("doubled.json")))
    let before1 = try snapshot(s.dir.path)
    try expectRefused(
      try pkgtool(["catalog", "verify", "doubled.json", "--root", "roots"], in: s.dir.path),
      "carries 1 valid signature(s) by catalog keys of root version 1; 2 needed", s, unchanged: before1)
    #expect(try python(["verify-root", "doubled.json", "roots/root-1.json"], in: s).status == 1)
    // A root key plus a catalog key: the root key does not count for catalogs.
    try FileManager.default.removeItem(atPath: s.path("catalog.json"))
    #expect(try publish(s, s.packages, keys: ["--key", "c1.key", "--key", "root-a.key"]).status == 0)
    let rootA = try CatalogPublicKey(contentsOf: s.path("root-a.key.pub")).keyID
    let before2 = try snapshot(s.dir.path)
    try expectRefused(
      try pkgtool(["catalog", "verify", "catalog.json", "--root", "roots"], in: s.dir.path),
      "key \(rootA) signed it, but the root lists it only to sign roots", s, unchanged: before2)
    #expect(try python(["verify-root", "catalog.json", "roots/root-1.json"], in: s).status == 1)
  }

  @Test func aKeyIdCollisionIsRefused() throws {
    let s = try setup()
    let rootA = try CatalogSigningKey(contentsOf: s.path("root-a.key"))
    let c1 = try CatalogPublicKey(contentsOf: s.path("c1.key.pub"))
    let c2 = try CatalogPublicKey(contentsOf: s.path("c2.key.pub"))
    // c2 listed under c1's id, correctly signed by the root key.
    var root = try Root(
      version: 1, rootKeys: [rootA.publicKey], rootThreshold: 1, catalogKeys: [c1], catalogThreshold: 1,
      lifetime: 86_400)
    root.keys[c1.keyID] = Root.Key(algorithm: "ed25519", publicKey: c2.base64)
    try Data(try RootFile.encode(root, signedWith: [rootA])).write(to: URL(fileURLWithPath: s.path("swapped.json")))
    // Two keys under one id: the name twice in `keys`.
    var text = String(decoding: try readFile(s.path("roots/root-1.json")), as: UTF8.self)
    let keys = try #require(text.range(of: "\"keys\" : {"))
    text.insert(
      contentsOf: "\"\(c1.keyID)\" : {\"algorithm\" : \"ed25519\", \"publicKey\" : \"\(c2.base64)\"},",
      at: keys.upperBound)
    try writeFile(s.path("twice.json"), text)
    let before = try snapshot(s.dir.path)
    try expectRefused(
      try pkgtool(["root", "verify", "swapped.json"], in: s.dir.path),
      "key-id collision: root version 1 lists under the id \(c1.keyID) a key whose id is \(c2.keyID)", s,
      unchanged: before)
    try expectRefused(
      try pkgtool(["root", "verify", "twice.json"], in: s.dir.path),
      "the member name \"\(c1.keyID)\" appears twice in one object (two keys under one key id", s, unchanged: before)
    #expect(try python(["roots", "swapped.json"], in: s).status == 1)
    #expect(try python(["roots", "twice.json"], in: s).status == 1)
  }

  @Test func aLowerRootVersionThanTheOneSeenIsRefused() throws {
    let s = try setup()
    #expect(try publish(s, s.packages, keys: underRoot1).status == 0)
    try FileManager.default.copyItem(atPath: s.path("catalog.json"), toPath: s.path("catalog-v1.json"))
    #expect(
      try pkgtool(
        [
          "root", "rotate", "roots/root-1.json", "-o", "roots/root-2.json", "--key", "root-a.key", "--key",
          "root-b.key", "-q",
        ], in: s.dir.path
      ).status == 0)
    let installed = try pkgtool(
      ["install", s.packages[0], "--into", "docs", "--catalog", "catalog.json", "--root", "roots"], in: s.dir.path)
    #expect(installed.status == 0, "\(installed.stderr)")
    #expect(try trustRecordHighest("rootVersion", in: s.path("docs")) == 2)
    // The same catalog, but the client is handed only root version 1 (a rollback).
    let before = try snapshot(s.dir.path)
    try expectRefused(
      try pkgtool(
        ["install", s.packages[1], "--into", "docs", "--catalog", "catalog-v1.json", "--root", "roots/root-1.json"],
        in: s.dir.path),
      "the root's version 1 is lower than 2, the newest 'docs' accepted from this publisher (for any product): an old root replayed",
      s,
      unchanged: before)
  }

  /// Found by an attacker's look at the root (each failed before its fix): a damaged record of
  /// root versions (`.pkgtool/root-version`, now `DOCS/.pkgtool/trust.json`) turned the rollback
  /// check off and was lowered; `--public-key`
  /// skipped the root a product was installed under; `expires` with an offset, `24:00` or
  /// February 30 was read; and the file forms Python refuses (a trailing comma, a byte-order
  /// mark, line breaks in base64, a signature that is not an object) were accepted.
  @Test func whatTheRedTeamFoundIsRefused() throws {
    let s = try setup()
    #expect(try publish(s, s.packages, keys: underRoot1).status == 0)
    let installed = try pkgtool(
      ["install", s.packages[0], "--into", "docs", "--catalog", "catalog.json", "--root", "roots/root-1.json"],
      in: s.dir.path)
    #expect(installed.status == 0, "\(installed.stderr)")

    // One key cannot stand in for the root the product was installed under.
    #expect(try pkgtool(["keygen", "-o", "solo.key", "-q"], in: s.dir.path).status == 0)
    let solo = try pkgtool(
      ["publish"] + s.packages + [
        "--base-url", "https://cdn.example.com/content/", "-o", "solo.json", "--key", "solo.key",
      ], in: s.dir.path)
    #expect(solo.status == 0, "\(solo.stderr)")
    var before = try snapshot(s.dir.path)
    try expectRefused(
      try pkgtool(
        ["install", s.packages[1], "--into", "docs", "--catalog", "solo.json", "--public-key", "solo.key.pub"],
        in: s.dir.path),
      "content in 'docs' was installed under root version 1; check this catalog with --root", s, unchanged: before)

    // A damaged record stops the install instead of switching the check off.
    try writeFile(s.path("docs/.pkgtool/trust.json"), "2 \n#")
    before = try snapshot(s.dir.path)
    try expectRefused(
      try pkgtool(
        ["install", s.packages[1], "--into", "docs", "--catalog", "catalog.json", "--root", "roots/root-1.json"],
        in: s.dir.path), status: 2, "the install record 'docs/.pkgtool/trust.json' is damaged", s, unchanged: before)

    // Expiry: only YYYY-MM-DDTHH:MM:SSZ naming a real moment.
    let text = String(decoding: try readFile(s.path("roots/root-1.json")), as: UTF8.self)
    let expires = try #require(text.range(of: #""expires" : "[^"]*""#, options: .regularExpression))
    for bad in ["2027-01-01T00:00:00+05:00", "2027-02-30T00:00:00Z", "2027-01-01T24:00:00Z", "2027-1-1T0:0:0Z"] {
      try writeFile(s.path("bad-expiry.json"), text.replacingCharacters(in: expires, with: "\"expires\" : \"\(bad)\""))
      let verified = try pkgtool(["root", "verify", "bad-expiry.json"], in: s.dir.path)
      #expect(verified.status == 1, "\(bad): \(verified.stdout)")
      #expect(verified.stderr.contains("is not an RFC 3339 UTC time"), "\(bad): \(verified.stderr)")
      #expect(try python(["roots", "bad-expiry.json"], in: s).status == 1, "\(bad)")
    }

    // A missing member is named plainly, not in the decoder's words.
    try writeFile(s.path("no-expiry.json"), text.replacingCharacters(in: expires, with: "\"expiry\" : \"soon\""))
    let missing = try pkgtool(["root", "verify", "no-expiry.json"], in: s.dir.path)
    #expect(missing.status == 1)
    #expect(missing.stderr.contains("is not a root: the member 'expires' is missing"), "\(missing.stderr)")
    #expect(!missing.stderr.contains("CodingKeys"), "\(missing.stderr)")

    // File forms only some JSON readers take.
    let catalog = String(decoding: try readFile(s.path("catalog.json")), as: UTF8.self)
    let signature = try #require(catalog.range(of: #""signature" : "[A-Za-z0-9+/]{20}"#, options: .regularExpression))
    let forms: [(String, String)] = [
      ("trailing comma", catalog.replacingOccurrences(of: "\"sequence\" : 1\n", with: "\"sequence\" : 1,\n")),
      ("byte-order mark", "\u{FEFF}" + catalog),
      ("line break in base64", catalog.replacingCharacters(in: signature, with: String(catalog[signature]) + "\\n")),
      (
        "signature not an object", catalog.replacingOccurrences(of: "\"signatures\" : [", with: "\"signatures\" : [ 1,")
      ),
    ]
    for (name, form) in forms {
      #expect(form != catalog, "\(name): the test did not change the file")
      try writeFile(s.path("form.json"), form)
      let verified = try pkgtool(["catalog", "verify", "form.json", "--root", "roots/root-1.json"], in: s.dir.path)
      #expect(verified.status == 1, "\(name): \(verified.stdout)")
    }
  }
}
