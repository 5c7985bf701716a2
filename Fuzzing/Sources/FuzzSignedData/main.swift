// Fuzzes the purchase proof's reading of what a client or the internet sends: a compact JWS
// (split, base64url, the header, x5c certificates), the payloads of a transaction, renewal info
// and a notification (JSON, App Store dates), and the whole verifiers against a root made here,
// in App Store and in local-testing mode. Nothing may crash or hang; nothing unsigned may pass.
import Crypto
import Dispatch
import Foundation
import FuzzSupport
import PurchaseProof
import X509

/// A self-signed root made once: nothing the fuzzer writes is signed by its key.
let root: Certificate = {
  let key = P256.Signing.PrivateKey()
  let name = try! DistinguishedName { CommonName("fuzz root") }
  return try! Certificate(
    version: .v3, serialNumber: .init(), publicKey: .init(key.publicKey),
    notValidBefore: Date(timeIntervalSince1970: 0), notValidAfter: Date(timeIntervalSince1970: 4_000_000_000),
    issuer: name, subject: name, signatureAlgorithm: .ecdsaWithSHA256,
    extensions: try! Certificate.Extensions {
      Critical(BasicConstraints.isCertificateAuthority(maxPathLength: nil))
    }, issuerPrivateKey: .init(key))
}()
let appStore = TransactionVerifier(rootCertificates: [root], bundleID: "com.example", environment: .sandbox)
let local = TransactionVerifier(rootCertificates: [root], bundleID: "com.example", environment: .xcode)

/// Runs `body` to its end on the calling thread (libFuzzer calls in synchronously).
func blocking(_ body: @escaping @Sendable () async -> Void) {
  let done = DispatchSemaphore(value: 0)
  Task {
    await body()
    done.signal()
  }
  done.wait()
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
  let bytes = Array(UnsafeBufferPointer(start: data, count: size))
  // The payload readers on raw JSON.
  _ = try? VerifiedTransaction(payload: bytes)
  _ = try? VerifiedRenewalInfo(payload: bytes)
  _ = try? NotificationPayload(bytes).app
  // The JWS reader and the verifiers on text.
  let text = String(decoding: bytes, as: UTF8.self)
  _ = try? SignedData(text, maximumLength: 1 << 18, malformed: TransactionRejection.malformed)
  blocking {
    for verifier in [appStore, local] {
      let transaction = try? await verifier.verify(text)
      precondition(transaction == nil, "an unsigned transaction was accepted")
      let notification = try? await NotificationVerifier(transactions: verifier).verify(text)
      precondition(notification == nil, "an unsigned notification was accepted")
    }
  }
  return 0
}

runFuzzer { data, size in
  guard let data else { return 0 }
  return fuzz(data, size)
}
