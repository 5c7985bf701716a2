import Crypto
import Foundation
import StoreKitTesting
import X509

/// The server tests' chain is the one `pkgtool storekit-test` makes (``StoreKitTestChain``: root →
/// WWDR-like intermediate → signing leaf, P-256 keys, Apple's marker extensions); this file only
/// adds the tests' defaults.
typealias TestChain = StoreKitTestChain

extension StoreKitTestChain {
  /// The standard payload of a purchase.
  static func payload(
    product: String = "com.example.app.book1", bundle: String = "com.example.app", environment: String = "Production",
    signedDate: Date = Date(timeIntervalSince1970: 1_760_000_000), extra: [String: Any] = [:]
  ) -> [String: Any] {
    var fields = StoreKitTestData.transaction(
      transactionID: "2000000123456789", bundleID: bundle, productID: product, environment: environment,
      signedDate: signedDate, purchaseDate: signedDate.addingTimeInterval(-5))
    for (key, value) in extra { fields[key] = value }
    return fields
  }

  /// The payload of an App Store Server Notification v2 about `transaction` (a signed
  /// transaction, or nil for TEST), signed at `signedDate`.
  static func notificationPayload(
    type: String, subtype: String? = nil, transaction: String?, uuid: String = UUID().uuidString,
    bundle: String = "com.example.app", environment: String = "Production", appAppleID: Int64 = 1_234_567_890,
    signedDate: Date = Date()
  ) -> [String: Any] {
    StoreKitTestData.notification(
      type: type, subtype: subtype, uuid: uuid, bundleID: bundle, environment: environment, appAppleID: appAppleID,
      signedDate: signedDate, signedTransactionInfo: transaction)
  }

  /// `{"signedPayload": JWS}` as the App Store POSTs it: a notification of `type` about
  /// `transaction` (a payload, signed here as its signedTransactionInfo).
  func notificationBody(
    type: String, subtype: String? = nil, transaction: [String: Any]?, uuid: String = UUID().uuidString,
    bundle: String = "com.example.app", environment: String = "Production", signedDate: Date = Date()
  ) throws -> String {
    let payload = TestChain.notificationPayload(
      type: type, subtype: subtype, transaction: try transaction.map { try jws($0) }, uuid: uuid, bundle: bundle,
      environment: environment, signedDate: signedDate)
    return try notificationBody(payload)
  }

  /// The standard purchase, signed by the leaf (or by `signer`), with `header` fields over the
  /// default `{"alg":"ES256","x5c":[leaf, intermediate, root]}`.
  func jws(header: [String: Any] = [:], x5c: [Certificate]? = nil, signer: P256.Signing.PrivateKey? = nil) throws
    -> String
  {
    try jws(TestChain.payload(), header: header, x5c: x5c, signer: signer)
  }

  static func base64URL(_ data: Data) -> String { base64URL(Array(data)) }
}
