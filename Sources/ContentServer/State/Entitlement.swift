import Foundation
import PurchaseProof

/// What the App Store's notifications, as the store keeps them, say about a verified transaction.
///
/// A signed transaction stays valid forever: StoreKit gave the buyer a JWS at purchase time, and a
/// refund does not change it. The notifications do:
///
/// - `REFUND` and `REVOKE` refuse the refunded transaction from the next request on, whatever the
///   `signedDate` of the JWS a client sends; and, among the transactions of the same purchase (the
///   same `originalTransactionId`: restores, renewals), every one signed before the revocation.
///   One signed after it carries Apple's own view: a `revocationDate` while it is revoked.
/// - `REFUND_REVERSED` restores what the refund refused. The newest notification (by the App
///   Store's `signedDate`, not by arrival: Apple retries out of order) decides.
/// - `DID_RENEW`, `EXPIRED` and `DID_CHANGE_RENEWAL_STATUS` carry a subscription's `expiresDate`.
///   The one from the transaction of the same product signed last (the client's JWS or a
///   notification's) wins.
/// - Only records of the transaction's own bundle and environment count.
package enum Entitlement {
  /// The notification types that revoke or restore access.
  package static let revocationTypes: Set<String> = ["REFUND", "REVOKE", "REFUND_REVERSED"]
  /// The notification types whose transaction carries a subscription's current expiry.
  package static let expiryTypes: Set<String> = ["DID_RENEW", "EXPIRED", "DID_CHANGE_RENEWAL_STATUS"]
  /// Every type the gate looks up for a download.
  package static var accessTypes: Set<String> { revocationTypes.union(expiryTypes) }

  /// Whether `transaction` grants `productID` at `now`, given the `records` the store holds for
  /// its `transactionId` and `originalTransactionId`. Throws the refusal.
  package static func check(
    _ transaction: VerifiedTransaction, productID: String, records: [NotificationRecord], now: Date
  ) throws(TransactionRejection) {
    // Only what the App Store said about this app in this environment (two gates, Production
    // and Sandbox, may share one database).
    let records = records.filter {
      $0.environment == transaction.environment && $0.bundleID == transaction.bundleID
    }
    if let revoked = revocation(of: transaction, in: records) { throw .revoked(revoked) }
    try transaction.check(productID: productID, expiresDate: expiry(of: transaction, in: records), now: now)
  }

  /// The date of a revocation that applies to `transaction`, if one does.
  static func revocation(of transaction: VerifiedTransaction, in records: [NotificationRecord]) -> Date? {
    // The newest revocation-related notification of each transaction decides for it; at equal
    // dates, the revocation wins.
    var latest: [String: NotificationRecord] = [:]
    for record in records where revocationTypes.contains(record.notificationType) {
      let key = record.transactionID ?? record.originalTransactionID ?? record.notificationUUID
      if let current = latest[key] {
        let newer = record.signedDate > current.signedDate
        let tieRevokes = record.signedDate == current.signedDate && record.notificationType != "REFUND_REVERSED"
        if !(newer || tieRevokes) { continue }
      }
      latest[key] = record
    }
    let signed = milliseconds(transaction.signedDate)
    var found: Int64?
    for record in latest.values where record.notificationType != "REFUND_REVERSED" {
      let revokedAt = record.revocationDate ?? record.signedDate
      let sameTransaction = record.transactionID != nil && record.transactionID == transaction.transactionID
      let samePurchase =
        record.originalTransactionID != nil && record.originalTransactionID == transaction.originalTransactionID
      if sameTransaction || (samePurchase && signed < revokedAt) {
        found = min(found ?? revokedAt, revokedAt)
      }
    }
    return found.map { Date(timeIntervalSince1970: Double($0) / 1000) }
  }

  /// A subscription's expiry: the transaction's own, unless a notification carries a transaction of
  /// the same purchase *and product* signed after it. A subscription group keeps one
  /// `originalTransactionId` across upgrades, downgrades and crossgrades: another product's
  /// renewal says nothing of this one's.
  static func expiry(of transaction: VerifiedTransaction, in records: [NotificationRecord]) -> Date? {
    var newest: (signed: Int64, expires: Int64)?
    for record in records where expiryTypes.contains(record.notificationType) {
      guard let expires = record.expiresDate, let original = record.originalTransactionID,
        original == transaction.originalTransactionID, record.productID == transaction.productID
      else { continue }
      let signed = record.transactionSignedDate ?? record.signedDate
      if newest == nil || signed > newest!.signed { newest = (signed, expires) }
    }
    if let newest, newest.signed > milliseconds(transaction.signedDate) {
      return Date(timeIntervalSince1970: Double(newest.expires) / 1000)
    }
    return transaction.expiresDate
  }

  /// Unix milliseconds, to the nearest.
  package static func milliseconds(_ date: Date) -> Int64 {
    Int64((date.timeIntervalSince1970 * 1000).rounded())
  }
}
