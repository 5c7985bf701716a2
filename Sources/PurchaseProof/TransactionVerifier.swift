import Crypto
import Foundation
import HostedContent
import SwiftASN1
import SystemIO
import X509

/// Checks a StoreKit 2 / App Store Server API signed transaction (a compact JWS) the way Apple's
/// own server library does, with no network: the purchase it names is proved only when
///
/// - the header's `alg` is `ES256` and nothing else;
/// - the `x5c` chain runs leaf → intermediate → one of the configured roots, checked with
///   swift-certificates at the transaction's `signedDate` (RFC 5280: validity, CA constraints,
///   signatures), with Apple's marker extensions on the leaf (1.2.840.113635.100.6.11.1) and on the
///   intermediate (1.2.840.113635.100.6.2.1);
/// - the JWS signature verifies with the leaf's P-256 key;
/// - `bundleId`, `environment` and `productId` are the expected ones;
/// - its `signedDate` is not in the future (beyond ``allowedClockSkew``) nor, when the operator
///   caps it, older than ``maximumProofAge``;
/// - there is no `revocationDate`, and an `expiresDate` (a subscription) has not passed.
///
/// In the Xcode and LocalTesting environments, the data StoreKit testing signs carries one
/// self-signed certificate: it must be exactly a configured root, and its signature is checked.
///
/// A transaction stays valid forever once signed: a refund does not change it. A gate learns of
/// refunds from App Store Server Notifications (``NotificationVerifier``) and keeps them.
///
/// A value: one verifier serves any number of concurrent checks.
public struct TransactionVerifier: Sendable {
  /// The marker extension Apple puts on a certificate that signs App Store receipts and transactions.
  public static let leafMarker: ASN1ObjectIdentifier = [1, 2, 840, 113_635, 100, 6, 11, 1]
  /// The marker extension of Apple's Worldwide Developer Relations intermediate.
  public static let intermediateMarker: ASN1ObjectIdentifier = [1, 2, 840, 113_635, 100, 6, 2, 1]
  /// The longest signed transaction read; Apple's are about 4 KB.
  public static let maximumLength = 64 * 1024
  /// How far in the future a `signedDate` may lie, for clocks that differ: five minutes.
  public static let defaultClockSkew: TimeInterval = 300

  /// The App Store environment a transaction was made in.
  public enum Environment: String, Sendable, CaseIterable {
    case production = "Production"
    case sandbox = "Sandbox"
    case xcode = "Xcode"
    case localTesting = "LocalTesting"

    /// Xcode or LocalTesting: data signed by StoreKit testing, not by the App Store.
    public var isLocal: Bool { self == .xcode || self == .localTesting }
  }

  /// The roots a chain must end at (Apple Root CA - G3 in production).
  public let rootCertificates: [Certificate]
  /// The app's bundle identifier.
  public let bundleID: String
  /// The environment transactions must come from.
  public let environment: Environment
  /// How far in the future a `signedDate` may lie.
  public let allowedClockSkew: TimeInterval
  /// The oldest a transaction's `signedDate` may be, when the operator caps it (nil: no cap).
  /// For non-renewing subscriptions and anything else whose proof should be fresh.
  public let maximumProofAge: TimeInterval?

  /// A verifier that trusts chains to `rootCertificates` only.
  public init(
    rootCertificates: [Certificate], bundleID: String, environment: Environment,
    allowedClockSkew: TimeInterval = TransactionVerifier.defaultClockSkew, maximumProofAge: TimeInterval? = nil
  ) {
    self.rootCertificates = rootCertificates
    self.bundleID = bundleID
    self.environment = environment
    self.allowedClockSkew = allowedClockSkew
    self.maximumProofAge = maximumProofAge
  }

  /// The SHA-256 of Apple Root CA - G3's DER encoding, as https://www.apple.com/certificateauthority/
  /// lists it (docs/serve.md shows how to check a copy).
  public static let appleRootCAG3SHA256 = "63343abfb89a6a03ebb57e9b3f5fa7be7c4f5c756f3017b3a8c488c3653e9179"

  /// The SHA-256 of `certificate`'s DER encoding, lower-case hex.
  public static func fingerprint(_ certificate: Certificate) throws -> String {
    var serializer = DER.Serializer()
    try serializer.serialize(certificate)
    return SHA256.hash(data: serializer.serializedBytes).map { String(format: "%02x", $0) }.joined()
  }

  /// Whether `certificate` is Apple Root CA - G3 (by the SHA-256 of its DER encoding).
  public static func isAppleRoot(_ certificate: Certificate) throws -> Bool {
    try fingerprint(certificate) == appleRootCAG3SHA256
  }

  /// Reads a root certificate, PEM or DER (Apple publishes `AppleRootCA-G3.cer` in DER), from
  /// `path`. The error names the file and says where to get the right one.
  public static func loadRootCertificate(contentsOf path: String) throws -> Certificate {
    let hint =
      "download AppleRootCA-G3.cer from https://www.apple.com/certificateauthority/ and check it as docs/serve.md shows"
    let bytes: [UInt8]
    do {
      let file = try FileDescriptor.open(regularFile: path)
      let size = try file.size()
      guard size <= 1 << 20 else {
        throw OperationError("the root certificate '\(path)' is \(size) bytes, not a certificate", hint: hint)
      }
      bytes = try file.read(count: Int(size), at: 0)
    } catch let error as OperationError {
      throw error
    } catch {
      throw OperationError("cannot read the root certificate '\(path)': \(error)", hint: hint)
    }
    let text = String(decoding: bytes, as: UTF8.self)
    do {
      if text.contains("-----BEGIN CERTIFICATE-----") {
        return try Certificate(pemEncoded: text)
      }
      return try Certificate(derEncoded: bytes)
    } catch {
      throw OperationError("'\(path)' is not an X.509 certificate in PEM or DER", hint: hint)
    }
  }

  /// Checks `jws` as the proof of a purchase of `productID`, at `now` (for a subscription's
  /// expiry). Returns the transaction's fields, or throws the one reason it is refused.
  public func verify(_ jws: String, productID: String, now: Date = Date()) async throws(TransactionRejection)
    -> VerifiedTransaction
  {
    let transaction = try await verify(jws, now: now)
    try transaction.check(productID: productID, expiresDate: transaction.expiresDate, now: now)
    return transaction
  }

  /// Checks that `jws` is a transaction signed for this app and environment, as Apple's
  /// `verifyAndDecodeSignedTransaction` does (the signature, the chain at `signedDate`,
  /// `bundleId`, `environment`), plus the clock checks. What it bought, and whether it was
  /// refunded or has expired, is left to the caller:
  /// ``VerifiedTransaction/check(productID:expiresDate:now:)``.
  public func verify(_ jws: String, now: Date = Date()) async throws(TransactionRejection) -> VerifiedTransaction {
    let signed = try SignedData(jws, maximumLength: Self.maximumLength, malformed: TransactionRejection.malformed)
    // The payload, read before the chain is checked only for its signedDate (the chain's time).
    let transaction = try VerifiedTransaction(payload: signed.payload)
    try await signed.verify(roots: rootCertificates, at: transaction.signedDate, localTesting: environment.isLocal)
    guard transaction.bundleID == bundleID else { throw .wrongBundle(transaction.bundleID) }
    guard transaction.environment == environment.rawValue else { throw .wrongEnvironment(transaction.environment) }
    try checkClock(signedDate: transaction.signedDate, now: now, ageLimited: true)
    return transaction
  }

  /// Checks signed renewal info (`signedRenewalInfo` in a notification, or from StoreKit) as
  /// Apple's `verifyAndDecodeRenewalInfo` does: the signature, the chain at its `signedDate`,
  /// the environment; and no `signedDate` in the future.
  public func verifyRenewalInfo(_ jws: String, now: Date = Date()) async throws(TransactionRejection)
    -> VerifiedRenewalInfo
  {
    let signed = try SignedData(jws, maximumLength: Self.maximumLength, malformed: TransactionRejection.malformed)
    let info = try VerifiedRenewalInfo(payload: signed.payload)
    try await signed.verify(roots: rootCertificates, at: info.signedDate, localTesting: environment.isLocal)
    guard info.environment == environment.rawValue else { throw .wrongEnvironment(info.environment) }
    try checkClock(signedDate: info.signedDate, now: now, ageLimited: false)
    return info
  }

  /// A `signedDate` later than `now` by more than the skew is refused (no signer dates the
  /// future); so is, with ``maximumProofAge`` and `ageLimited`, one older than that.
  func checkClock(signedDate: Date, now: Date, ageLimited: Bool) throws(TransactionRejection) {
    if signedDate.timeIntervalSince(now) > allowedClockSkew { throw .signedInFuture(signedDate) }
    if ageLimited, let maximumProofAge, now.timeIntervalSince(signedDate) > maximumProofAge {
      throw .proofTooOld(signedDate)
    }
  }
}

/// Why a signed transaction or notification does not prove what it should. ``code`` is stable
/// (the server answers it); ``description`` says more.
public enum TransactionRejection: Error, Equatable, Sendable, CustomStringConvertible {
  /// Not a compact JWS, or a header or payload that is not what App Store transactions hold.
  case malformed(String)
  /// A notification whose JWS or payload is not what App Store Server Notifications v2 hold.
  case malformedNotification(String)
  /// `alg` is not ES256 (`none`, HS256, RS256, …).
  case unsupportedAlgorithm(String)
  /// The x5c chain does not run to a configured root at `signedDate`, or lacks Apple's markers.
  case untrustedChain(String)
  /// The signature does not verify with the leaf's key.
  case badSignature
  /// Another app's transaction or notification.
  case wrongBundle(String)
  /// A notification for another `appAppleId` (checked in Production, as Apple's library does).
  case wrongAppAppleID(Int64?)
  /// Another environment's transaction (Sandbox against Production, say).
  case wrongEnvironment(String)
  /// A purchase of another product.
  case wrongProduct(String)
  /// Refunded or revoked: the transaction says so, or the App Store told the gate.
  case revoked(Date)
  /// A subscription that has expired.
  case expired(Date)
  /// Signed at a date later than now, beyond the clock skew allowed.
  case signedInFuture(Date)
  /// Signed longer ago than the operator allows (`--max-proof-age`).
  case proofTooOld(Date)

  /// A short stable identifier: `malformed-transaction`, `malformed-notification`,
  /// `unsupported-algorithm`, `untrusted-chain`, `bad-signature`, `wrong-bundle`,
  /// `wrong-app-apple-id`, `wrong-environment`, `wrong-product`, `revoked`, `expired`,
  /// `signed-in-future`, `proof-too-old`.
  public var code: String {
    switch self {
    case .malformed: return "malformed-transaction"
    case .malformedNotification: return "malformed-notification"
    case .unsupportedAlgorithm: return "unsupported-algorithm"
    case .untrustedChain: return "untrusted-chain"
    case .badSignature: return "bad-signature"
    case .wrongBundle: return "wrong-bundle"
    case .wrongAppAppleID: return "wrong-app-apple-id"
    case .wrongEnvironment: return "wrong-environment"
    case .wrongProduct: return "wrong-product"
    case .revoked: return "revoked"
    case .expired: return "expired"
    case .signedInFuture: return "signed-in-future"
    case .proofTooOld: return "proof-too-old"
    }
  }

  /// The reason, for people.
  public var description: String {
    switch self {
    case .malformed(let detail): return "the signed transaction is malformed: \(detail)"
    case .malformedNotification(let detail): return "the signed notification is malformed: \(detail)"
    case .unsupportedAlgorithm(let alg): return "the signed data uses '\(alg)'; only ES256 is accepted"
    case .untrustedChain(let detail): return "the signing certificates are not trusted: \(detail)"
    case .badSignature: return "the signature does not verify with the leaf certificate"
    case .wrongBundle(let id): return "the signed data is for the app '\(id)', not this one"
    case .wrongAppAppleID(let id):
      return "the notification is for the app with Apple ID \(id.map(String.init) ?? "(none)"), not this one"
    case .wrongEnvironment(let env): return "the signed data is from the \(env) environment, not this server's"
    case .wrongProduct(let id): return "the transaction is a purchase of '\(id)', not of the product requested"
    case .revoked(let date): return "the transaction was refunded or revoked on \(date.ISO8601Format())"
    case .expired(let date): return "the subscription expired on \(date.ISO8601Format())"
    case .signedInFuture(let date):
      return "the signed data is dated \(date.ISO8601Format()), later than this server's clock allows"
    case .proofTooOld(let date):
      return
        "the transaction was signed on \(date.ISO8601Format()), longer ago than this server accepts; get a fresh one from StoreKit (Transaction.latest(for:))"
    }
  }
}

/// The fields of a verified transaction that a content server uses.
public struct VerifiedTransaction: Sendable, Equatable {
  /// The app's bundle identifier.
  public var bundleID: String
  /// `Production`, `Sandbox`, `Xcode` or `LocalTesting`.
  public var environment: String
  /// The product bought (nil when the payload names none, as in some of Apple's test data).
  public var productID: String?
  /// The transaction's identifier.
  public var transactionID: String?
  /// The identifier of the original purchase: the same across restores and renewals.
  public var originalTransactionID: String?
  /// `Non-Consumable`, `Auto-Renewable Subscription`, … as the App Store names it.
  public var type: String?
  /// When the App Store signed the transaction: the time the chain is checked at.
  public var signedDate: Date
  /// When it was bought (or renewed).
  public var purchaseDate: Date?
  /// When it was revoked (refunded), if it was.
  public var revocationDate: Date?
  /// When a subscription expires.
  public var expiresDate: Date?

  /// Reads the JSON payload; the dates are milliseconds since 1970 (fractional from Xcode).
  package init(payload: [UInt8], malformed: (String) -> TransactionRejection = TransactionRejection.malformed)
    throws(TransactionRejection)
  {
    struct Payload: Decodable {
      var bundleId: String?
      var environment: String?
      var productId: String?
      var transactionId: String?
      var originalTransactionId: String?
      var type: String?
      var signedDate: Double?
      var purchaseDate: Double?
      var revocationDate: Double?
      var expiresDate: Double?
    }
    let fields: Payload
    do { fields = try JSONDecoder().decode(Payload.self, from: Data(payload)) } catch {
      throw malformed("the JWS payload is not a JSON object of the expected fields")
    }
    func date(_ milliseconds: Double?, _ name: String) throws(TransactionRejection) -> Date? {
      guard let milliseconds else { return nil }
      guard let date = AppStoreDate.date(milliseconds) else { throw malformed("'\(name)' is not a date") }
      return date
    }
    guard let bundleId = fields.bundleId, let environment = fields.environment,
      let signed = try date(fields.signedDate, "signedDate")
    else { throw malformed("the payload lacks 'bundleId', 'environment' or 'signedDate'") }
    bundleID = bundleId
    self.environment = environment
    productID = fields.productId
    transactionID = fields.transactionId
    originalTransactionID = fields.originalTransactionId
    type = fields.type
    signedDate = signed
    purchaseDate = try date(fields.purchaseDate, "purchaseDate")
    revocationDate = try date(fields.revocationDate, "revocationDate")
    expiresDate = try date(fields.expiresDate, "expiresDate")
  }

  /// Whether this verified transaction grants `productID` at `now`: the product, no
  /// `revocationDate`, and `expiresDate` (the transaction's own, or a newer one the caller
  /// learned from the App Store's notifications) not passed.
  public func check(productID: String, expiresDate: Date?, now: Date = Date()) throws(TransactionRejection) {
    guard self.productID == productID else { throw .wrongProduct(self.productID ?? "(none)") }
    if let revocationDate { throw .revoked(revocationDate) }
    if let expiresDate, expiresDate <= now { throw .expired(expiresDate) }
  }
}

/// The fields of verified renewal info that a gate may use.
public struct VerifiedRenewalInfo: Sendable, Equatable {
  /// `Production`, `Sandbox`, `Xcode` or `LocalTesting`.
  public var environment: String
  /// When it was signed.
  public var signedDate: Date
  /// The purchase it renews.
  public var originalTransactionID: String?
  /// The product that renews next.
  public var autoRenewProductID: String?
  /// When the subscription renews next.
  public var renewalDate: Date?

  package init(payload: [UInt8]) throws(TransactionRejection) {
    struct Payload: Decodable {
      var environment: String?
      var signedDate: Double?
      var originalTransactionId: String?
      var autoRenewProductId: String?
      var renewalDate: Double?
    }
    guard let fields = try? JSONDecoder().decode(Payload.self, from: Data(payload)) else {
      throw .malformed("the renewal info is not a JSON object of the expected fields")
    }
    guard let environment = fields.environment, let signed = AppStoreDate.date(fields.signedDate) else {
      throw .malformed("the renewal info lacks 'environment' or 'signedDate'")
    }
    self.environment = environment
    signedDate = signed
    originalTransactionID = fields.originalTransactionId
    autoRenewProductID = fields.autoRenewProductId
    if let renewal = fields.renewalDate {
      guard let date = AppStoreDate.date(renewal) else { throw .malformed("'renewalDate' is not a date") }
      renewalDate = date
    }
  }
}
