import Crypto
import Foundation
import HostedContent
import SwiftASN1
import SystemIO
import TextCoding
// The chain is checked at the transaction's signedDate, a fixed time, as Apple's own server
// library does: swift-certificates offers that behind this SPI name.
@_spi(FixedExpiryValidationTime) import X509

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
/// - there is no `revocationDate`, and an `expiresDate` (a subscription) has not passed.
///
/// A value: one verifier serves any number of concurrent checks.
public struct TransactionVerifier: Sendable {
  /// The marker extension Apple puts on a certificate that signs App Store receipts and transactions.
  public static let leafMarker: ASN1ObjectIdentifier = [1, 2, 840, 113_635, 100, 6, 11, 1]
  /// The marker extension of Apple's Worldwide Developer Relations intermediate.
  public static let intermediateMarker: ASN1ObjectIdentifier = [1, 2, 840, 113_635, 100, 6, 2, 1]
  /// The longest signed transaction read; Apple's are about 4 KB.
  public static let maximumLength = 64 * 1024

  /// The App Store environment a transaction was made in.
  public enum Environment: String, Sendable, CaseIterable {
    case production = "Production"
    case sandbox = "Sandbox"
    case xcode = "Xcode"
    case localTesting = "LocalTesting"
  }

  /// The roots a chain must end at (Apple Root CA - G3 in production).
  public let rootCertificates: [Certificate]
  /// The app's bundle identifier.
  public let bundleID: String
  /// The environment transactions must come from.
  public let environment: Environment

  /// A verifier that trusts chains to `rootCertificates` only.
  public init(rootCertificates: [Certificate], bundleID: String, environment: Environment) {
    self.rootCertificates = rootCertificates
    self.bundleID = bundleID
    self.environment = environment
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
    let (header, payload, signingInput, signature) = try Self.split(jws)

    // The header: ES256 and an x5c chain, nothing this verifier does not understand.
    struct Header: Decodable {
      var alg: String?
      var x5c: [String]?
      var crit: [String]?
    }
    guard let decoded = try? JSONDecoder().decode(Header.self, from: Data(header)) else {
      throw .malformed("the JWS header is not a JSON object of the expected fields")
    }
    guard let alg = decoded.alg else { throw .malformed("the JWS header has no 'alg'") }
    guard alg == "ES256" else { throw .unsupportedAlgorithm(alg) }
    if decoded.crit != nil { throw .malformed("the JWS header has 'crit' parameters") }
    guard let x5c = decoded.x5c, (2...3).contains(x5c.count) else {
      throw .malformed("the JWS header's 'x5c' is not a list of 2 or 3 certificates")
    }
    var chain: [Certificate] = []
    for (index, text) in x5c.prefix(2).enumerated() {
      guard let der = Base64.decode(text, requirePadding: true), !text.contains(where: \.isWhitespace) else {
        throw .malformed("x5c[\(index)] is not base64")
      }
      do { chain.append(try Certificate(derEncoded: der)) } catch {
        throw .malformed("x5c[\(index)] is not an X.509 certificate")
      }
    }

    // The payload, read before the chain is checked only for its signedDate (the chain's time).
    let transaction = try VerifiedTransaction(payload: payload)

    // The signature, with the leaf's key.
    guard let leafKey = P256.Signing.PublicKey(chain[0].publicKey) else {
      throw .untrustedChain("the leaf certificate's key is not a P-256 key")
    }
    guard signature.count == 64, let ecdsa = try? P256.Signing.ECDSASignature(rawRepresentation: signature),
      leafKey.isValidSignature(ecdsa, for: signingInput)
    else { throw .badSignature }

    // The chain, at signedDate, to a configured root only.
    let validationTime = transaction.signedDate
    var verifier = Verifier(rootCertificates: CertificateStore(rootCertificates)) {
      RFC5280Policy(fixedExpiryValidationTime: validationTime)
      AppleMarkerPolicy()
    }
    let result = await verifier.validate(leaf: chain[0], intermediates: CertificateStore([chain[1]]))
    guard case .validCertificate = result else {
      if case .couldNotValidate(let failures) = result, let first = failures.first {
        throw .untrustedChain(first.policyFailureReason.description)
      }
      throw .untrustedChain("the certificates do not chain to the configured root")
    }

    // The purchase itself.
    guard transaction.bundleID == bundleID else { throw .wrongBundle(transaction.bundleID) }
    guard transaction.environment == environment.rawValue else { throw .wrongEnvironment(transaction.environment) }
    guard transaction.productID == productID else { throw .wrongProduct(transaction.productID) }
    if let revoked = transaction.revocationDate { throw .revoked(revoked) }
    if let expires = transaction.expiresDate, expires <= now { throw .expired(expires) }
    return transaction
  }

  /// The four parts of a compact JWS, decoded, and the bytes the signature covers.
  private static func split(_ jws: String) throws(TransactionRejection) -> (
    header: [UInt8], payload: [UInt8], signingInput: [UInt8], signature: [UInt8]
  ) {
    guard jws.utf8.count <= maximumLength else { throw .malformed("the JWS is longer than \(maximumLength) bytes") }
    let parts = jws.utf8.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
    guard parts.count == 3 else { throw .malformed("the JWS does not have three parts") }
    guard let header = base64URL(parts[0]), let payload = base64URL(parts[1]), let signature = base64URL(parts[2]),
      !header.isEmpty, !payload.isEmpty
    else { throw .malformed("a part of the JWS is not base64url") }
    let signingInput = Array(parts[0]) + [UInt8(ascii: ".")] + Array(parts[1])
    return (header, payload, signingInput, signature)
  }

  /// Unpadded base64url (RFC 7515), strictly: nothing outside its alphabet.
  static func base64URL(_ text: Substring.UTF8View) -> [UInt8]? {
    var standard = ""
    standard.reserveCapacity(text.count + 3)
    for byte in text {
      switch byte {
      case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
        UInt8(ascii: "0")...UInt8(ascii: "9"):
        standard.unicodeScalars.append(Unicode.Scalar(byte))
      case UInt8(ascii: "-"): standard.append("+")
      case UInt8(ascii: "_"): standard.append("/")
      default: return nil
      }
    }
    if standard.utf8.count % 4 == 1 { return nil }
    while standard.utf8.count % 4 != 0 { standard.append("=") }
    return Base64.decode(standard)
  }
}

/// The chain must be exactly leaf → intermediate → root, with Apple's marker extensions on the
/// leaf and on the intermediate.
struct AppleMarkerPolicy: VerifierPolicy {
  let verifyingCriticalExtensions: [ASN1ObjectIdentifier] = [
    TransactionVerifier.leafMarker, TransactionVerifier.intermediateMarker,
  ]

  func chainMeetsPolicyRequirements(chain: UnverifiedCertificateChain) async -> PolicyEvaluationResult {
    guard chain.count == 3 else {
      return .failsToMeetPolicy(reason: "the chain has \(chain.count) certificates, not leaf, intermediate and root")
    }
    guard chain[0].extensions[oid: TransactionVerifier.leafMarker] != nil else {
      return .failsToMeetPolicy(reason: "the leaf certificate lacks Apple's marker 1.2.840.113635.100.6.11.1")
    }
    guard chain[1].extensions[oid: TransactionVerifier.intermediateMarker] != nil else {
      return .failsToMeetPolicy(reason: "the intermediate certificate lacks Apple's marker 1.2.840.113635.100.6.2.1")
    }
    return .meetsPolicy
  }
}

/// Why a signed transaction does not prove the purchase. ``code`` is stable (the server answers
/// it); ``description`` says more.
public enum TransactionRejection: Error, Equatable, Sendable, CustomStringConvertible {
  /// Not a compact JWS, or a header or payload that is not what App Store transactions hold.
  case malformed(String)
  /// `alg` is not ES256 (`none`, HS256, RS256, …).
  case unsupportedAlgorithm(String)
  /// The x5c chain does not run to a configured root at `signedDate`, or lacks Apple's markers.
  case untrustedChain(String)
  /// The signature does not verify with the leaf's key.
  case badSignature
  /// Another app's transaction.
  case wrongBundle(String)
  /// Another environment's transaction (Sandbox against Production, say).
  case wrongEnvironment(String)
  /// A purchase of another product.
  case wrongProduct(String)
  /// Refunded or revoked.
  case revoked(Date)
  /// A subscription that has expired.
  case expired(Date)

  /// A short stable identifier: `malformed-transaction`, `unsupported-algorithm`, `untrusted-chain`,
  /// `bad-signature`, `wrong-bundle`, `wrong-environment`, `wrong-product`, `revoked`, `expired`.
  public var code: String {
    switch self {
    case .malformed: return "malformed-transaction"
    case .unsupportedAlgorithm: return "unsupported-algorithm"
    case .untrustedChain: return "untrusted-chain"
    case .badSignature: return "bad-signature"
    case .wrongBundle: return "wrong-bundle"
    case .wrongEnvironment: return "wrong-environment"
    case .wrongProduct: return "wrong-product"
    case .revoked: return "revoked"
    case .expired: return "expired"
    }
  }

  /// The reason, for people.
  public var description: String {
    switch self {
    case .malformed(let detail): return "the signed transaction is malformed: \(detail)"
    case .unsupportedAlgorithm(let alg): return "the signed transaction uses '\(alg)'; only ES256 is accepted"
    case .untrustedChain(let detail): return "the transaction's certificates are not trusted: \(detail)"
    case .badSignature: return "the transaction's signature does not verify with its leaf certificate"
    case .wrongBundle(let id): return "the transaction is for the app '\(id)', not this one"
    case .wrongEnvironment(let env): return "the transaction is from the \(env) environment, not this server's"
    case .wrongProduct(let id): return "the transaction is a purchase of '\(id)', not of the product requested"
    case .revoked(let date): return "the transaction was revoked on \(date.ISO8601Format())"
    case .expired(let date): return "the subscription expired on \(date.ISO8601Format())"
    }
  }
}

/// The fields of a verified transaction that a content server uses.
public struct VerifiedTransaction: Sendable, Equatable {
  /// The app's bundle identifier.
  public var bundleID: String
  /// `Production`, `Sandbox`, `Xcode` or `LocalTesting`.
  public var environment: String
  /// The product bought.
  public var productID: String
  /// The transaction's identifier.
  public var transactionID: String?
  /// When the App Store signed the transaction: the time the chain is checked at.
  public var signedDate: Date
  /// When it was revoked (refunded), if it was.
  public var revocationDate: Date?
  /// When a subscription expires.
  public var expiresDate: Date?

  /// Reads the JSON payload; the dates are milliseconds since 1970.
  init(payload: [UInt8]) throws(TransactionRejection) {
    struct Payload: Decodable {
      var bundleId: String?
      var environment: String?
      var productId: String?
      var transactionId: String?
      var signedDate: Int64?
      var revocationDate: Int64?
      var expiresDate: Int64?
    }
    let fields: Payload
    do { fields = try JSONDecoder().decode(Payload.self, from: Data(payload)) } catch {
      throw .malformed("the JWS payload is not a JSON object of the expected fields")
    }
    func date(_ milliseconds: Int64?) -> Date? {
      milliseconds.map { Date(timeIntervalSince1970: Double($0) / 1000) }
    }
    guard let bundleId = fields.bundleId, let environment = fields.environment, let productId = fields.productId,
      let signed = date(fields.signedDate)
    else { throw .malformed("the payload lacks 'bundleId', 'environment', 'productId' or 'signedDate'") }
    bundleID = bundleId
    self.environment = environment
    productID = productId
    transactionID = fields.transactionId
    signedDate = signed
    revocationDate = date(fields.revocationDate)
    expiresDate = date(fields.expiresDate)
  }
}
