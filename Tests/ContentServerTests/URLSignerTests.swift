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
    try writeFile(folder.appending("url.key"), key, mode: 0o600)
    let loaded = try URLSigner.load(contentsOf: folder.appending("url.key"))
    #expect(loaded.signature(path: "/p", expires: 1) == (try URLSigner(key: key)).signature(path: "/p", expires: 1))
    try writeFile(folder.appending("short.key"), "short\n", mode: 0o600)
    do {
      _ = try URLSigner.load(contentsOf: folder.appending("short.key"))
      Issue.record("a 6-byte key was accepted")
    } catch let error as OperationError {
      #expect(error.message.contains("short.key"))
      #expect(error.hint?.contains("/dev/urandom") == true)
    }
    #expect(throws: OperationError.self) { try URLSigner.load(contentsOf: folder.appending("missing.key")) }
    // The hint makes a key only its owner can read.
    #expect(URLSigner.makeKey == "(umask 077; head -c 32 /dev/urandom > url.key)")

    // Two random signers disagree.
    #expect(
      URLSigner.random().signature(path: "/p", expires: 1) != URLSigner.random().signature(path: "/p", expires: 1))
  }

  /// As ssh asks of its keys: a key file its group or others can read or write is refused,
  /// naming the file, its mode and the fix; 0600 and 0400 are accepted; a symlink is followed
  /// and the file it leads to is the one checked; a folder is not a key.
  @Test func aKeyFileMustBeReadableByItsOwnerOnly() throws {
    let folder = try TemporaryDirectory()
    for mode in [0o644, 0o640, 0o604, 0o620, 0o602, 0o660, 0o666, 0o610] {
      let path = folder.appending("key-\(String(mode, radix: 8)).key")
      try writeFile(path, key, mode: mode)
      do {
        _ = try URLSigner.load(contentsOf: path)
        Issue.record("a key of mode \(String(mode, radix: 8)) was accepted")
      } catch let error as OperationError {
        #expect(error.message.contains(path), "\(error.message)")
        #expect(error.message.contains("mode 0\(String(mode, radix: 8))"), "\(error.message)")
        #expect(error.hint == "chmod 600 \(path)")
      }
    }
    for mode in [0o600, 0o400] {
      let path = folder.appending("good-\(String(mode, radix: 8)).key")
      try writeFile(path, key, mode: mode)
      #expect(
        try URLSigner.load(contentsOf: path).signature(path: "/p", expires: 1)
          == (try URLSigner(key: key)).signature(path: "/p", expires: 1))
    }
    // A symlink to a good key is followed; one to a key others can read is refused, by the mode
    // of the file it leads to.
    try FileManager.default.createSymbolicLink(
      atPath: folder.appending("link-good.key"), withDestinationPath: folder.appending("good-600.key"))
    _ = try URLSigner.load(contentsOf: folder.appending("link-good.key"))
    try FileManager.default.createSymbolicLink(
      atPath: folder.appending("link-bad.key"), withDestinationPath: folder.appending("key-644.key"))
    do {
      _ = try URLSigner.load(contentsOf: folder.appending("link-bad.key"))
      Issue.record("a symlink to a key of mode 644 was accepted")
    } catch let error as OperationError {
      #expect(error.message.contains("link-bad.key") && error.message.contains("0644"), "\(error.message)")
    }
    try FileManager.default.createDirectory(atPath: folder.appending("dir.key"), withIntermediateDirectories: false)
    chmod(folder.appending("dir.key"), 0o700)
    #expect(throws: OperationError.self) { try URLSigner.load(contentsOf: folder.appending("dir.key")) }
  }
}
