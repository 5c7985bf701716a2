import Foundation
import HostedContent
import TestSupport
import Testing

/// A catalog with a life (issue 32), through the real binary: `catalog show/verify/remove/
/// rebase/renew`, `publish --previous/--expires-in`, and expiry; every step checked by
/// `pkgtool catalog verify` and by the independent Python check (scripts/catalog-crosscheck.py).
@Suite struct CatalogLifeTests {
  struct Setup {
    let dir: TemporaryDirectory
    /// com.example.book 1.0 and 1.1.
    let packages = ["book 1.0.pkg", "book 1.1.pkg"]
  }

  func setup() throws -> Setup {
    let dir = try TemporaryDirectory()
    try makeTwoBookPackages(in: dir)
    #expect(try pkgtool(["keygen", "-o", "signing.key", "-q"], in: dir.path).status == 0)
    return Setup(dir: dir)
  }

  func publish(_ s: Setup, _ packages: [String], extra: [String] = []) throws -> ProcessResult {
    try pkgtool(
      ["publish"] + packages + [
        "--key", "signing.key", "--base-url", "https://cdn.example.com/content/", "-o", "catalog.json",
      ] + extra, in: s.dir.path)
  }

  func crosscheck(_ arguments: [String], in s: Setup) throws -> ProcessResult {
    try runProcess(
      "/usr/bin/env", ["python3", repositoryRoot + "/scripts/catalog-crosscheck.py"] + arguments, in: s.dir.path)
  }

  /// pkgtool and Python both accept the catalog; returns what pkgtool verified.
  func expectValid(_ s: Setup, _ catalog: String = "catalog.json", sequence: Int64) throws -> Catalog? {
    let verified = try pkgtool(["catalog", "verify", catalog, "--public-key", "signing.key.pub"], in: s.dir.path)
    #expect(verified.status == 0, "\(verified.stdout)\(verified.stderr)")
    #expect(verified.stdout.contains("valid: '\(catalog)', sequence \(sequence), expires 20"), "\(verified.stdout)")
    let python = try crosscheck(["verify", catalog, "signing.key.pub"], in: s)
    #expect(python.status == 0, "\(python.stdout)\(python.stderr)")
    #expect(python.stdout.contains("verified: sequence \(sequence), expires 20"), "\(python.stdout)")
    return try? CatalogFile.verify(
      contentsOf: s.dir.appending(catalog),
      publicKey: try CatalogPublicKey(contentsOf: s.dir.appending("signing.key.pub")))
  }

  func install(_ s: Setup, _ package: String, catalog: String = "catalog.json") throws -> ProcessResult {
    try pkgtool(
      ["install", package, "--into", "docs", "--catalog", catalog, "--public-key", "signing.key.pub"], in: s.dir.path)
  }

  @Test func aCatalogLivesThroughAMoveAWithdrawalAndAnExpiry() throws {
    let s = try setup()
    let published = try publish(s, s.packages, extra: ["--expires-in", "1h"])
    #expect(published.status == 0, "\(published.stderr)")
    let first = try #require(try expectValid(s, sequence: 1))
    let expires = try #require(try first.expiryDate())
    #expect(abs(expires.timeIntervalSinceNow - 3600) < 120)

    // show: products, versions, sequence, expiry, key ids; as text and as JSON.
    let keyID = try CatalogPublicKey(contentsOf: s.dir.appending("signing.key.pub")).keyID
    let shown = try pkgtool(["catalog", "show", "catalog.json"], in: s.dir.path)
    #expect(shown.status == 0)
    #expect(shown.stdout.contains("sequence 1, expires \(first.expires!)"), "\(shown.stdout)")
    #expect(shown.stdout.contains("signed by key \(keyID)"))
    #expect(shown.stdout.contains("  1.1  xar  "))
    #expect(shown.stdout.contains("https://cdn.example.com/content/book%201.0.pkg"))
    let json = try pkgtool(["catalog", "show", "catalog.json", "--json"], in: s.dir.path)
    let object = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any]
    #expect((object?["keyIds"] as? [String]) == [keyID], "\(json.stdout)")
    #expect(((object?["catalog"] as? [String: Any])?["sequence"] as? Int) == 1)

    // A move to another CDN: every URL moves, file names stay, sequence 2.
    let before = try readFile(s.dir.appending("catalog.json"))
    let withQuery = try pkgtool(
      ["catalog", "rebase", "catalog.json", "--base-url", "https://cdn2.example.net/c?x=1", "--key", "signing.key"],
      in: s.dir.path)
    #expect(withQuery.status == 2 && withQuery.stderr.contains("has a query"), "\(withQuery.stderr)")
    let withPublic = try pkgtool(
      ["catalog", "rebase", "catalog.json", "--base-url", "https://cdn2.example.net/c", "--key", "signing.key.pub"],
      in: s.dir.path)
    #expect(
      withPublic.status == 2 && withPublic.stderr.contains("is a public key; catalog rebase needs the secret key"))
    #expect(try readFile(s.dir.appending("catalog.json")) == before)
    let moved = try pkgtool(
      ["catalog", "rebase", "catalog.json", "--base-url", "https://cdn2.example.net/c/", "--key", "signing.key"],
      in: s.dir.path)
    #expect(moved.status == 0, "\(moved.stderr)")
    #expect(moved.stdout.contains("moved 2 URLs in catalog.json: sequence 1 -> 2"), "\(moved.stdout)")
    // The same move again (on a copy) moves nothing, and says so.
    try FileManager.default.copyItem(atPath: s.dir.appending("catalog.json"), toPath: s.dir.appending("again.json"))
    let again = try pkgtool(
      ["catalog", "rebase", "again.json", "--base-url", "https://cdn2.example.net/c/", "--key", "signing.key"],
      in: s.dir.path)
    #expect(
      again.stdout.hasPrefix(
        "moved no URL (all 2 URLs were already there; signed again) in again.json: sequence 2 -> 3"),
      "\(again.stdout)")
    let rebased = try #require(try expectValid(s, sequence: 2))
    #expect(
      rebased.products[0].versions.map(\.url) == [
        "https://cdn2.example.net/c/book%201.0.pkg", "https://cdn2.example.net/c/book%201.1.pkg",
      ])
    #expect(rebased.products[0].versions.map(\.sha256) == first.products[0].versions.map(\.sha256))
    #expect(try install(s, s.packages[1]).status == 0)

    // A withdrawn version: sequence 3, 1.1 gone, installing it is refused, 1.0 still installs.
    let missing = try pkgtool(
      ["catalog", "remove", "catalog.json", "com.example.book", "9.9", "--key", "signing.key"], in: s.dir.path)
    #expect(missing.status == 2 && missing.stderr.contains("lists no version 9.9 of com.example.book"))
    let removed = try pkgtool(
      ["catalog", "remove", "catalog.json", "com.example.book", "1.1", "--key", "signing.key"], in: s.dir.path)
    #expect(removed.status == 0, "\(removed.stderr)")
    let withdrawn = try #require(try expectValid(s, sequence: 3))
    #expect(withdrawn.products[0].versions.map(\.contentVersion) == ["1.0"])
    #expect(!(try pkgtool(["catalog", "show", "catalog.json"], in: s.dir.path)).stdout.contains("1.1"))
    let refused = try pkgtool(
      ["unpack", s.packages[1], "-o", "out", "--catalog", "catalog.json", "--public-key", "signing.key.pub"],
      in: s.dir.path)
    #expect(refused.status == 1 && refused.stderr.contains("not in the catalog"), "\(refused.stderr)")
    // Said as what it is, a version the catalog no longer lists, not as altered bytes.
    #expect(
      refused.stderr.contains(": it lists com.example.book 1.0, not 1.1 (withdrawn, or never published)"),
      "\(refused.stderr)")
    #expect(!refused.stderr.contains("differ from every version"))
    let older = try pkgtool(
      ["unpack", s.packages[0], "-o", "out10", "--catalog", "catalog.json", "--public-key", "signing.key.pub"],
      in: s.dir.path)
    #expect(older.status == 0, "\(older.stderr)")

    // An expiry: renewed for 1 s, then refused by pkgtool (verify, install, unpack) and Python.
    let short = try pkgtool(
      ["catalog", "renew", "catalog.json", "--key", "signing.key", "--expires-in", "1s"], in: s.dir.path)
    #expect(short.status == 0, "\(short.stderr)")
    Thread.sleep(forTimeInterval: 2.2)
    let expired = try pkgtool(["catalog", "verify", "catalog.json", "--public-key", "signing.key.pub"], in: s.dir.path)
    #expect(expired.status == 1)
    #expect(
      expired.stderr.hasPrefix("pkgtool: invalid: 'catalog.json': the catalog expired at 20"), "\(expired.stderr)")
    #expect(expired.stderr.split(separator: "\n").count == 1)
    let python = try crosscheck(["verify", "catalog.json", "signing.key.pub"], in: s)
    #expect(python.status == 1 && python.stderr.contains("expired"), "\(python.stderr)")
    let staleInstall = try install(s, s.packages[0])
    #expect(staleInstall.status == 1 && staleInstall.stderr.contains("expired"), "\(staleInstall.stderr)")
    let staleUnpack = try pkgtool(
      ["unpack", s.packages[0], "-o", "out", "--catalog", "catalog.json", "--public-key", "signing.key.pub"],
      in: s.dir.path)
    #expect(staleUnpack.status == 1 && staleUnpack.stderr.contains("expired"))
    #expect(!FileManager.default.fileExists(atPath: s.dir.appending("out")))
    // Renewed, it lives again at sequence 5.
    #expect(
      try pkgtool(["catalog", "renew", "catalog.json", "--key", "signing.key", "-q"], in: s.dir.path).status == 0)
    let renewed = try #require(try expectValid(s, sequence: 5))
    #expect(abs(try #require(try renewed.expiryDate()).timeIntervalSinceNow - 30 * 86_400) < 120)
  }

  @Test func publishPreviousContinuesTheSequenceAndExpiresIn30DaysByDefault() throws {
    let s = try setup()
    #expect(try publish(s, [s.packages[0]]).status == 0)
    #expect(try publish(s, [s.packages[1]]).status == 0)
    let old = try #require(try expectValid(s, sequence: 2))
    #expect(abs(try #require(try old.expiryDate()).timeIntervalSinceNow - 30 * 86_400) < 120)
    #expect(try install(s, s.packages[1]).status == 0)
    // A new file that continues catalog.json: sequence 3, accepted by a client that used 2.
    try FileManager.default.createDirectory(atPath: s.dir.appending("new"), withIntermediateDirectories: true)
    let continued = try pkgtool(
      [
        "publish", s.packages[1], "--key", "signing.key", "--base-url", "https://cdn2.example.net/c", "-o",
        "new/catalog.json", "--previous", "catalog.json", "--expires-in", "7d",
      ], in: s.dir.path)
    #expect(continued.status == 0, "\(continued.stderr)")
    let next = try #require(try expectValid(s, "new/catalog.json", sequence: 3))
    #expect(abs(try #require(try next.expiryDate()).timeIntervalSinceNow - 7 * 86_400) < 120)
    #expect(try install(s, s.packages[1], catalog: "new/catalog.json").status == 0)
    // Without --previous the new file starts at 1, and the client refuses it as a replay.
    #expect(
      try pkgtool(
        [
          "publish", s.packages[1], "--key", "signing.key", "--base-url", "https://cdn2.example.net/c", "-o",
          "fresh.json",
        ], in: s.dir.path
      ).status == 0)
    #expect(try install(s, s.packages[1], catalog: "fresh.json").status == 1)
    // --previous signed by another key, and a bad duration, are refused; nothing is written.
    #expect(try pkgtool(["keygen", "-o", "other.key", "-q"], in: s.dir.path).status == 0)
    let foreign = try pkgtool(
      [
        "publish", s.packages[1], "--key", "other.key", "--base-url", "https://cdn2.example.net/c", "-o",
        "other.json", "--previous", "catalog.json",
      ], in: s.dir.path)
    #expect(foreign.status == 2 && foreign.stderr.contains("cannot be continued"), "\(foreign.stderr)")
    let badDuration = try publish(s, [s.packages[1]], extra: ["--expires-in", "2w", "-o", "other.json"])
    #expect(
      badDuration.status == 2
        && badDuration.stderr.contains("'2w' is invalid for '--expires-in <duration>': not a duration"),
      "\(badDuration.stderr)")
    #expect(!FileManager.default.fileExists(atPath: s.dir.appending("other.json")))
  }

  @Test func anOldCatalogWithoutExpiryIsAcceptedWithANote() throws {
    let s = try setup()
    #expect(try publish(s, s.packages).status == 0)
    // Drop "expires" from the signed part and sign again with Python (a catalog from before).
    let text = String(decoding: try readFile(s.dir.appending("catalog.json")), as: UTF8.self)
    let old = text.split(separator: "\n", omittingEmptySubsequences: false).filter { !$0.contains("\"expires\"") }
    try writeFile(s.dir.appending("old.json"), old.joined(separator: "\n"))
    #expect(try crosscheck(["resign", "old.json", "python.key", "4"], in: s).status == 0)
    let verified = try pkgtool(["catalog", "verify", "old.json", "--public-key", "python.key.pub"], in: s.dir.path)
    #expect(verified.status == 0, "\(verified.stderr)")
    #expect(verified.stdout.contains("sequence 4, expires never"))
    #expect(verified.stderr.contains("note: the catalog has no expiry"))
    let installed = try pkgtool(
      ["install", s.packages[1], "--into", "docs", "--catalog", "old.json", "--public-key", "python.key.pub"],
      in: s.dir.path)
    #expect(installed.status == 0 && installed.stderr.contains("no expiry"), "\(installed.stderr)")
  }

  @Test func aTamperedOrDuplicatedCatalogIsInvalid() throws {
    let s = try setup()
    #expect(try publish(s, s.packages).status == 0)
    // A version listed twice, signed correctly (by Python): refused all the same.
    let script = """
      import json, sys
      d = json.load(open(sys.argv[1]))
      v = d["signed"]["products"][0]["versions"]
      v.append(dict(v[0]))
      json.dump(d, open(sys.argv[2], "w"))
      """
    #expect(
      try runProcess("/usr/bin/env", ["python3", "-c", script, "catalog.json", "twice.json"], in: s.dir.path).status
        == 0)
    #expect(try crosscheck(["resign", "twice.json", "python.key"], in: s).status == 0)
    let twice = try pkgtool(["catalog", "verify", "twice.json", "--public-key", "python.key.pub"], in: s.dir.path)
    #expect(twice.status == 1 && twice.stderr.contains("lists com.example.book 1.0 twice"), "\(twice.stderr)")
    // A changed expiry: the signature no longer verifies.
    let text = String(decoding: try readFile(s.dir.appending("catalog.json")), as: UTF8.self)
    let edited = text.replacingOccurrences(of: #""expires" : "20"#, with: #""expires" : "29"#)
    #expect(edited != text)
    try writeFile(s.dir.appending("edited.json"), edited)
    let tampered = try pkgtool(["catalog", "verify", "edited.json", "--public-key", "signing.key.pub"], in: s.dir.path)
    #expect(tampered.status == 1 && tampered.stderr.contains("does not verify"), "\(tampered.stderr)")
    #expect(try crosscheck(["verify", "edited.json", "signing.key.pub"], in: s).status == 1)
    // A change with another key leaves the file as it was.
    #expect(try pkgtool(["keygen", "-o", "other.key", "-q"], in: s.dir.path).status == 0)
    let before = try readFile(s.dir.appending("catalog.json"))
    let foreign = try pkgtool(["catalog", "renew", "catalog.json", "--key", "other.key"], in: s.dir.path)
    #expect(foreign.status == 2 && foreign.stderr.contains("cannot be changed"), "\(foreign.stderr)")
    #expect(try readFile(s.dir.appending("catalog.json")) == before)
  }

  /// `--key a --key a` is refused (once, `--key a --key b` signed with the last key, silently;
  /// distinct keys now each sign, see CatalogRootTests), for publish and for every catalog
  /// command that signs; nothing is written.
  @Test func theSameKeyTwiceIsRefused() throws {
    let s = try setup()
    let twice = ["--key", "signing.key", "--key", "signing.key"]
    let published = try pkgtool(
      ["publish", s.packages[0], "--base-url", "https://cdn.example.com/content/", "-o", "catalog.json"] + twice,
      in: s.dir.path)
    #expect(published.status == 2, "\(published.stderr)")
    #expect(published.stderr.contains("--key 'signing.key' was given twice"), "\(published.stderr)")
    #expect(!FileManager.default.fileExists(atPath: s.dir.appending("catalog.json")))
    #expect(try publish(s, [s.packages[0]]).status == 0)
    let before = try readFile(s.dir.appending("catalog.json"))
    for command in [
      ["catalog", "rebase", "catalog.json", "--base-url", "https://cdn2.example.com/"],
      ["catalog", "remove", "catalog.json", "com.example.book", "1.0"],
      ["catalog", "renew", "catalog.json"],
    ] {
      let run = try pkgtool(command + twice, in: s.dir.path)
      #expect(run.status == 2, "\(command[1]): \(run.stderr)")
      #expect(run.stderr.contains("--key 'signing.key' was given twice"), "\(command[1]): \(run.stderr)")
    }
    #expect(try readFile(s.dir.appending("catalog.json")) == before)
  }
}
