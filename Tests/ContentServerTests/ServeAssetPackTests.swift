import Foundation
import HostedContent
import TestSupport
import Testing

/// Self-hosted Background Assets packs behind the purchase gate (issue 46, part 2): `serve
/// --asset-packs`, `/packs/ID` with a Basic challenge answered by the StoreKit transaction, and
/// the download manifest. Over real loopback HTTP with curl; the packs are written by `pkgtool
/// export background-assets`.
extension ServeEndToEndTests {
  /// A copy of the fixture with `packs/book-pack.aar` (the book), `packs/sample-pack` (the sample,
  /// extensionless as uploaded) and `manifest.json` listing both, as a device reads it.
  func packFolder() throws -> TemporaryDirectory {
    let copy = try ownCopy()
    try FileManager.default.createDirectory(atPath: copy.appending("packs"), withIntermediateDirectories: true)
    for (package, id, output) in [
      ("dist/com.example.app.book1-1.0.pkg", "book-pack", "packs/book-pack.aar"),
      ("dist/com.example.app.sample-1.0.pkg", "sample-pack", "sample-pack.aar"),
    ] {
      let exported = try pkgtool(
        ["export", "background-assets", package, "--asset-pack-id", id, "-o", output], in: copy.path)
      guard exported.status == 0 else { throw TestFailure("export failed: \(exported.stderr)") }
    }
    // The download manifest as a team makes it (the flow: export, download-manifest create,
    // serve), with the extensionless copies to upload.
    let created = try pkgtool(
      [
        "download-manifest", "create", "packs/book-pack.aar", "sample-pack.aar", "--platform", "ios", "--base-url",
        "https://packs.example.com/packs/", "--payloads", "payloads", "-o", "manifest.json",
      ], in: copy.path)
    guard created.status == 0 else { throw TestFailure("download-manifest create failed: \(created.stderr)") }
    try FileManager.default.moveItem(
      atPath: copy.appending("payloads/sample-pack"), toPath: copy.appending("packs/sample-pack"))
    try FileManager.default.removeItem(atPath: copy.appending("sample-pack.aar"))
    return copy
  }

  func writeManifest(in copy: TemporaryDirectory, ids: [String], sizes: [String: Int] = [:]) throws {
    var entries: [[String: Any]] = []
    for id in ids {
      let path = copy.appending(id == "book-pack" ? "packs/book-pack.aar" : "packs/\(id)")
      let size = sizes[id] ?? ((try? readFile(path))?.count ?? 1)
      entries.append(["id": id, "version": 1, "downloadSize": size, "url": "https://packs.example.com/packs/\(id)"])
    }
    let data = try JSONSerialization.data(withJSONObject: ["assetPacks": entries], options: [.sortedKeys])
    try writeFile(copy.appending("manifest.json"), Array(data))
  }

  var packOptions: [String] {
    [
      "--asset-packs", "packs", "--pack-product", "book-pack=com.example.app.book1", "--pack-product",
      "book-pack=com.example.app.big", "--open", "sample-pack", "--download-manifest", "manifest.json",
    ]
  }

  func basic(_ user: String, _ password: String) -> String {
    "Authorization: Basic " + Data("\(user):\(password)".utf8).base64EncodedString()
  }

  @Test func aPackIsFetchedInRangesWithAnEntitledTransactionAndRefusedOtherwise() throws {
    let copy = try packFolder()
    let server = try Server(in: copy, packOptions)
    let pack = try readFile(copy.appending("packs/book-pack.aar"))
    let url = server.base + "/packs/book-pack"

    // The manifest download-manifest create wrote, byte for byte: each pack at base URL + ID.
    let manifest = try curl([server.base + "/download-manifest.json"])
    #expect(manifest.status == 200)
    let listed = (manifest.json["assetPacks"] as? [[String: Any]] ?? []).map { $0["url"] as? String ?? "" }
    #expect(
      listed.sorted() == ["https://packs.example.com/packs/book-pack", "https://packs.example.com/packs/sample-pack"])
    let manifestBytes = try readFile(copy.appending("manifest.json"))
    #expect(manifest.body == manifestBytes)

    // No credential: 401 with the Basic challenge a URLSession delegate answers.
    let bare = try curl([url])
    #expect(bare.status == 401)
    #expect(bare.headers.lowercased().contains("www-authenticate: basic realm=\"asset packs\""), "\(bare.headers)")
    #expect(bare.json["error"] as? String == "missing-credential")

    // An entitled transaction: three ranges, reassembled byte-identical; the ETag is the SHA-256.
    let book = try chain.jws(TestChain.payload(product: "com.example.app.book1"))
    let third = pack.count / 3
    var joined: [UInt8] = []
    for range in ["0-\(third - 1)", "\(third)-\(2 * third - 1)", "\(2 * third)-"] {
      let part = try curl(["-H", basic("storekit", book), "-H", "Range: bytes=\(range)", url])
      #expect(part.status == 206, "\(part.status) \(part.json)")
      #expect(part.headers.lowercased().contains("etag: \"\(sha256(pack))\""))
      joined += part.body
    }
    #expect(joined == pack)
    // Any of the products mapped to the pack opens it.
    let big = try chain.jws(TestChain.payload(product: "com.example.app.big"))
    #expect(try curl(["-H", basic("storekit", big), "-I", url]).status == 200)

    // Another product's transaction: 403 with the reason.
    let other = try chain.jws(TestChain.payload(product: "com.example.app.sample"))
    let wrong = try curl(["-H", basic("storekit", other), url])
    #expect(wrong.status == 403)
    #expect(wrong.json["error"] as? String == "wrong-product")

    // Credentials that are not the form: 401 with the reason, never a 500.
    for header in [
      "Authorization: Bearer \(book)", basic("storekit", "not-a-jws"), basic("someone", book),
      "Authorization: Basic !!!notbase64", basic("storekit", "a.b"),
    ] {
      let refused = try curl(["-H", header, url])
      #expect(refused.status == 401, "\(header): \(refused.status)")
      #expect(refused.json["error"] as? String == "bad-credential", "\(header): \(refused.json)")
    }
    // A forged transaction (signed by another chain): 403.
    let forged = try TestChain().jws(TestChain.payload(product: "com.example.app.book1"))
    #expect(try curl(["-H", basic("storekit", forged), url]).status == 403)

    // The open pack needs nothing.
    let open = try curl([server.base + "/packs/sample-pack"])
    let sample = try readFile(copy.appending("packs/sample-pack"))
    #expect(open.status == 200 && open.body == sample)
    #expect(try curl([server.base + "/packs/missing"]).status == 404)

    // After a REFUND notification, the same transaction is refused: 403 revoked.
    var bought = TestChain.payload(product: "com.example.app.book1")
    let purchaseJWS = try chain.jws(bought)
    #expect(try curl(["-H", basic("storekit", purchaseJWS), "-I", url]).status == 200)
    bought["signedDate"] = Int64(Date().timeIntervalSince1970 * 1000) - 1000
    bought["revocationDate"] = Int64(Date().timeIntervalSince1970 * 1000) - 60_000
    let refund = try chain.notificationBody(
      type: "REFUND", transaction: bought, signedDate: Date().addingTimeInterval(-30))
    let stored = try curl(["-X", "POST", server.base + "/v1/notifications"], body: refund)
    #expect(stored.status == 200, "\(stored.json)")
    let revoked = try curl(["-H", basic("storekit", purchaseJWS), url])
    #expect(revoked.status == 403)
    #expect(revoked.json["error"] as? String == "revoked")
    #expect(server.stop() == 0)
    // Transactions never reach the log.
    #expect(!server.log.contains(book.prefix(40)))
  }

  /// Every inconsistency stops the start with one line naming the file; nothing is served.
  @Test func serveRefusesPacksItCannotStandBehind() throws {
    func refusal(_ copy: TemporaryDirectory, _ options: [String]) throws -> ProcessResult {
      try serveRefusal(in: copy, options + ["--state", "sqlite:state-\(UUID().uuidString).sqlite"])
    }
    // A pack mapped to no product.
    let unmapped = try packFolder()
    let free = try refusal(
      unmapped, ["--asset-packs", "packs", "--open", "sample-pack", "--download-manifest", "manifest.json"])
    #expect(free.status == 2, "\(free.stderr)")
    #expect(free.stderr.contains("'book-pack'") && free.stderr.contains("mapped to no product"), "\(free.stderr)")

    // The manifest lists a pack the folder does not hold.
    let missing = try packFolder()
    try writeManifest(in: missing, ids: ["book-pack", "sample-pack", "ghost-pack"])
    let ghost = try refusal(missing, packOptions)
    #expect(ghost.status == 2, "\(ghost.stderr)")
    #expect(ghost.stderr.contains("'ghost-pack', which is not served here"), "\(ghost.stderr)")

    // The manifest's downloadSize is not the file's.
    let sized = try packFolder()
    try writeManifest(in: sized, ids: ["book-pack", "sample-pack"], sizes: ["book-pack": 12])
    let size = try refusal(sized, packOptions)
    #expect(size.status == 2 && size.stderr.contains("downloadSize of 12"), "\(size.stderr)")

    // Two files with one ID.
    let twice = try packFolder()
    try FileManager.default.copyItem(
      atPath: twice.appending("packs/sample-pack"), toPath: twice.appending("packs/sample-pack.aar"))
    let double = try refusal(twice, packOptions)
    #expect(double.status == 2 && double.stderr.contains("are the asset pack 'sample-pack'"), "\(double.stderr)")

    // A file whose name is no asset-pack ID (a dot).
    let dotted = try packFolder()
    try writeFile(dotted.appending("packs/com.example.pack"), "x")
    let dot = try refusal(dotted, packOptions)
    #expect(dot.status == 2 && dot.stderr.contains("com.example.pack"), "\(dot.stderr)")

    // A pack renamed: its Manifest.json says book-pack, its name other-pack.
    let renamed = try packFolder()
    try FileManager.default.moveItem(
      atPath: renamed.appending("packs/book-pack.aar"), toPath: renamed.appending("packs/other-pack.aar"))
    let misnamed = try refusal(
      renamed,
      ["--asset-packs", "packs", "--pack-product", "other-pack=com.example.app.book1", "--open", "sample-pack"])
    #expect(misnamed.status == 2, "\(misnamed.stderr)")
    #expect(misnamed.stderr.contains("is the asset pack 'book-pack'"), "\(misnamed.stderr)")

    // --pack-product without --asset-packs, or not ID=PRODUCT.
    let usage = try refusal(unmapped, ["--pack-product", "book-pack=com.example.app.book1"])
    #expect(usage.status == 2 && usage.stderr.contains("--asset-packs"), "\(usage.stderr)")
    let form = try refusal(unmapped, ["--asset-packs", "packs", "--pack-product", "book-pack"])
    #expect(form.status == 2 && form.stderr.contains("PACK_ID=PRODUCT_ID"), "\(form.stderr)")
  }
}
