import Foundation
import HostedContent
import PurchaseProof
import TestSupport
import Testing

/// Signed download URLs: HMAC-SHA256 over path and expiry, the same answer from any signer with
/// the same key.
@Suite struct URLSignerTests {
  let key = Array(repeating: UInt8(7), count: 32)
  let now = Date(timeIntervalSince1970: 1_800_000_000)

  @Test func aSignatureIsValidUntilItsTime() throws {
    let signer = try URLSigner(key: key)
    let signature = signer.signature(path: "/packages/a.pkg", expires: 1_800_000_060)
    #expect(signature.count == 64)
    #expect(signer.check(path: "/packages/a.pkg", expires: "1800000060", signature: signature, now: now) == .valid)
    #expect(
      signer.check(path: "/packages/a.pkg", expires: "1800000060", signature: signature, now: now + 60) == .expired)
    // Another instance with the same key agrees (stateless).
    #expect(
      try URLSigner(key: key).check(path: "/packages/a.pkg", expires: "1800000060", signature: signature, now: now)
        == .valid)
  }

  @Test func theSignatureCoversPathAndExpiry() throws {
    let signer = try URLSigner(key: key)
    let signature = signer.signature(path: "/packages/a.pkg", expires: 1_800_000_060)
    #expect(
      signer.check(path: "/packages/b.pkg", expires: "1800000060", signature: signature, now: now) == .badSignature)
    #expect(
      signer.check(path: "/packages/a.pkg", expires: "1800000061", signature: signature, now: now) == .badSignature)
    var other = key
    other[0] = 8
    #expect(
      try URLSigner(key: other).check(path: "/packages/a.pkg", expires: "1800000060", signature: signature, now: now)
        == .badSignature)
    // One flipped hex digit.
    let flipped = (signature.first == "0" ? "1" : "0") + signature.dropFirst()
    #expect(signer.check(path: "/packages/a.pkg", expires: "1800000060", signature: flipped, now: now) == .badSignature)
  }

  @Test func malformedQueries() throws {
    let signer = try URLSigner(key: key)
    let signature = signer.signature(path: "/p", expires: 1_800_000_060)
    for (expires, sig) in [
      (nil, signature), ("1800000060", nil), ("+1800000060", signature), ("01800000060", signature),
      ("-5", signature), ("1800000060", signature.uppercased()), ("1800000060", String(signature.dropLast())),
      ("1800000060", signature + "00"), ("1800000060", ""), ("99999999999999999999", signature),
    ] as [(String?, String?)] {
      #expect(
        signer.check(path: "/p", expires: expires, signature: sig, now: now) == .malformed,
        "\(expires ?? "-") \(sig ?? "-")")
    }
  }

  @Test func keys() throws {
    #expect(throws: OperationError.self) { try URLSigner(key: Array(repeating: 1, count: 31)) }
    let folder = try TemporaryDirectory()
    try writeFile(folder.appending("url.key"), key)
    let loaded = try URLSigner.load(contentsOf: folder.appending("url.key"))
    #expect(loaded.signature(path: "/p", expires: 1) == (try URLSigner(key: key)).signature(path: "/p", expires: 1))
    try writeFile(folder.appending("short.key"), "short\n")
    do {
      _ = try URLSigner.load(contentsOf: folder.appending("short.key"))
      Issue.record("a 6-byte key was accepted")
    } catch let error as OperationError {
      #expect(error.message.contains("short.key"))
      #expect(error.hint?.contains("/dev/urandom") == true)
    }
    #expect(throws: OperationError.self) { try URLSigner.load(contentsOf: folder.appending("missing.key")) }
    // Two random signers disagree.
    #expect(
      URLSigner.random().signature(path: "/p", expires: 1) != URLSigner.random().signature(path: "/p", expires: 1))
  }
}
