import Crypto
import Foundation
import SwiftASN1
import TextCoding
// The chain is checked at a fixed time (the signed data's signedDate), as Apple's own server
// library does: swift-certificates offers that behind this SPI name.
@_spi(FixedExpiryValidationTime) import X509

/// A compact JWS as the App Store signs it (transactions, renewal info, server notifications),
/// split and decoded but not yet trusted. ``verify(roots:at:localTesting:)`` checks it.
///
/// One reading for every kind of signed data, so the transaction and notification verifiers
/// cannot disagree about what a JWS is.
package struct SignedData {
  /// The decoded payload (JSON).
  package let payload: [UInt8]
  /// The certificates of `x5c`, leaf first (at most two are read: the root comes from the
  /// configuration, never from the JWS).
  package let chain: [Certificate]
  /// The signature, raw `r || s`.
  private let signature: [UInt8]
  /// The bytes the signature covers: `BASE64URL(header) "." BASE64URL(payload)`.
  private let signingInput: [UInt8]

  /// Splits and decodes `jws`: three base64url parts, a header of `alg` ES256 and an `x5c` of 1
  /// to 3 certificates, no `crit`. `malformed` makes the refusal for a part that is not what the
  /// App Store signs (``TransactionRejection/malformed(_:)`` or its notification twin).
  package init(
    _ jws: String, maximumLength: Int, malformed: (String) -> TransactionRejection
  ) throws(TransactionRejection) {
    guard jws.utf8.count <= maximumLength else { throw malformed("the JWS is longer than \(maximumLength) bytes") }
    let parts = jws.utf8.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
    guard parts.count == 3 else { throw malformed("the JWS does not have three parts") }
    guard let header = Self.base64URL(parts[0]), let payload = Self.base64URL(parts[1]),
      let signature = Self.base64URL(parts[2]), !header.isEmpty, !payload.isEmpty
    else { throw malformed("a part of the JWS is not base64url") }

    // The header: ES256 and an x5c chain, nothing this verifier does not understand.
    struct Header: Decodable {
      var alg: String?
      var x5c: [String]?
      var crit: [String]?
    }
    guard let decoded = try? JSONDecoder().decode(Header.self, from: Data(header)) else {
      throw malformed("the JWS header is not a JSON object of the expected fields")
    }
    guard let alg = decoded.alg else { throw malformed("the JWS header has no 'alg'") }
    guard alg == "ES256" else { throw .unsupportedAlgorithm(alg) }
    if decoded.crit != nil { throw malformed("the JWS header has 'crit' parameters") }
    guard let x5c = decoded.x5c, (1...3).contains(x5c.count) else {
      throw malformed("the JWS header's 'x5c' is not a list of 1 to 3 certificates")
    }
    var chain: [Certificate] = []
    for (index, text) in x5c.prefix(2).enumerated() {
      // Base64.decode skips white space; a certificate in x5c has none.
      let spaced = text.utf8.contains { $0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09 }
      guard !spaced, let der = Base64.decode(text, requirePadding: true) else {
        throw malformed("x5c[\(index)] is not base64")
      }
      do { chain.append(try Certificate(derEncoded: der)) } catch {
        throw malformed("x5c[\(index)] is not an X.509 certificate")
      }
    }
    self.payload = payload
    self.chain = chain
    self.signature = signature
    signingInput = Array(parts[0]) + [UInt8(ascii: ".")] + Array(parts[1])
  }

  /// Checks the signature with the leaf's key, then the chain at `time`:
  ///
  /// - App Store data (`localTesting` false): leaf → intermediate → one of `roots`, RFC 5280 at
  ///   `time`, with Apple's marker extensions on the leaf and the intermediate.
  /// - Xcode and local StoreKit testing (`localTesting` true): `x5c` is one self-signed
  ///   certificate (Xcode's "Apple_Xcode_Key"); it must be byte for byte one of `roots`, the
  ///   certificate the operator configured. Apple's library skips the signature there; this
  ///   checks it.
  package func verify(roots: [Certificate], at time: Date, localTesting: Bool) async throws(TransactionRejection) {
    guard let leafKey = P256.Signing.PublicKey(chain[0].publicKey) else {
      throw .untrustedChain("the leaf certificate's key is not a P-256 key")
    }
    guard signature.count == 64, let ecdsa = try? P256.Signing.ECDSASignature(rawRepresentation: signature),
      leafKey.isValidSignature(ecdsa, for: signingInput)
    else { throw .badSignature }

    if localTesting {
      guard chain.count == 1, roots.contains(chain[0]) else {
        throw .untrustedChain(
          "local testing data must carry exactly the one certificate configured as the root (Xcode's StoreKit testing certificate)"
        )
      }
      return
    }
    guard chain.count == 2 else {
      throw .untrustedChain("x5c holds one certificate; App Store data carries leaf, intermediate and root")
    }
    var verifier = Verifier(rootCertificates: CertificateStore(roots)) {
      RFC5280Policy(fixedExpiryValidationTime: time)
      AppleMarkerPolicy()
    }
    let result = await verifier.validate(leaf: chain[0], intermediates: CertificateStore([chain[1]]))
    guard case .validCertificate = result else {
      if case .couldNotValidate(let failures) = result, let first = failures.first {
        throw .untrustedChain(first.policyFailureReason.description)
      }
      throw .untrustedChain("the certificates do not chain to the configured root")
    }
  }

  /// Unpadded base64url (RFC 7515), strictly: nothing outside its alphabet.
  package static func base64URL(_ text: Substring.UTF8View) -> [UInt8]? { Base64.decodeURL(text) }
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

/// App Store dates: milliseconds since 1970, whole in App Store data and fractional in what
/// Xcode's StoreKit testing signs (`1697679936056.485`).
enum AppStoreDate {
  /// The date of `milliseconds`, when it is a finite number in a sane range (years 1970–9999).
  static func date(_ milliseconds: Double?) -> Date? {
    guard let milliseconds, milliseconds.isFinite, milliseconds >= 0, milliseconds < 253_402_300_800_000 else {
      return nil
    }
    return Date(timeIntervalSince1970: milliseconds / 1000)
  }
}
