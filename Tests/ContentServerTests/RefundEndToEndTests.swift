import Foundation
import TestSupport
import Testing

/// Refunds reach the gate: App Store Server Notifications v2 over real loopback HTTP into the
/// real `pkgtool serve`, with its SQLite state in the test folder.
extension ServeEndToEndTests {
  var book: String { "com.example.app.book1" }

  /// A purchase made 400 days ago: the JWS StoreKit gave the buyer then.
  func purchase(transactionID: String = "2000000123456789", original: String? = nil, daysAgo: Double = 400)
    -> [String: Any]
  {
    var payload = TestChain.payload(
      product: book,
      signedDate: Date(timeIntervalSince1970: (Date().timeIntervalSince1970 - daysAgo * 86_400).rounded()))
    payload["transactionId"] = transactionID
    payload["originalTransactionId"] = original ?? transactionID
    return payload
  }

  /// The same transaction as the App Store signs it after `changes` (a refund, say).
  func resigned(_ transaction: [String: Any], _ changes: [String: Any]) -> [String: Any] {
    var payload = transaction
    payload["signedDate"] = Int64(Date().timeIntervalSince1970 * 1000) - 1000
    for (key, value) in changes { payload[key] = value }
    return payload
  }

  func download(_ server: Server, _ jws: String, product: String? = nil) throws -> Answer {
    try curl(["-X", "POST", server.base + "/v1/downloads"], body: request(product ?? book, jws))
  }

  func notify(_ server: Server, _ body: String) throws -> Answer {
    try curl(["-X", "POST", server.base + "/v1/notifications"], body: body)
  }

  @Test func aRefundIsHonouredFromTheNextRequestOnAndAcrossARestart() throws {
    let state = ["--state", "sqlite:refunds-\(UUID().uuidString).sqlite"]
    var server = try Server(in: folder, state)
    let bought = purchase()
    let purchaseTimeJWS = try chain.jws(bought)
    #expect(try download(server, purchaseTimeJWS).status == 200)

    // Apple refunds it and POSTs REFUND, with the transaction signed anew (revocationDate set).
    let now = Int64(Date().timeIntervalSince1970 * 1000)
    let refundUUID = UUID().uuidString
    let refund = try chain.notificationBody(
      type: "REFUND", transaction: resigned(bought, ["revocationDate": now - 60_000, "revocationReason": 0]),
      uuid: refundUUID, signedDate: Date().addingTimeInterval(-30))
    let stored = try notify(server, refund)
    #expect(stored.status == 200, "\(String(decoding: stored.body, as: UTF8.self))")
    #expect(stored.json["status"] as? String == "stored")
    // Apple's retry of the same notification: 200, nothing changes.
    let again = try notify(server, refund)
    #expect(again.status == 200 && again.json["status"] as? String == "duplicate")

    // The purchase-time JWS, valid forever on its own, is refused from now on.
    let refused = try download(server, purchaseTimeJWS)
    #expect(refused.status == 403)
    #expect(refused.json["error"] as? String == "revoked")
    // Killed outright (no graceful stop): what was answered 200 was committed.
    kill(server.process.processIdentifier, SIGKILL)
    server.process.waitUntilExit()
    #expect(server.log.contains("notification REFUND \(refundUUID) transaction 2000000123456789: stored"))
    #expect(server.log.contains("already stored"))
    // The log never holds the signed payload.
    #expect(!server.log.contains(String(refund.dropFirst(20).prefix(40))))

    // A restart on the same state, after SIGKILL: still refused.
    server = try Server(in: folder, state)
    #expect(try download(server, purchaseTimeJWS).json["error"] as? String == "revoked")

    // REFUND_REVERSED, signed later: granted again.
    let reversed = try chain.notificationBody(
      type: "REFUND_REVERSED", transaction: resigned(bought, [:]), signedDate: Date().addingTimeInterval(-5))
    #expect(try notify(server, reversed).status == 200)
    #expect(try download(server, purchaseTimeJWS).status == 200)
    // An older REFUND arriving late (Apple retries out of order) does not undo the reversal.
    let late = try chain.notificationBody(
      type: "REFUND", transaction: resigned(bought, ["revocationDate": now - 120_000]),
      signedDate: Date().addingTimeInterval(-100))
    #expect(try notify(server, late).status == 200)
    #expect(try download(server, purchaseTimeJWS).status == 200)
    #expect(server.stop() == 0)
  }

  @Test func aRefundReachesEveryProofOfThePurchaseSignedBeforeIt() throws {
    let server = try Server(in: folder)
    // A restore made on another device: another transactionId, the same original purchase.
    let original = purchase(transactionID: "3000000000000001", daysAgo: 300)
    let restore = purchase(transactionID: "3000000000000002", original: "3000000000000001", daysAgo: 200)
    let refund = try chain.notificationBody(
      type: "REFUND",
      transaction: resigned(original, ["revocationDate": Int64(Date().timeIntervalSince1970 * 1000) - 60_000]))
    #expect(try notify(server, refund).status == 200)
    #expect(try download(server, try chain.jws(original)).json["error"] as? String == "revoked")
    #expect(try download(server, try chain.jws(restore)).json["error"] as? String == "revoked")
    // Another buyer's purchase is untouched.
    #expect(try download(server, try chain.jws(purchase(transactionID: "3000000000000009"))).status == 200)
    // REVOKE (Family Sharing ended) refuses as REFUND does.
    let shared = purchase(transactionID: "3000000000000010", daysAgo: 10)
    let revoke = try chain.notificationBody(
      type: "REVOKE", transaction: resigned(shared, ["revocationDate": Int64(Date().timeIntervalSince1970 * 1000)]))
    #expect(try notify(server, revoke).status == 200)
    #expect(try download(server, try chain.jws(shared)).json["error"] as? String == "revoked")
    #expect(server.stop() == 0)
  }

  @Test func aSubscriptionFollowsItsNewestExpiry() throws {
    let server = try Server(in: folder)
    let nowMS = Int64(Date().timeIntervalSince1970 * 1000)
    var period = purchase(transactionID: "4000000000000001", daysAgo: 40)
    period["type"] = "Auto-Renewable Subscription"
    period["expiresDate"] = nowMS - 10 * 86_400_000
    let oldJWS = try chain.jws(period)
    #expect(try download(server, oldJWS).json["error"] as? String == "expired")
    // DID_RENEW: the next period's transaction, signed now, expires in 20 days.
    var renewal = resigned(period, ["expiresDate": nowMS + 20 * 86_400_000])
    renewal["transactionId"] = "4000000000000002"
    #expect(try notify(server, try chain.notificationBody(type: "DID_RENEW", transaction: renewal)).status == 200)
    #expect(try download(server, oldJWS).status == 200)
    // EXPIRED (a refund of the renewal, a cancellation): its expiry, in the past, wins over a
    // JWS signed before it that still claims a later one.
    var current = purchase(transactionID: "4000000000000003", original: "4000000000000001", daysAgo: 1)
    current["type"] = "Auto-Renewable Subscription"
    current["expiresDate"] = nowMS + 29 * 86_400_000
    let currentJWS = try chain.jws(current)
    var ended = resigned(current, ["expiresDate": nowMS - 1000])
    ended["transactionId"] = "4000000000000003"
    #expect(
      try notify(server, try chain.notificationBody(type: "EXPIRED", subtype: "VOLUNTARY", transaction: ended)).status
        == 200)
    #expect(try download(server, currentJWS).json["error"] as? String == "expired")
    #expect(try download(server, oldJWS).json["error"] as? String == "expired")
    #expect(server.stop() == 0)
  }

  @Test func notificationsThatFailACheckChangeNothing() throws {
    let server = try Server(in: folder)
    let bought = purchase(transactionID: "5000000000000001")
    let jws = try chain.jws(bought)
    let revoked = resigned(bought, ["revocationDate": Int64(Date().timeIntervalSince1970 * 1000)])
    let other = try TestChain()
    let forged: [(String, String, Int)] = [
      // Signed by a chain to another root.
      ("untrusted-chain", try other.notificationBody(type: "REFUND", transaction: revoked), 403),
      // Another app, another environment.
      ("wrong-bundle", try chain.notificationBody(type: "REFUND", transaction: revoked, bundle: "com.other.app"), 403),
      (
        "wrong-environment",
        try chain.notificationBody(type: "REFUND", transaction: revoked, environment: "Sandbox"), 403
      ),
      // Signed in the future.
      (
        "signed-in-future",
        try chain.notificationBody(type: "REFUND", transaction: revoked, signedDate: Date().addingTimeInterval(7200)),
        403
      ),
      // Not what Apple sends.
      ("malformed-request", #"{"payload": "x"}"#, 400),
      ("malformed-notification", #"{"signedPayload": "a.b.c"}"#, 400),
    ]
    for (code, body, status) in forged {
      let answer = try notify(server, body)
      #expect(answer.status == status, "\(code): \(String(decoding: answer.body, as: UTF8.self))")
      #expect(answer.json["error"] as? String == code)
    }
    // A genuine notification whose inner transaction is another app's: refused too.
    let innerOther = try chain.jws(TestChain.payload(bundle: "com.other.app"))
    let payload = TestChain.notificationPayload(type: "REFUND", transaction: innerOther)
    let body = String(
      decoding: try JSONSerialization.data(withJSONObject: ["signedPayload": try chain.jws(payload)]), as: UTF8.self)
    #expect(try notify(server, body).json["error"] as? String == "wrong-bundle")
    // A refund with no signedDate cannot be ordered against a reversal: refused.
    var undated = TestChain.notificationPayload(type: "REFUND", transaction: try chain.jws(revoked))
    undated["signedDate"] = nil
    let undatedBody = String(
      decoding: try JSONSerialization.data(withJSONObject: ["signedPayload": try chain.jws(undated)]), as: UTF8.self)
    let undatedAnswer = try notify(server, undatedBody)
    #expect(undatedAnswer.status == 400 && undatedAnswer.json["error"] as? String == "malformed-notification")
    // What a sender writes before any signature is checked cannot forge a log line.
    let forgedLine = "notification REFUND_REVERSED forged-uuid transaction 5000000000000001: stored"
    let header = TestChain.base64URL(
      try JSONSerialization.data(withJSONObject: ["alg": "ES256\n2026-11-29T00:00:00+0000 notice " + forgedLine]))
    let forgery = String(
      decoding: try JSONSerialization.data(withJSONObject: ["signedPayload": header + ".eyJ9.AAAA"]), as: UTF8.self)
    #expect(try notify(server, forgery).json["error"] as? String == "unsupported-algorithm")
    // Nothing was stored: the purchase is still granted.
    #expect(try download(server, jws).status == 200)
    // TEST and other types are recorded and logged, and change no access.
    let test = try chain.notificationBody(type: "TEST", transaction: nil)
    #expect(try notify(server, test).json["status"] as? String == "stored")
    let consumption = try chain.notificationBody(type: "CONSUMPTION_REQUEST", transaction: bought)
    #expect(try notify(server, consumption).status == 200)
    #expect(try download(server, jws).status == 200)
    #expect(server.stop() == 0)
    #expect(server.log.contains("notification TEST "))
    #expect(!server.log.split(separator: "\n").contains { $0.hasPrefix("2026-11-29T00:00:00+0000") })
    #expect(server.log.contains("ES256\\u{a}2026-11-29T00:00:00+0000 notice " + forgedLine))
    #expect(server.log.contains("notification CONSUMPTION_REQUEST "))
  }

  @Test func theProofAgeCapAndTheClock() throws {
    let server = try Server(in: folder, ["--max-proof-age", "30d"])
    #expect(try download(server, try chain.jws(purchase(daysAgo: 400))).json["error"] as? String == "proof-too-old")
    #expect(try download(server, try chain.jws(purchase(daysAgo: 2))).status == 200)
    #expect(try download(server, try chain.jws(purchase(daysAgo: -1))).json["error"] as? String == "signed-in-future")
    #expect(server.stop() == 0)
  }

  /// Two instances behind one load balancer share one PostgreSQL: a refund posted to one is
  /// refused by the other from the next request. With the database stopped, both routes answer
  /// 503 with Retry-After (never a 403, never a grant), and the gate recovers when it is back.
  @Test func twoInstancesShareOnePostgreSQLAndSurviveItsOutage() async throws {
    let database = try await PostgresTestServer.make()
    let state = ["--state", database.url(database: try await database.createDatabase())]
    let first = try Server(in: folder, state)
    let second = try Server(in: folder, state)
    let bought = purchase(transactionID: "6000000000000001")
    let jws = try chain.jws(bought)
    #expect(try download(first, jws).status == 200)
    #expect(try download(second, jws).status == 200)
    let refund = try chain.notificationBody(
      type: "REFUND", transaction: resigned(bought, ["revocationDate": Int64(Date().timeIntervalSince1970 * 1000)]))
    #expect(try notify(first, refund).json["status"] as? String == "stored")
    #expect(try download(second, jws).json["error"] as? String == "revoked")
    // Apple's retry reaching the other instance: already stored there too.
    #expect(try notify(second, refund).json["status"] as? String == "duplicate")

    await database.stop()
    let other = try chain.jws(purchase(transactionID: "6000000000000002"))
    for server in [first, second] {
      let refused = try download(server, other)
      #expect(refused.status == 503, "\(String(decoding: refused.body, as: UTF8.self))")
      #expect(refused.json["error"] as? String == "state-unavailable")
      #expect(refused.headers.lowercased().contains("retry-after: 5"))
      let notification = try notify(server, try chain.notificationBody(type: "TEST", transaction: nil))
      #expect(notification.status == 503)
      #expect(notification.headers.lowercased().contains("retry-after:"))
    }

    try await database.start()
    // postgres-nio reconnects with a growing delay: wait for it, within a bound.
    let deadline = Date().addingTimeInterval(90)
    var answer = try download(second, other)
    while answer.status == 503 && Date() < deadline {
      try await Task.sleep(for: .milliseconds(500))
      answer = try download(second, other)
    }
    #expect(answer.status == 200, "\(String(decoding: answer.body, as: UTF8.self))")
    #expect(try download(first, jws).json["error"] as? String == "revoked")
    let reversed = try chain.notificationBody(type: "REFUND_REVERSED", transaction: resigned(bought, [:]))
    var stored = try notify(second, reversed)
    while stored.status == 503 && Date() < deadline {
      try await Task.sleep(for: .milliseconds(500))
      stored = try notify(second, reversed)
    }
    #expect(stored.status == 200)
    #expect(try download(first, jws).status == 200)
    #expect(first.stop() == 0)
    #expect(second.stop() == 0)
    #expect(first.log.contains("state: postgres://postgres@127.0.0.1:"))
    #expect(!first.log.contains(database.password))
  }
}
