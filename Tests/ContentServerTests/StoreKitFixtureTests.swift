import Foundation
import SwiftASN1
import TestSupport
import Testing
import X509

@testable import PurchaseProof

let storeKitFixtures = repositoryRoot + "/../shared/interop/storekit"
let storeKitFixturesAvailable = FileManager.default.fileExists(atPath: storeKitFixtures + "/certs/testCA.der")

/// The test data of Apple's App Store Server Library (`../shared/interop/storekit`, read in
/// place): on each file, the transaction and notification verifiers reach the verdict Apple's
/// library reaches in its own tests, as the folder's README lists.
@Suite(.enabled(if: storeKitFixturesAvailable, "../shared/interop/storekit is missing"))
struct StoreKitFixtureTests {
  static let folder = storeKitFixtures

  static func text(_ name: String) throws -> String {
    String(decoding: try readFile(folder + "/" + name), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
  }

  static func testRoot() throws -> Certificate {
    try TransactionVerifier.loadRootCertificate(contentsOf: folder + "/certs/testCA.der")
  }

  static func notifications(
    bundle: String = "com.example", environment: TransactionVerifier.Environment = .sandbox, appAppleID: Int64? = 1234
  ) throws -> NotificationVerifier {
    NotificationVerifier(
      transactions: TransactionVerifier(rootCertificates: [try testRoot()], bundleID: bundle, environment: environment),
      appAppleID: appAppleID)
  }

  /// The refusal `body` throws (nil when it throws nothing, or something else).
  func rejection(_ body: () async throws -> Void) async -> TransactionRejection? {
    do {
      try await body()
      return nil
    } catch { return error as? TransactionRejection }
  }

  @Test func theTestNotificationVerifiesInSandbox() async throws {
    let notification = try await Self.notifications().verify(try Self.text("mock_signed_data/testNotification"))
    #expect(notification.notificationType == "TEST")
    #expect(notification.notificationUUID == "9ad56bd2-0bc6-42e0-af24-fd996d87a1e6")
    #expect(notification.environment == "Sandbox")
    #expect(notification.bundleID == "com.example")
    #expect(notification.appAppleID == 1234)
    #expect(notification.signedDate == Date(timeIntervalSince1970: 1_681_314_324))
    #expect(notification.transaction == nil)
  }

  @Test func theTestNotificationIsRefusedInProductionAndForAnotherApp() async throws {
    let jws = try Self.text("mock_signed_data/testNotification")
    // Apple: invalid environment.
    let production = try Self.notifications(environment: .production)
    #expect(await rejection { _ = try await production.verify(jws) } == .wrongEnvironment("Sandbox"))
    // Apple: appAppleId 1235 in Production is an invalid app identifier (checked before the
    // environment).
    let otherApp = try Self.notifications(environment: .production, appAppleID: 1235)
    #expect(await rejection { _ = try await otherApp.verify(jws) } == .wrongAppAppleID(1234))
  }

  @Test func aNotificationForAnotherBundleIsRefused() async throws {
    let verifier = try Self.notifications(bundle: "com.examplex")
    let jws = try Self.text("mock_signed_data/wrongBundleId")
    #expect(await rejection { _ = try await verifier.verify(jws) } == .wrongBundle("com.example.wrong"))
  }

  @Test func aNotificationWithoutX5cIsRefused() async throws {
    let verifier = try Self.notifications()
    let jws = try Self.text("mock_signed_data/missingX5CHeaderClaim")
    let refusal = await rejection { _ = try await verifier.verify(jws) }
    #expect(refusal?.code == "malformed-notification", "\(String(describing: refusal))")
  }

  @Test func notAJWSIsRefused() async throws {
    let verifier = try Self.notifications()
    for jws in ["a.b.c.d", "a.b.c", try Self.text("mock_signed_data/legacyTransaction")] {
      #expect(await rejection { _ = try await verifier.verify(jws) }?.code == "malformed-notification")
      #expect(await rejection { _ = try await verifier.transactions.verify(jws) }?.code == "malformed-transaction")
    }
  }

  @Test func theSignedTransactionAndRenewalInfoVerifyInSandbox() async throws {
    let verifier = TransactionVerifier(
      rootCertificates: [try Self.testRoot()], bundleID: "com.example", environment: .sandbox)
    let transaction = try await verifier.verify(try Self.text("mock_signed_data/transactionInfo"))
    #expect(transaction.environment == "Sandbox")
    #expect(transaction.signedDate == Date(timeIntervalSince1970: 1_672_956_154))
    let renewal = try await verifier.verifyRenewalInfo(try Self.text("mock_signed_data/renewalInfo"))
    #expect(renewal.environment == "Sandbox")
    // Another environment: refused, as Apple's library refuses it.
    let production = TransactionVerifier(
      rootCertificates: [try Self.testRoot()], bundleID: "com.example", environment: .production)
    #expect(
      await rejection { _ = try await production.verify(try! Self.text("mock_signed_data/transactionInfo")) }
        == .wrongEnvironment("Sandbox"))
    // Another root: the chain is not trusted.
    let other = try TestChain()
    let untrusted = TransactionVerifier(rootCertificates: [other.root], bundleID: "com.example", environment: .sandbox)
    #expect(
      await rejection { _ = try await untrusted.verify(try! Self.text("mock_signed_data/transactionInfo")) }?.code
        == "untrusted-chain")
  }

  /// Xcode's StoreKit testing signs with one self-signed certificate and fractional-millisecond
  /// dates. Apple's library decodes it without checking the signature; this verifier checks it
  /// against the certificate the operator configured, and refuses it otherwise.
  @Test func xcodeSignedDataVerifiesAgainstItsOwnCertificateOnly() async throws {
    let jws = try Self.text("xcode/xcode-signed-transaction")
    let xcodeCertificate = try SignedData(jws, maximumLength: 1 << 16, malformed: TransactionRejection.malformed)
      .chain[0]
    let bundle = "com.example.naturelab.backyardbirds.example"
    let xcode = TransactionVerifier(rootCertificates: [xcodeCertificate], bundleID: bundle, environment: .xcode)
    let transaction = try await xcode.verify(jws)
    #expect(transaction.productID == "pass.premium")
    #expect(transaction.environment == "Xcode")
    #expect(transaction.transactionID == "0")
    #expect(abs(transaction.signedDate.timeIntervalSince1970 - 1_697_679_936.056485) < 0.000_01)
    #expect(abs(transaction.expiresDate!.timeIntervalSince1970 - 1_700_358_336.0497297) < 0.000_01)
    let renewal = try await xcode.verifyRenewalInfo(try Self.text("xcode/xcode-signed-renewal-info"))
    #expect(renewal.autoRenewProductID == "pass.premium")

    // Any other configured certificate, or App Store rules: refused.
    let otherRoot = TransactionVerifier(rootCertificates: [try Self.testRoot()], bundleID: bundle, environment: .xcode)
    #expect(await rejection { _ = try await otherRoot.verify(jws) }?.code == "untrusted-chain")
    let production = TransactionVerifier(
      rootCertificates: [xcodeCertificate], bundleID: bundle, environment: .production)
    #expect(await rejection { _ = try await production.verify(jws) }?.code == "untrusted-chain")
    // One byte of the payload changed, the signature kept: refused (Apple's library would take it).
    var parts = jws.split(separator: ".").map(String.init)
    var payload = SignedData.base64URL(Substring(parts[1]).utf8)!
    let index = payload.firstIndex(of: UInt8(ascii: "0"))!
    payload[index] = UInt8(ascii: "1")
    parts[1] = TestChain.base64URL(Data(payload))
    #expect(await rejection { _ = try await xcode.verify(parts.joined(separator: ".")) } == .badSignature)
    // An app transaction and receipts are not transactions.
    for name in ["xcode/xcode-signed-app-transaction", "xcode/xcode-app-receipt-empty"] {
      #expect(await rejection { _ = try await xcode.verify(try! Self.text(name)) }?.code == "malformed-transaction")
    }
  }

  /// The decoded payloads Apple's library parses: signed here (LocalTesting, one self-signed
  /// certificate, as Xcode does), and read with the fields the gate uses.
  @Test func applesDecodedPayloadsReadAsTheGateNeeds() async throws {
    let chain = try TestChain()
    let local = TransactionVerifier(rootCertificates: [chain.root], bundleID: "com.example", environment: .localTesting)
    func signed(_ name: String) throws -> String {
      let object = try JSONSerialization.jsonObject(with: Data(try readFile(Self.folder + "/models/" + name)))
      return try chain.jws(object as! [String: Any], x5c: [chain.root], signer: chain.rootKey)
    }
    let revoked = try await local.verify(try signed("signedTransactionWithRevocation.json"))
    #expect(revoked.transactionID == "23456")
    #expect(revoked.originalTransactionID == "12345")
    #expect(revoked.type == "Auto-Renewable Subscription")
    #expect(revoked.revocationDate == Date(timeIntervalSince1970: 1_698_148_950))
    #expect(revoked.expiresDate == Date(timeIntervalSince1970: 1_698_149_000))
    #expect(
      await rejection { try revoked.check(productID: "com.example.product", expiresDate: nil) }
        == .revoked(Date(timeIntervalSince1970: 1_698_148_950)))

    let notifications = NotificationVerifier(transactions: local)
    let summary = try await notifications.verify(try signed("signedSummaryNotification.json"))
    #expect(summary.notificationType == "RENEWAL_EXTENSION")
    #expect(summary.subtype == "SUMMARY")
    #expect(summary.transaction == nil)
    // SUBSCRIBED carries a signedTransactionInfo; Apple's model has a placeholder there, which is
    // not a JWS: the notification is refused rather than stored without its transaction.
    #expect(
      await rejection { _ = try await notifications.verify(try! signed("signedNotification.json")) }?.code
        == "malformed-transaction")
  }
}
