import Crypto
import Foundation
import HostedContent
import PurchaseProof
import SwiftASN1
import TestSupport
import Testing
import X509

/// The purchase proof: every refusal of the issue's list, each against a chain made here.
@Suite struct TransactionVerifierTests {
  let chain: TestChain
  let verifier: TransactionVerifier

  init() throws {
    chain = try TestChain()
    verifier = TransactionVerifier(
      rootCertificates: [chain.root], bundleID: "com.example.app", environment: .production)
  }

  func rejection(_ jws: String, product: String = "com.example.app.book1", verifier: TransactionVerifier? = nil)
    async -> TransactionRejection?
  {
    do {
      _ = try await (verifier ?? self.verifier).verify(jws, productID: product)
      return nil
    } catch { return error }
  }

  @Test func aGoodTransactionProvesThePurchase() async throws {
    let transaction = try await verifier.verify(try chain.jws(), productID: "com.example.app.book1")
    #expect(transaction.productID == "com.example.app.book1")
    #expect(transaction.bundleID == "com.example.app")
    #expect(transaction.transactionID == "2000000123456789")
    #expect(transaction.signedDate == Date(timeIntervalSince1970: 1_760_000_000))
  }

  @Test func theRootInX5cIsNotNeeded() async throws {
    _ = try await verifier.verify(
      try chain.jws(x5c: [chain.leaf, chain.intermediate]), productID: "com.example.app.book1")
  }

  @Test func onlyES256() async throws {
    for alg in ["none", "HS256", "RS256", "ES384", "es256"] {
      #expect(await rejection(try chain.jws(header: ["alg": alg])) == .unsupportedAlgorithm(alg))
    }
    // alg none with an empty signature, as an attacker sends it.
    let good = try chain.jws()
    let parts = good.split(separator: ".")
    let header = TestChain.base64URL(Data(#"{"alg":"none"}"#.utf8))
    #expect(await rejection(header + "." + parts[1] + ".") == .unsupportedAlgorithm("none"))
    // HS256 keyed with the leaf's public key (the classic confusion).
    let hsHeader = TestChain.base64URL(Data(#"{"alg":"HS256","x5c":[]}"#.utf8))
    let input = hsHeader + "." + parts[1]
    let mac = HMAC<SHA256>.authenticationCode(
      for: Data(input.utf8), using: SymmetricKey(data: chain.leafKey.publicKey.derRepresentation))
    #expect(await rejection(input + "." + TestChain.base64URL(Data(mac))) == .unsupportedAlgorithm("HS256"))
  }

  @Test func forgedOrTruncated() async throws {
    let good = try chain.jws()
    // Truncated anywhere: one of malformed or bad signature, never accepted.
    for cut in [1, 10, good.count / 2, good.count - 1] {
      let code = await rejection(String(good.prefix(cut)))?.code
      #expect(code == "malformed-transaction" || code == "bad-signature", "cut at \(cut): \(String(describing: code))")
    }
    #expect(await rejection("") == .malformed("the JWS does not have three parts"))
    #expect(await rejection(good + ".x") == .malformed("the JWS does not have three parts"))
    // Payload changed after signing (another product), signature kept.
    let parts = good.split(separator: ".").map(String.init)
    let forgedPayload = TestChain.base64URL(
      try JSONSerialization.data(withJSONObject: TestChain.payload(product: "com.example.app.book2")))
    #expect(
      await rejection(parts[0] + "." + forgedPayload + "." + parts[2], product: "com.example.app.book2")
        == .badSignature)
    // Signed by a key that is not the leaf's.
    #expect(await rejection(try chain.jws(signer: P256.Signing.PrivateKey())) == .badSignature)
    // Not base64url, padding, whitespace.
    #expect(await rejection(parts[0] + "=." + parts[1] + "." + parts[2])?.code == "malformed-transaction")
    #expect(await rejection(parts[0] + " ." + parts[1] + "." + parts[2])?.code == "malformed-transaction")
    // Over the length limit.
    #expect(
      await rejection(String(repeating: "A", count: TransactionVerifier.maximumLength + 1))?.code
        == "malformed-transaction")
  }

  @Test func aChainToAnotherRoot() async throws {
    let other = try TestChain()
    // The other chain's own leaf, intermediate and root: its root is not configured.
    #expect(await rejection(try other.jws())?.code == "untrusted-chain")
    // Our root named in x5c, the other intermediate: the intermediate is not signed by our root.
    #expect(
      await rejection(try other.jws(x5c: [other.leaf, other.intermediate, chain.root]))?.code == "untrusted-chain")
    // The leaf certified alone (no intermediate) by a self-signed certificate.
    #expect(await rejection(try other.jws(x5c: [other.leaf, other.leaf]))?.code == "untrusted-chain")
    // Configured with the other root, our transactions fail.
    let otherVerifier = TransactionVerifier(
      rootCertificates: [other.root], bundleID: "com.example.app", environment: .production)
    #expect(await rejection(try chain.jws(), verifier: otherVerifier)?.code == "untrusted-chain")
  }

  @Test func appleMarkersAreRequired() async throws {
    var options = TestChain.Options()
    options.leafMarker = false
    let noLeafMarker = try TestChain(options)
    let v1 = TransactionVerifier(
      rootCertificates: [noLeafMarker.root], bundleID: "com.example.app", environment: .production)
    #expect(await rejection(try noLeafMarker.jws(), verifier: v1)?.code == "untrusted-chain")
    options = TestChain.Options()
    options.intermediateMarker = false
    let noIntermediateMarker = try TestChain(options)
    let v2 = TransactionVerifier(
      rootCertificates: [noIntermediateMarker.root], bundleID: "com.example.app", environment: .production)
    #expect(await rejection(try noIntermediateMarker.jws(), verifier: v2)?.code == "untrusted-chain")
  }

  @Test func aLeafSignedByTheRootItselfIsNotEnough() async throws {
    // A root that even carries the intermediate's marker, signing the leaf directly: a chain of
    // two, not leaf → intermediate → root.
    let rootKey = P256.Signing.PrivateKey()
    let leafKey = P256.Signing.PrivateKey()
    let name = try DistinguishedName { CommonName("Two-step root") }
    let from = Date(timeIntervalSince1970: 1_600_000_000)
    let until = Date(timeIntervalSince1970: 2_400_000_000)
    let root = try Certificate(
      version: .v3, serialNumber: .init(), publicKey: .init(rootKey.publicKey), notValidBefore: from,
      notValidAfter: until, issuer: name, subject: name, signatureAlgorithm: .ecdsaWithSHA256,
      extensions: try Certificate.Extensions {
        Critical(BasicConstraints.isCertificateAuthority(maxPathLength: nil))
        Critical(KeyUsage(keyCertSign: true, cRLSign: true))
        Certificate.Extension(oid: TransactionVerifier.intermediateMarker, critical: false, value: [0x05, 0x00])
      }, issuerPrivateKey: .init(rootKey))
    let leaf = try Certificate(
      version: .v3, serialNumber: .init(), publicKey: .init(leafKey.publicKey), notValidBefore: from,
      notValidAfter: until, issuer: name, subject: try DistinguishedName { CommonName("Leaf") },
      signatureAlgorithm: .ecdsaWithSHA256,
      extensions: try Certificate.Extensions {
        Critical(BasicConstraints.notCertificateAuthority)
        Certificate.Extension(oid: TransactionVerifier.leafMarker, critical: false, value: [0x05, 0x00])
      }, issuerPrivateKey: .init(rootKey))
    let v = TransactionVerifier(rootCertificates: [root], bundleID: "com.example.app", environment: .production)
    #expect(await rejection(try chain.jws(x5c: [leaf, root], signer: leafKey), verifier: v)?.code == "untrusted-chain")
  }

  @Test func anIntermediateThatIsNotACA() async throws {
    var options = TestChain.Options()
    options.intermediateIsCA = false
    let bad = try TestChain(options)
    let v = TransactionVerifier(rootCertificates: [bad.root], bundleID: "com.example.app", environment: .production)
    #expect(await rejection(try bad.jws(), verifier: v)?.code == "untrusted-chain")
  }

  @Test func anIntermediateExpiredAtSignedDate() async throws {
    var options = TestChain.Options()
    // Valid until 2025-02-19; the transaction is signed 2025-10-09.
    options.intermediateValidity =
      Date(timeIntervalSince1970: 1_600_000_000)...Date(timeIntervalSince1970: 1_740_000_000)
    let expired = try TestChain(options)
    let v = TransactionVerifier(rootCertificates: [expired.root], bundleID: "com.example.app", environment: .production)
    #expect(
      await rejection(
        try expired.jws(TestChain.payload(signedDate: Date(timeIntervalSince1970: 1_760_000_000))), verifier: v)?.code
        == "untrusted-chain")
    // Signed while it was valid: accepted (the chain is checked at signedDate, not now).
    _ = try await v.verify(
      try expired.jws(TestChain.payload(signedDate: Date(timeIntervalSince1970: 1_700_000_000))),
      productID: "com.example.app.book1")
  }

  @Test func wrongBundleEnvironmentProduct() async throws {
    #expect(await rejection(try chain.jws(TestChain.payload(bundle: "com.other.app"))) == .wrongBundle("com.other.app"))
    #expect(
      await rejection(try chain.jws(TestChain.payload(environment: "Sandbox"))) == .wrongEnvironment("Sandbox"))
    #expect(
      await rejection(try chain.jws(), product: "com.example.app.book2") == .wrongProduct("com.example.app.book1"))
    let sandbox = TransactionVerifier(
      rootCertificates: [chain.root], bundleID: "com.example.app", environment: .sandbox)
    #expect(await rejection(try chain.jws(), verifier: sandbox) == .wrongEnvironment("Production"))
  }

  @Test func revokedAndExpired() async throws {
    let revoked = Date(timeIntervalSince1970: 1_800_100_000)
    #expect(
      await rejection(try chain.jws(TestChain.payload(extra: ["revocationDate": Int64(1_800_100_000_000)])))
        == .revoked(revoked))
    let past = Int64(Date().timeIntervalSince1970 - 3600) * 1000
    #expect(
      await rejection(
        try chain.jws(TestChain.payload(extra: ["expiresDate": past, "type": "Auto-Renewable Subscription"])))
        == .expired(Date(timeIntervalSince1970: Double(past) / 1000)))
    let future = Int64(Date().timeIntervalSince1970 + 3600) * 1000
    _ = try await verifier.verify(
      try chain.jws(TestChain.payload(extra: ["expiresDate": future, "type": "Auto-Renewable Subscription"])),
      productID: "com.example.app.book1")
  }

  @Test func payloadFieldsOfTheWrongKind() async throws {
    #expect(
      await rejection(try chain.jws(TestChain.payload(extra: ["signedDate": "yesterday"])))?.code
        == "malformed-transaction")
    #expect(
      await rejection(try chain.jws(TestChain.payload(extra: ["revocationDate": true])))?.code
        == "malformed-transaction")
    #expect(await rejection(try chain.jws(TestChain.payload(extra: ["productId": 5])))?.code == "malformed-transaction")
    #expect(await rejection(try chain.jws(header: ["crit": ["exp"]]))?.code == "malformed-transaction")
  }

  @Test func aSignedDateInTheFutureIsRefused() async throws {
    let now = Date()
    // Within the skew (clocks differ): accepted.
    _ = try await verifier.verify(
      try chain.jws(TestChain.payload(signedDate: now.addingTimeInterval(120))), productID: "com.example.app.book1")
    // Beyond it: refused, whatever else is right.
    let future = Date(timeIntervalSince1970: (now.timeIntervalSince1970 + 3_600).rounded())
    #expect(await rejection(try chain.jws(TestChain.payload(signedDate: future))) == .signedInFuture(future))
  }

  @Test func theOperatorCanCapTheProofsAge() async throws {
    let capped = TransactionVerifier(
      rootCertificates: [chain.root], bundleID: "com.example.app", environment: .production,
      maximumProofAge: 30 * 86_400)
    let now = Date()
    _ = try await capped.verify(
      try chain.jws(TestChain.payload(signedDate: now.addingTimeInterval(-29 * 86_400))),
      productID: "com.example.app.book1")
    let old = Date(timeIntervalSince1970: (now.timeIntervalSince1970 - 400 * 86_400).rounded())
    #expect(
      await rejection(try chain.jws(TestChain.payload(signedDate: old)), verifier: capped) == .proofTooOld(old))
    // Off by default: the same 400-day-old proof is accepted.
    _ = try await verifier.verify(try chain.jws(TestChain.payload(signedDate: old)), productID: "com.example.app.book1")
  }

  @Test func rootCertificateFiles() throws {
    let folder = try TemporaryDirectory()
    try writeFile(folder.appending("root.pem"), try chain.rootPEM())
    #expect(try TransactionVerifier.loadRootCertificate(contentsOf: folder.appending("root.pem")) == chain.root)
    var der = DER.Serializer()
    try der.serialize(chain.root)
    try writeFile(folder.appending("root.cer"), der.serializedBytes)
    #expect(try TransactionVerifier.loadRootCertificate(contentsOf: folder.appending("root.cer")) == chain.root)
    try writeFile(folder.appending("junk.pem"), "not a certificate")
    #expect(throws: OperationError.self) {
      try TransactionVerifier.loadRootCertificate(contentsOf: folder.appending("junk.pem"))
    }
  }
}
