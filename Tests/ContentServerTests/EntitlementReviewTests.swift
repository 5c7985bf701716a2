import Foundation
import PurchaseProof
import Testing

@testable import ContentServer

/// Review of issue 43 (red team): what `Entitlement` decides for cases the issue names, on
/// records as the store returns them.
@Suite struct EntitlementReviewTests {
  let now = Date()
  var nowMS: Int64 { Int64(now.timeIntervalSince1970 * 1000) }

  func transaction(product: String, id: String, original: String, signedDaysAgo: Double, expiresInDays: Double)
    throws -> VerifiedTransaction
  {
    let payload: [String: Any] = [
      "bundleId": "com.example.app", "environment": "Production", "productId": product, "transactionId": id,
      "originalTransactionId": original, "type": "Auto-Renewable Subscription",
      "signedDate": nowMS - Int64(signedDaysAgo * 86_400_000),
      "expiresDate": nowMS + Int64(expiresInDays * 86_400_000),
    ]
    return try VerifiedTransaction(payload: Array(try JSONSerialization.data(withJSONObject: payload)))
  }

  /// A subscription group shares one originalTransactionId across its products (upgrades,
  /// downgrades, crossgrades). After a downgrade from premium to basic, the App Store's DID_RENEW
  /// carries a *basic* transaction; the buyer's old premium JWS must stay expired. The gate takes
  /// the renewal's expiresDate whatever its product, so the stale premium proof is granted for
  /// the whole basic period.
  @Test func aRenewalOfAnotherProductOfTheGroupDoesNotExtendThisProduct() throws {
    let premium = try transaction(
      product: "com.example.premium", id: "5000000000000001", original: "5000000000000001", signedDaysAgo: 40,
      expiresInDays: -10)
    let basicRenewal = NotificationRecord(
      notificationUUID: UUID().uuidString, notificationType: "DID_RENEW", subtype: nil, signedDate: nowMS - 86_400_000,
      environment: "Production", bundleID: "com.example.app", transactionID: "5000000000000002",
      originalTransactionID: "5000000000000001", productID: "com.example.basic",
      transactionSignedDate: nowMS - 86_400_000, revocationDate: nil, expiresDate: nowMS + 20 * 86_400_000,
      signedPayload: "-", receivedAt: nowMS)
    #expect(throws: TransactionRejection.self) {
      try Entitlement.check(premium, productID: "com.example.premium", records: [basicRenewal], now: now)
    }
  }

  /// A Production and a Sandbox gate may share one database: a Sandbox refund of a transaction
  /// with the same identifiers does not refuse the Production purchase.
  @Test func onlyRecordsOfTheSameEnvironmentAndAppCount() throws {
    let bought = try transaction(
      product: "com.example.premium", id: "7000000000000001", original: "7000000000000001", signedDaysAgo: 5,
      expiresInDays: 20)
    func refund(environment: String, bundle: String) -> NotificationRecord {
      NotificationRecord(
        notificationUUID: UUID().uuidString, notificationType: "REFUND", subtype: nil, signedDate: nowMS,
        environment: environment, bundleID: bundle, transactionID: "7000000000000001",
        originalTransactionID: "7000000000000001", productID: "com.example.premium", transactionSignedDate: nowMS,
        revocationDate: nowMS, expiresDate: nil, signedPayload: "-", receivedAt: nowMS)
    }
    try Entitlement.check(
      bought, productID: "com.example.premium",
      records: [
        refund(environment: "Sandbox", bundle: "com.example.app"),
        refund(environment: "Production", bundle: "com.other"),
      ],
      now: now)
    #expect(throws: TransactionRejection.self) {
      try Entitlement.check(
        bought, productID: "com.example.premium",
        records: [refund(environment: "Production", bundle: "com.example.app")],
        now: now)
    }
  }
}
