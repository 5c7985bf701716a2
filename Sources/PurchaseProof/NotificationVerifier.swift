import Foundation
import X509

/// Checks an App Store Server Notification v2 (the `signedPayload` Apple POSTs) the way Apple's
/// own server library does (`verifyAndDecodeNotification`), and then the transaction inside it:
///
/// - the JWS: `alg` ES256, the `x5c` chain to a configured root at the notification's
///   `signedDate` (now when it has none) with Apple's marker extensions, the signature;
/// - `bundleId` (from `data`, `summary` or `externalPurchaseToken`), and in Production the
///   `appAppleId` when one is configured; then `environment`;
/// - `data.signedTransactionInfo`, when present, as a transaction of this app and environment
///   (``TransactionVerifier/verify(_:now:)`` without the proof-age cap);
/// - no `signedDate` in the future beyond the clock skew.
///
/// A value: one verifier serves any number of concurrent checks.
public struct NotificationVerifier: Sendable {
  /// The longest notification read. Apple's carry a transaction and renewal info: about 10 KB.
  public static let maximumLength = 256 * 1024

  /// The transactions inside notifications are checked with this verifier's roots, bundle,
  /// environment and skew.
  public let transactions: TransactionVerifier
  /// The app's Apple ID (its number in App Store Connect), checked in Production when given.
  public let appAppleID: Int64?

  /// A verifier with the roots, bundle and environment of `transactions`.
  public init(transactions: TransactionVerifier, appAppleID: Int64? = nil) {
    // The transaction inside a notification is as old as the purchase: no age cap applies.
    self.transactions = TransactionVerifier(
      rootCertificates: transactions.rootCertificates, bundleID: transactions.bundleID,
      environment: transactions.environment, allowedClockSkew: transactions.allowedClockSkew, maximumProofAge: nil)
    self.appAppleID = appAppleID
  }

  /// Checks `signedPayload` at `now`. Returns the notification, or throws the one reason it is
  /// refused.
  public func verify(_ signedPayload: String, now: Date = Date()) async throws(TransactionRejection)
    -> VerifiedNotification
  {
    let signed = try SignedData(
      signedPayload, maximumLength: Self.maximumLength, malformed: TransactionRejection.malformedNotification)
    let payload = try NotificationPayload(signed.payload)
    let chainTime = payload.signedDate ?? now
    try await signed.verify(
      roots: transactions.rootCertificates, at: chainTime, localTesting: transactions.environment.isLocal)

    // As Apple's library: the app first (bundle, and appAppleId in Production), then the
    // environment.
    let (bundleID, appAppleID, environment) = payload.app
    guard bundleID == transactions.bundleID else { throw .wrongBundle(bundleID ?? "(none)") }
    if transactions.environment == .production, let expected = self.appAppleID, appAppleID != expected {
      throw .wrongAppAppleID(appAppleID)
    }
    guard environment == transactions.environment.rawValue else { throw .wrongEnvironment(environment ?? "(none)") }
    if let signedDate = payload.signedDate {
      try transactions.checkClock(signedDate: signedDate, now: now, ageLimited: false)
    }
    guard let uuid = payload.notificationUUID, !uuid.isEmpty, uuid.utf8.count <= 128 else {
      throw .malformedNotification("the payload has no 'notificationUUID'")
    }
    guard let type = payload.notificationType, !type.isEmpty, type.utf8.count <= 64 else {
      throw .malformedNotification("the payload has no 'notificationType'")
    }

    var transaction: VerifiedTransaction?
    if let inner = payload.data?.signedTransactionInfo {
      transaction = try await transactions.verify(inner, now: now)
    }
    return VerifiedNotification(
      notificationUUID: uuid, notificationType: type, subtype: payload.subtype, signedDate: payload.signedDate,
      bundleID: transactions.bundleID, appAppleID: appAppleID, environment: transactions.environment.rawValue,
      transaction: transaction)
  }
}

/// A verified App Store Server Notification v2: what happened, to which transaction.
public struct VerifiedNotification: Sendable, Equatable {
  /// Its identifier: Apple sends a notification again, with the same UUID, until it is answered 200.
  public var notificationUUID: String
  /// `REFUND`, `REVOKE`, `REFUND_REVERSED`, `DID_RENEW`, `EXPIRED`, `TEST`, …
  public var notificationType: String
  /// `VOLUNTARY`, `BILLING_RETRY`, `AUTO_RENEW_DISABLED`, … when the type has one.
  public var subtype: String?
  /// When the App Store signed it (Apple's test data may lack it).
  public var signedDate: Date?
  /// The app it is for.
  public var bundleID: String
  /// The app's Apple ID, when the notification carries it.
  public var appAppleID: Int64?
  /// `Production`, `Sandbox`, …
  public var environment: String
  /// The transaction it is about (`data.signedTransactionInfo`), verified; nil for `TEST` and
  /// summary notifications.
  public var transaction: VerifiedTransaction?
}

/// The fields of a notification's payload that are read.
package struct NotificationPayload: Decodable {
  struct AppData: Decodable {
    var bundleId: String?
    var appAppleId: Int64?
    var environment: String?
    var signedTransactionInfo: String?
  }
  struct Token: Decodable {
    var bundleId: String?
    var appAppleId: Int64?
    var externalPurchaseId: String?
  }
  var notificationType: String?
  var subtype: String?
  var notificationUUID: String?
  var signedDateMilliseconds: Double?
  var data: AppData?
  var summary: AppData?
  var externalPurchaseToken: Token?
  /// The notification's `signedDate`.
  var signedDate: Date?

  enum CodingKeys: String, CodingKey {
    case notificationType, subtype, notificationUUID, data, summary, externalPurchaseToken
    case signedDateMilliseconds = "signedDate"
  }

  package init(_ bytes: [UInt8]) throws(TransactionRejection) {
    do { self = try JSONDecoder().decode(NotificationPayload.self, from: Data(bytes)) } catch {
      throw .malformedNotification("the JWS payload is not a JSON object of the expected fields")
    }
    if let milliseconds = signedDateMilliseconds {
      guard let date = AppStoreDate.date(milliseconds) else {
        throw .malformedNotification("'signedDate' is not a date")
      }
      signedDate = date
    }
  }

  /// The app and environment, from `data`, `summary` or `externalPurchaseToken`, as Apple's
  /// library reads them (an external purchase ID that starts with SANDBOX is Sandbox).
  package var app: (bundleID: String?, appAppleID: Int64?, environment: String?) {
    if let data { return (data.bundleId, data.appAppleId, data.environment) }
    if let summary { return (summary.bundleId, summary.appAppleId, summary.environment) }
    if let token = externalPurchaseToken {
      let sandbox = token.externalPurchaseId?.hasPrefix("SANDBOX") ?? false
      return (token.bundleId, token.appAppleId, sandbox ? "Sandbox" : "Production")
    }
    return (nil, nil, nil)
  }
}
