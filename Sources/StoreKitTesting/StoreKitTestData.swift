import Foundation

/// The payloads of test data, with the App Store's field names and types: a signed transaction
/// (`JWSTransactionDecodedPayload`) and an App Store Server Notification v2
/// (`ResponseBodyV2DecodedPayload`). ``StoreKitTestChain`` signs them.
package enum StoreKitTestData {
  /// A transaction of `productID` for `bundleID`. Dates are App Store dates (milliseconds since
  /// 1970); `purchaseDate` is `signedDate` unless given. With `expiresDate` it is an
  /// auto-renewable subscription's, else a non-consumable's; with `revocationDate` it is
  /// refunded (`revocationReason` 0).
  package static func transaction(
    transactionID: String, originalTransactionID: String? = nil, bundleID: String, productID: String,
    environment: String, signedDate: Date, purchaseDate: Date? = nil, expiresDate: Date? = nil,
    revocationDate: Date? = nil
  ) -> [String: Any] {
    let purchased = milliseconds(purchaseDate ?? signedDate)
    var fields: [String: Any] = [
      "transactionId": transactionID, "originalTransactionId": originalTransactionID ?? transactionID,
      "bundleId": bundleID, "productId": productID, "purchaseDate": purchased, "originalPurchaseDate": purchased,
      "signedDate": milliseconds(signedDate), "environment": environment,
      "type": expiresDate == nil ? "Non-Consumable" : "Auto-Renewable Subscription", "quantity": 1,
      "inAppOwnershipType": "PURCHASED", "transactionReason": "PURCHASE", "storefront": "USA",
      "storefrontId": "143441",
    ]
    if let expiresDate { fields["expiresDate"] = milliseconds(expiresDate) }
    if let revocationDate {
      fields["revocationDate"] = milliseconds(revocationDate)
      fields["revocationReason"] = 0
    }
    return fields
  }

  /// A notification of `type` (and `subtype`) about `signedTransactionInfo` (a signed
  /// transaction; nil for `TEST`), as the App Store sends it for `bundleID` in `environment`.
  package static func notification(
    type: String, subtype: String? = nil, uuid: String = UUID().uuidString.lowercased(), bundleID: String,
    environment: String, appAppleID: Int64? = nil, signedDate: Date, signedTransactionInfo: String?
  ) -> [String: Any] {
    var data: [String: Any] = ["bundleId": bundleID, "environment": environment, "bundleVersion": "1"]
    if let appAppleID { data["appAppleId"] = appAppleID }
    if let signedTransactionInfo { data["signedTransactionInfo"] = signedTransactionInfo }
    var fields: [String: Any] = [
      "notificationType": type, "notificationUUID": uuid, "data": data, "version": "2.0",
      "signedDate": milliseconds(signedDate),
    ]
    if let subtype { fields["subtype"] = subtype }
    return fields
  }

  /// `date` in App Store form: whole milliseconds since 1970, to the nearest.
  package static func milliseconds(_ date: Date) -> Int64 {
    Int64((date.timeIntervalSince1970 * 1000).rounded())
  }
}
