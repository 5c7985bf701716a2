import Foundation
import HostedContent
import TestSupport
import Testing

/// The catalog a running gate stands behind (issue 44, part 2): verified at start as a client
/// verifies it, reloaded on SIGHUP and when its files change, never served past a failed
/// verification, and packages changed in place never served under their old ETag. Each test works
/// in a copy of the suite's fixture, since it changes the files.
extension ServeEndToEndTests {
  /// A folder of its own: the catalog, the packages, the keys, the test root and the URL key.
  func ownCopy() throws -> TemporaryDirectory {
    let copy = try TemporaryDirectory("pkgtool-serve-life")
    for item in ["catalog.json", "dist", "keys", "root.pem", "url.key", "book", "sample"] {
      try FileManager.default.copyItem(atPath: folder.appending(item), toPath: copy.appending(item))
    }
    return copy
  }

  /// `catalog.json` of `copy` re-signed with the fixture's key after `change`.
  func resign(_ copy: TemporaryDirectory, _ change: (inout Catalog) -> Void) throws {
    var catalog = try CatalogFile.unverified(contentsOf: copy.appending("catalog.json")).catalog
    change(&catalog)
    let key = try CatalogSigningKey(contentsOf: copy.appending("keys/signing"))
    try writeFile(copy.appending("catalog.json.new"), try CatalogFile.encode(catalog, signedWith: key))
    try FileManager.default.removeItem(atPath: copy.appending("catalog.json"))
    try FileManager.default.moveItem(atPath: copy.appending("catalog.json.new"), toPath: copy.appending("catalog.json"))
  }

  /// `serve` in `copy` that must refuse to start: its result.
  func serveRefusal(in copy: TemporaryDirectory, _ extra: [String] = []) throws -> ProcessResult {
    try pkgtool(
      [
        "serve", "--catalog", "catalog.json", "--packages", "dist", "--listen", "127.0.0.1:0", "--bundle-id",
        "com.example.app", "--root-certificate", "root.pem", "--url-key", "url.key",
      ] + (extra.contains("--root") || extra.contains("--public-key") ? [] : ["--public-key", "keys/signing.pub"])
        + extra,
      in: copy.path)
  }

  /// Waits (bounded) until `/healthz` reports `sequence`; its last answer.
  func healthUntil(_ server: Server, sequence: Int64, seconds: Double = 15) throws -> Answer {
    let deadline = Date().addingTimeInterval(seconds)
    var answer = try curl([server.base + "/healthz"])
    while Date() < deadline {
      let catalog = answer.json["catalog"] as? [String: Any]
      if (catalog?["sequence"] as? NSNumber)?.int64Value == sequence { return answer }
      usleep(100_000)
      answer = try curl([server.base + "/healthz"])
    }
    return answer
  }

  func sequence(_ answer: Answer) -> Int64? {
    ((answer.json["catalog"] as? [String: Any])?["sequence"] as? NSNumber)?.int64Value
  }

  /// Everything a client would refuse stops the start: exit 2, one line naming the catalog and
  /// the reason, no state file made.
  @Test func serveRefusesToStartOnACatalogClientsWouldRefuse() throws {
    // Expired an hour ago, correctly signed.
    let expired = try ownCopy()
    try resign(expired) { $0.setExpiry(lifetime: -3600) }
    let late = try serveRefusal(in: expired)
    #expect(late.status == 2, "\(late.stderr)")
    #expect(late.stderr.contains("the catalog 'catalog.json' would be refused by every client"), "\(late.stderr)")
    #expect(late.stderr.contains("expired at"), "\(late.stderr)")
    #expect(late.stderr.contains("catalog renew"), "\(late.stderr)")
    #expect(late.stderr.split(separator: "\n").count == 1, "\(late.stderr)")
    #expect(!FileManager.default.fileExists(atPath: expired.appending("serve-state.sqlite")))

    // The signed part changed after signing (a URL pointed elsewhere).
    let tampered = try ownCopy()
    var text = String(decoding: try readFile(tampered.appending("catalog.json")), as: UTF8.self)
    text = text.replacingOccurrences(of: "https://cdn.example.com/packages", with: "https://evil.example.com/packages")
    try writeFile(tampered.appending("catalog.json"), text)
    let changed = try serveRefusal(in: tampered)
    #expect(changed.status == 2, "\(changed.stderr)")
    #expect(changed.stderr.contains("would be refused by every client"), "\(changed.stderr)")
    #expect(changed.stderr.contains("changed after signing"), "\(changed.stderr)")

    // Signed by another key than the one given.
    let other = try ownCopy()
    #expect(try pkgtool(["keygen", "-o", "keys/other", "-q"], in: other.path).status == 0)
    let stranger = try serveRefusal(in: other, ["--public-key", "keys/other.pub"])
    #expect(stranger.status == 2, "\(stranger.stderr)")
    #expect(stranger.stderr.contains("carries no signature of key"), "\(stranger.stderr)")

    // Neither --public-key nor --root: a usage error that says why.
    let none = try pkgtool(
      [
        "serve", "--catalog", "catalog.json", "--packages", "dist", "--bundle-id", "com.example.app",
        "--root-certificate", "root.pem",
      ], in: other.path)
    #expect(none.status == 2, "\(none.stderr)")
    #expect(none.stderr.contains("--public-key") && none.stderr.contains("--root"), "\(none.stderr)")
  }

  /// `/healthz` reports the sequence and expiry; warns (still 200) within --expiry-warning; 503
  /// once the catalog expires while the server runs; the log says so.
  @Test func healthReportsTheCatalogAndFailsOnlyOnceItExpires() throws {
    let copy = try ownCopy()
    let signed = try CatalogFile.unverified(contentsOf: copy.appending("catalog.json")).catalog
    let server = try Server(in: copy, ["--reload-interval", "0.2s"])
    let fresh = try curl([server.base + "/healthz"])
    #expect(fresh.status == 200)
    #expect(fresh.json["status"] as? String == "ok")
    #expect(fresh.json["warning"] == nil)
    #expect(sequence(fresh) == signed.sequence)
    #expect((fresh.json["catalog"] as? [String: Any])?["expires"] as? String == signed.expires)
    #expect(server.log.contains("catalog sequence \(signed.sequence), expires \(signed.expires!)"), "\(server.log)")
    #expect(server.stop() == 0)

    // Within the warning time: 200 with a warning.
    let warned = try Server(in: copy, ["--expiry-warning", "60d"])
    let near = try curl([warned.base + "/healthz"])
    #expect(near.status == 200)
    #expect(near.json["status"] as? String == "ok")
    #expect((near.json["warning"] as? String)?.contains("catalog renew") == true, "\(near.json)")
    #expect(warned.stop() == 0)
    #expect(warned.log.contains("expires at \(signed.expires!)"), "\(warned.log)")

    // Expires three seconds after the start: 503 from then on, and an error in the log.
    try resign(copy) {
      $0.sequence += 1
      $0.setExpiry(lifetime: 3)
    }
    let short = try Server(in: copy, ["--reload-interval", "0.2s"])
    #expect(try curl([short.base + "/healthz"]).status == 200)
    let deadline = Date().addingTimeInterval(15)
    var late = try curl([short.base + "/healthz"])
    while late.status == 200 && Date() < deadline {
      usleep(200_000)
      late = try curl([short.base + "/healthz"])
    }
    #expect(late.status == 503)
    #expect(late.json["status"] as? String == "expired")
    #expect((late.json["warning"] as? String)?.contains("expired at") == true)
    // /healthz reads the clock on each request; the watcher logs at its next poll.
    let logged = Date().addingTimeInterval(10)
    while !short.log.contains("expired at") && Date() < logged { usleep(100_000) }
    #expect(short.stop() == 0)
    #expect(short.log.contains("expired at"), "\(short.log)")
  }

  /// SIGHUP during a download: the new catalog is served at once, the download in flight ends
  /// with the bytes it started on (its package renamed over meanwhile), and a reload that fails
  /// verification keeps the catalog in use.
  @Test func sighupReloadsWhileADownloadFinishesFromItsFile() throws {
    let copy = try ownCopy()
    let before = try readFile(copy.appending("catalog.json"))
    let first = try CatalogFile.unverified(contentsOf: copy.appending("catalog.json")).catalog
    // A long interval: only the SIGHUP reloads here.
    let server = try Server(in: copy, ["--reload-interval", "1h", "--url-lifetime", "5m"])
    let jws = try chain.jws(TestChain.payload(product: "com.example.app.big"))
    let granted = try curl(["-X", "POST", server.base + "/v1/downloads"], body: request("com.example.app.big", jws))
    let url = try #require(granted.json["url"] as? String)
    let original = try readFile(copy.appending("dist/com.example.app.big-1.0.pkg"))

    // 12 MB at 3 MB/s: about four seconds in flight.
    let out = copy.appending("inflight.pkg")
    let download = Process()
    download.executableURL = URL(fileURLWithPath: "/usr/bin/curl")
    download.arguments = ["--silent", "--fail", "--max-time", "60", "--limit-rate", "3M", "-o", out, url]
    try download.run()
    usleep(700_000)

    // The package is replaced by rename (other bytes), and a new version of the book published.
    try writeFile(copy.appending("dist/replacement"), Array(repeating: UInt8(7), count: original.count))
    try FileManager.default.removeItem(atPath: copy.appending("dist/com.example.app.big-1.0.pkg"))
    try FileManager.default.moveItem(
      atPath: copy.appending("dist/replacement"), toPath: copy.appending("dist/com.example.app.big-1.0.pkg"))
    try writeFile(copy.appending("book/more.txt"), "chapter two\n")
    let built = try pkgtool(
      ["build", "book", "--product-id", "com.example.app.book1", "--content-version", "2.0", "-o", "book-2.0.pkg"],
      in: copy.path)
    #expect(built.status == 0, "\(built.stderr)")
    try FileManager.default.moveItem(
      atPath: copy.appending("book-2.0.pkg"), toPath: copy.appending("dist/com.example.app.book1-2.0.pkg"))
    // Published with the big package's old entry still listed: the reload must fail on the
    // replaced file and keep serving the first catalog.
    let published = try pkgtool(
      [
        "publish", "dist/com.example.app.book1-2.0.pkg", "--key", "keys/signing", "--base-url",
        "https://cdn.example.com/packages", "-o", "catalog.json", "-q",
      ], in: copy.path)
    #expect(published.status == 0, "\(published.stderr)")
    kill(server.process.processIdentifier, SIGHUP)
    usleep(1_500_000)
    #expect(server.process.isRunning)
    let kept = try curl([server.base + "/catalog.json"])
    #expect(kept.body == before)
    #expect(sequence(try curl([server.base + "/healthz"])) == first.sequence)
    #expect(server.log.contains("the previous ones stay"), "\(server.log)")
    #expect(server.log.contains("com.example.app.big-1.0.pkg"), "\(server.log)")

    // The big package back (renamed in again): the next SIGHUP verifies and swaps.
    try writeFile(copy.appending("dist/restored"), original)
    try FileManager.default.removeItem(atPath: copy.appending("dist/com.example.app.big-1.0.pkg"))
    try FileManager.default.moveItem(
      atPath: copy.appending("dist/restored"), toPath: copy.appending("dist/com.example.app.big-1.0.pkg"))
    kill(server.process.processIdentifier, SIGHUP)
    let health = try healthUntil(server, sequence: first.sequence + 1)
    #expect(sequence(health) == first.sequence + 1, "\(health.json)")
    let now = try curl([server.base + "/catalog.json"])
    #expect(now.body == (try readFile(copy.appending("catalog.json"))))
    let book = try chain.jws(TestChain.payload(product: "com.example.app.book1"))
    let newest = try curl(["-X", "POST", server.base + "/v1/downloads"], body: request("com.example.app.book1", book))
    #expect(newest.json["contentVersion"] as? String == "2.0", "\(newest.json)")

    // The download that started before all this ends whole, with the bytes it started on.
    download.waitUntilExit()
    #expect(download.terminationStatus == 0)
    #expect(try readFile(out) == original)
    #expect(server.stop() == 0)
    #expect(server.log.contains("SIGHUP: catalog sequence \(first.sequence + 1)"), "\(server.log)")
  }

  /// Without SIGHUP: a catalog renamed in is picked up by the watcher; one that fails
  /// verification (signature replaced) is logged and not served.
  @Test func aChangedCatalogIsPickedUpAndABrokenOneIsNot() throws {
    let copy = try ownCopy()
    let first = try CatalogFile.unverified(contentsOf: copy.appending("catalog.json")).catalog
    let server = try Server(in: copy, ["--reload-interval", "0.2s"])
    try resign(copy) { $0.sequence += 5 }
    let picked = try healthUntil(server, sequence: first.sequence + 5)
    #expect(sequence(picked) == first.sequence + 5, "\(picked.json)\n\(server.log)")
    let good = try readFile(copy.appending("catalog.json"))
    #expect(try curl([server.base + "/catalog.json"]).body == good)

    // Signed by another key: never served, the good one stays.
    #expect(try pkgtool(["keygen", "-o", "keys/other", "-q"], in: copy.path).status == 0)
    var catalog = first
    catalog.sequence += 9
    let other = try CatalogSigningKey(contentsOf: copy.appending("keys/other"))
    try writeFile(copy.appending("forged.json"), try CatalogFile.encode(catalog, signedWith: other))
    try FileManager.default.removeItem(atPath: copy.appending("catalog.json"))
    try FileManager.default.moveItem(atPath: copy.appending("forged.json"), toPath: copy.appending("catalog.json"))
    let deadline = Date().addingTimeInterval(10)
    while !server.log.contains("carries no signature of key") && Date() < deadline { usleep(100_000) }
    #expect(server.log.contains("carries no signature of key"), "\(server.log)")
    #expect(try curl([server.base + "/catalog.json"]).body == good)
    #expect(sequence(try curl([server.base + "/healthz"])) == first.sequence + 5)

    // An older catalog, correctly signed, put back (sequence + 2 after + 5): refused as a
    // replay, as every client refuses it; the newer one stays.
    try FileManager.default.removeItem(atPath: copy.appending("catalog.json"))
    try writeFile(copy.appending("catalog.json"), try readFile(folder.appending("catalog.json")))
    try resign(copy) { $0.sequence += 2 }
    let replayDeadline = Date().addingTimeInterval(10)
    while !server.log.contains("not above the \(first.sequence + 5) served now") && Date() < replayDeadline {
      usleep(100_000)
    }
    #expect(server.log.contains("not above the \(first.sequence + 5) served now"), "\(server.log)")
    #expect(try curl([server.base + "/catalog.json"]).body == good)
    #expect(sequence(try curl([server.base + "/healthz"])) == first.sequence + 5)
    #expect(server.stop() == 0)
  }

  /// `cp` over a package (same inode, same size, other bytes): never served under the old ETag,
  /// neither for a new request nor for the rest of a download in flight.
  @Test func aPackageRewrittenInPlaceIsNeverServedUnderItsOldETag() throws {
    let copy = try ownCopy()
    let path = copy.appending("dist/com.example.app.big-1.0.pkg")
    let original = try readFile(path)
    let server = try Server(in: copy, ["--reload-interval", "1h", "--url-lifetime", "5m"])
    let jws = try chain.jws(TestChain.payload(product: "com.example.app.big"))
    let granted = try curl(["-X", "POST", server.base + "/v1/downloads"], body: request("com.example.app.big", jws))
    let url = try #require(granted.json["url"] as? String)

    // A client with a small receive buffer that has read 1 MB when the file is rewritten, then
    // reads on (curl's buffers, and the kernel's, could otherwise hold the whole 12 MB early).
    let target = try #require(URL(string: url))
    let script = """
      import socket, sys, time
      s = socket.socket()
      s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 32768)
      s.settimeout(30)
      s.connect(("127.0.0.1", \(target.port!)))
      s.sendall(b"GET \(target.path)?\(target.query!) HTTP/1.1\\r\\nHost: x\\r\\nConnection: close\\r\\n\\r\\n")
      data = b""
      while len(data) < 1 << 20:
          data += s.recv(65536)
      print("ready", flush=True)
      sys.stdin.readline()
      try:
          while True:
              chunk = s.recv(65536)
              if not chunk: break
              data += chunk
      except Exception:
          pass
      head, _, body = data.partition(b"\\r\\n\\r\\n")
      print(len(body), flush=True)
      """
    let client = Process()
    client.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    client.arguments = ["python3", "-c", script]
    let output = Pipe()
    let input = Pipe()
    client.standardOutput = output
    client.standardInput = input
    try client.run()
    let ready = output.fileHandleForReading.readData(ofLength: 6)
    #expect(String(decoding: ready, as: UTF8.self) == "ready\n")
    // As cp does: open the same file, truncate, write.
    let other = Array(repeating: UInt8(0x5A), count: original.count)
    let handle = try #require(FileHandle(forWritingAtPath: path))
    try handle.truncate(atOffset: 0)
    try handle.write(contentsOf: Data(other))
    try handle.close()
    input.fileHandleForWriting.write(Data("go\n".utf8))

    // The download in flight is cut, not completed with mixed bytes.
    client.waitUntilExit()
    let received =
      Int(
        String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
          .trimmingCharacters(in: .whitespacesAndNewlines)) ?? -1
    #expect(received >= 1 << 20 && received < original.count, "\(received)")
    // A new request: 503 package-changed, never 200 with the old ETag.
    let again = try curl([url])
    #expect(again.status == 503, "\(again.status)")
    #expect(again.json["error"] as? String == "package-changed")
    #expect(again.headers.lowercased().contains("retry-after: 5"))
    #expect(!again.headers.contains(sha256(original)))
    let head = try curl(["-I", url])
    #expect(head.status == 503)
    #expect(server.stop() == 0)
  }
}
