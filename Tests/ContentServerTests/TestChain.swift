import Crypto
import Foundation
import HostedContent
import PurchaseProof
import SwiftASN1
import TextCoding
import X509

/// A certificate chain with the shape of Apple's (root → WWDR-like intermediate → signing leaf,
/// P-256 keys, Apple's marker extensions), made here, and signed transactions from its leaf.
struct TestChain {
  struct Options {
    var intermediateValidity = Date(timeIntervalSince1970: 1_600_000_000)...Date(timeIntervalSince1970: 2_400_000_000)
    var leafMarker = true
    var intermediateMarker = true
    var intermediateIsCA = true
  }

  let rootKey: P256.Signing.PrivateKey
  let intermediateKey = P256.Signing.PrivateKey()
  let leafKey = P256.Signing.PrivateKey()
  let root: Certificate
  let intermediate: Certificate
  let leaf: Certificate

  /// A chain; with `sharing`, under that chain's root (a second intermediate of the same CA).
  init(_ options: Options = Options(), sharing: TestChain? = nil) throws {
    rootKey = sharing?.rootKey ?? P256.Signing.PrivateKey()
    let from = Date(timeIntervalSince1970: 1_600_000_000)
    let until = Date(timeIntervalSince1970: 2_400_000_000)
    let rootName = try DistinguishedName {
      CommonName("Test Root CA - G3")
      OrganizationName("pkgtool tests")
    }
    let intermediateName = try DistinguishedName {
      CommonName("Test WWDR G6")
      OrganizationName("pkgtool tests")
    }
    let leafName = try DistinguishedName {
      CommonName("Test Store Signing")
      OrganizationName("pkgtool tests")
    }
    root =
      try sharing?.root
      ?? Certificate(
        version: .v3, serialNumber: .init(), publicKey: .init(rootKey.publicKey), notValidBefore: from,
        notValidAfter: until, issuer: rootName, subject: rootName, signatureAlgorithm: .ecdsaWithSHA256,
        extensions: try Certificate.Extensions {
          Critical(BasicConstraints.isCertificateAuthority(maxPathLength: nil))
          Critical(KeyUsage(keyCertSign: true, cRLSign: true))
        }, issuerPrivateKey: .init(rootKey))
    let intermediateMarker = options.intermediateMarker
    let intermediateIsCA = options.intermediateIsCA
    intermediate = try Certificate(
      version: .v3, serialNumber: .init(), publicKey: .init(intermediateKey.publicKey),
      notValidBefore: options.intermediateValidity.lowerBound, notValidAfter: options.intermediateValidity.upperBound,
      issuer: rootName, subject: intermediateName, signatureAlgorithm: .ecdsaWithSHA256,
      extensions: try Certificate.Extensions {
        if intermediateIsCA {
          Critical(BasicConstraints.isCertificateAuthority(maxPathLength: 0))
        } else {
          Critical(BasicConstraints.notCertificateAuthority)
        }
        Critical(KeyUsage(keyCertSign: true, cRLSign: true))
        if intermediateMarker {
          Certificate.Extension(oid: TransactionVerifier.intermediateMarker, critical: false, value: [0x05, 0x00])
        }
      }, issuerPrivateKey: .init(rootKey))
    let leafMarker = options.leafMarker
    leaf = try Certificate(
      version: .v3, serialNumber: .init(), publicKey: .init(leafKey.publicKey), notValidBefore: from,
      notValidAfter: until, issuer: intermediateName, subject: leafName, signatureAlgorithm: .ecdsaWithSHA256,
      extensions: try Certificate.Extensions {
        Critical(BasicConstraints.notCertificateAuthority)
        Critical(KeyUsage(digitalSignature: true))
        if leafMarker {
          Certificate.Extension(oid: TransactionVerifier.leafMarker, critical: false, value: [0x05, 0x00])
        }
      }, issuerPrivateKey: .init(intermediateKey))
  }

  /// The root in PEM, as an operator would configure it.
  func rootPEM() throws -> String { try root.serializeAsPEM().pemString }

  static func der(_ certificate: Certificate) throws -> String {
    var serializer = DER.Serializer()
    try serializer.serialize(certificate)
    return Base64.encode(serializer.serializedBytes)
  }

  /// The standard payload of a purchase.
  static func payload(
    product: String = "com.example.app.book1", bundle: String = "com.example.app", environment: String = "Production",
    signedDate: Date = Date(timeIntervalSince1970: 1_760_000_000), extra: [String: Any] = [:]
  ) -> [String: Any] {
    var fields: [String: Any] = [
      "transactionId": "2000000123456789", "originalTransactionId": "2000000123456789", "bundleId": bundle,
      "productId": product, "purchaseDate": Int64(signedDate.timeIntervalSince1970 * 1000) - 5000,
      "signedDate": Int64(signedDate.timeIntervalSince1970 * 1000), "environment": environment,
      "type": "Non-Consumable", "quantity": 1, "inAppOwnershipType": "PURCHASED",
    ]
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
    var data: [String: Any] = [
      "bundleId": bundle, "environment": environment, "appAppleId": appAppleID, "bundleVersion": "1.0",
    ]
    if let transaction { data["signedTransactionInfo"] = transaction }
    var fields: [String: Any] = [
      "notificationType": type, "notificationUUID": uuid, "data": data, "version": "2.0",
      "signedDate": Int64(signedDate.timeIntervalSince1970 * 1000),
    ]
    if let subtype { fields["subtype"] = subtype }
    return fields
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
    let body = try JSONSerialization.data(withJSONObject: ["signedPayload": try jws(payload)])
    return String(decoding: body, as: UTF8.self)
  }

  /// A compact JWS of `payload` signed by the leaf (or by `signer`), with `header` fields over
  /// the default `{"alg":"ES256","x5c":[leaf, intermediate, root]}`.
  func jws(
    _ payload: [String: Any] = TestChain.payload(), header: [String: Any] = [:], x5c: [Certificate]? = nil,
    signer: P256.Signing.PrivateKey? = nil
  ) throws -> String {
    var fields: [String: Any] = [
      "alg": "ES256", "x5c": try (x5c ?? [leaf, intermediate, root]).map(TestChain.der),
    ]
    for (key, value) in header { fields[key] = value }
    let input =
      TestChain.base64URL(try JSONSerialization.data(withJSONObject: fields, options: .sortedKeys)) + "."
      + TestChain.base64URL(try JSONSerialization.data(withJSONObject: payload, options: .sortedKeys))
    let signature = try (signer ?? leafKey).signature(for: Data(input.utf8))
    return input + "." + TestChain.base64URL(signature.rawRepresentation)
  }

  static func base64URL(_ data: Data) -> String {
    Base64.encode(Array(data)).replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
      .replacingOccurrences(of: "=", with: "")
  }
}
