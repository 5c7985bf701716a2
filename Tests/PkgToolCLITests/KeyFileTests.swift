import Foundation
import HostedContent
import TestSupport
import Testing

/// Key files that say what they are (issue 32): keygen writes PKCS#8 and SubjectPublicKeyInfo
/// PEM, which OpenSSL and Python's cryptography read; every command refuses the wrong half; the
/// old one-line base64 files still work, with a note.
@Suite struct KeyFileTests {
  struct Setup {
    let dir: TemporaryDirectory
    let package = "book 1.0.pkg"
  }

  func setup() throws -> Setup {
    let dir = try TemporaryDirectory()
    #expect(try pkgtool(["init", "Book", "--product-id", "com.example.book", "-q"], in: dir.path).status == 0)
    try writeFile(dir.appending("Book/Contents/chapter1.txt"), "Once upon a time.\n")
    #expect(try pkgtool(["build", "Book", "-q", "-o", "book 1.0.pkg"], in: dir.path).status == 0)
    let keygen = try pkgtool(["keygen", "-o", "signing.key"], in: dir.path)
    #expect(keygen.status == 0, "\(keygen.stderr)")
    return Setup(dir: dir)
  }

  func publish(_ s: Setup, key: String, output: String = "catalog.json") throws -> ProcessResult {
    try pkgtool(
      ["publish", s.package, "--key", key, "--base-url", "https://cdn.example.com/content", "-o", output],
      in: s.dir.path)
  }

  func install(_ s: Setup, publicKey: String, catalog: String = "catalog.json") throws -> ProcessResult {
    try pkgtool(
      ["unpack", s.package, "-o", "out-\(UUID().uuidString)", "--catalog", catalog, "--public-key", publicKey],
      in: s.dir.path)
  }

  func text(_ s: Setup, _ name: String) throws -> String {
    String(decoding: try readFile(s.dir.appending(name)), as: UTF8.self)
  }

  /// The base64 body of a PEM file, joined.
  func pemBody(_ text: String) -> String {
    text.split(separator: "\n").filter { !$0.hasPrefix("-----") }.joined()
  }

  @Test func keygenWritesPEMThatOpenSSLReads() throws {
    let s = try setup()
    let secret = try text(s, "signing.key")
    let pub = try text(s, "signing.key.pub")
    #expect(secret.hasPrefix("-----BEGIN PRIVATE KEY-----\n") && secret.hasSuffix("-----END PRIVATE KEY-----\n"))
    #expect(pub.hasPrefix("-----BEGIN PUBLIC KEY-----\n") && pub.hasSuffix("-----END PUBLIC KEY-----\n"))
    // The fixed DER of RFC 8410: 48 bytes of PKCS#8, 44 of SubjectPublicKeyInfo, OID 1.3.101.112.
    let der = try #require(Data(base64Encoded: pemBody(secret)))
    #expect(
      der.count == 48
        && Array(der.prefix(16)) == [
          0x30, 0x2E, 0x02, 0x01, 0x00, 0x30, 0x05, 0x06, 0x03, 0x2B, 0x65, 0x70, 0x04, 0x22, 0x04, 0x20,
        ])
    #expect(Data(base64Encoded: pemBody(pub))?.count == 44)
    // OpenSSL reads both, and derives from the secret key the very public key keygen wrote.
    let openssl = "/usr/bin/env"
    let readSecret = try runProcess(openssl, ["openssl", "pkey", "-in", "signing.key", "-noout"], in: s.dir.path)
    #expect(readSecret.status == 0, "\(readSecret.stderr)")
    let readPublic = try runProcess(
      openssl, ["openssl", "pkey", "-pubin", "-in", "signing.key.pub", "-noout"], in: s.dir.path)
    #expect(readPublic.status == 0, "\(readPublic.stderr)")
    let derived = try runProcess(openssl, ["openssl", "pkey", "-in", "signing.key", "-pubout"], in: s.dir.path)
    #expect(derived.status == 0 && derived.stdout == pub, "\(derived.stdout)")
    let text = try runProcess(openssl, ["openssl", "pkey", "-in", "signing.key", "-noout", "-text"], in: s.dir.path)
    #expect(text.stdout.contains("ED25519 Private-Key"), "\(text.stdout)")
    // Python's cryptography loads both with its PEM loaders and finds one pair.
    let python = try runProcess(
      "/usr/bin/env",
      ["python3", repositoryRoot + "/scripts/catalog-crosscheck.py", "keys", "signing.key", "signing.key.pub"],
      in: s.dir.path)
    #expect(python.status == 0, "\(python.stdout)\(python.stderr)")
  }

  @Test func keygenNeverPrintsTheSecret() throws {
    let s = try setup()
    let again = try pkgtool(["keygen", "-o", "other.key"], in: s.dir.path)
    #expect(again.status == 0)
    let body = pemBody(try text(s, "other.key"))
    let seed = String(try #require(Data(base64Encoded: body)).suffix(32).base64EncodedString().prefix(20))
    #expect(!again.stdout.contains(seed) && !again.stderr.contains(seed))
    #expect(!again.stdout.contains(String(body.prefix(40))))
    #expect(again.stdout.contains("other.key.pub (public, PEM)"))
  }

  @Test func everyCommandRefusesTheWrongHalf() throws {
    let s = try setup()
    let secretBody = pemBody(try text(s, "signing.key"))
    let withPublic = try publish(s, key: "signing.key.pub")
    #expect(withPublic.status == 2)
    #expect(
      withPublic.stderr.contains(
        "'signing.key.pub' is a public key; publish needs the secret key, made by pkgtool keygen"),
      "\(withPublic.stderr)")
    #expect(!FileManager.default.fileExists(atPath: s.dir.appending("catalog.json")))
    #expect(try publish(s, key: "signing.key").status == 0)
    for command in ["unpack", "install"] {
      let arguments =
        command == "unpack"
        ? ["unpack", s.package, "-o", "out", "--catalog", "catalog.json", "--public-key", "signing.key"]
        : ["install", s.package, "--into", "docs", "--catalog", "catalog.json", "--public-key", "signing.key"]
      let withSecret = try pkgtool(arguments, in: s.dir.path)
      #expect(withSecret.status == 2)
      #expect(
        withSecret.stderr.contains(
          "'signing.key' is a secret key; \(command) --public-key needs the public key, made by pkgtool keygen"),
        "\(withSecret.stderr)")
      #expect(!withSecret.stderr.contains(String(secretBody.prefix(40))))
      #expect(withSecret.stderr.split(separator: "\n").count == 1)
    }
    #expect(!FileManager.default.fileExists(atPath: s.dir.appending("out")))
    #expect(!FileManager.default.fileExists(atPath: s.dir.appending("docs")))
  }

  @Test func oldBase64KeysAreStillReadWithANote() throws {
    let s = try setup()
    // The old format: one line each, the standard base64 of the 32 raw bytes.
    let seed = try #require(Data(base64Encoded: pemBody(try text(s, "signing.key")))).suffix(32)
    let raw = try #require(Data(base64Encoded: pemBody(try text(s, "signing.key.pub")))).suffix(32)
    try writeFile(s.dir.appending("old.key"), Data(seed).base64EncodedString() + "\n", mode: 0o600)
    try writeFile(s.dir.appending("old.key.pub"), Data(raw).base64EncodedString() + "\n")
    let published = try publish(s, key: "old.key")
    #expect(published.status == 0, "\(published.stderr)")
    #expect(published.stderr.contains("note: 'old.key' is in the old one-line base64 key format"))
    #expect(published.stderr.split(separator: "\n").count == 1)
    let unpacked = try install(s, publicKey: "old.key.pub")
    #expect(unpacked.status == 0, "\(unpacked.stderr)")
    #expect(unpacked.stderr.contains("note: 'old.key.pub' is in the old one-line base64 key format"))
    // The PEM public key checks the catalog the old key signed: the same key pair.
    #expect(try install(s, publicKey: "signing.key.pub").status == 0)
    // An old secret key given as the public key is refused: a .pub file lies beside it.
    let swapped = try install(s, publicKey: "old.key")
    #expect(swapped.status == 2 && swapped.stderr.contains("'old.key' is a secret key"), "\(swapped.stderr)")
    // keygen --from writes the same pair again as PEM.
    let converted = try pkgtool(["keygen", "--from", "old.key", "-o", "new.key", "-q"], in: s.dir.path)
    #expect(converted.status == 0, "\(converted.stderr)")
    #expect(try readFile(s.dir.appending("new.key.pub")) == (try readFile(s.dir.appending("signing.key.pub"))))
    #expect(try readFile(s.dir.appending("new.key")) == (try readFile(s.dir.appending("signing.key"))))
  }

  @Test func keysMadeByOpenSSLWork() throws {
    let s = try setup()
    let env = "/usr/bin/env"
    #expect(
      try runProcess(env, ["openssl", "genpkey", "-algorithm", "ed25519", "-out", "ossl.key"], in: s.dir.path).status
        == 0)
    #expect(
      try runProcess(env, ["openssl", "pkey", "-in", "ossl.key", "-pubout", "-out", "ossl.key.pub"], in: s.dir.path)
        .status == 0)
    let published = try publish(s, key: "ossl.key")
    #expect(published.status == 0, "\(published.stderr)")
    #expect(published.stderr.isEmpty)
    #expect(try install(s, publicKey: "ossl.key.pub").status == 0)
    // Another algorithm is refused by name.
    #expect(
      try runProcess(
        env, ["openssl", "genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", "ec.key"],
        in: s.dir.path
      ).status == 0)
    let ec = try publish(s, key: "ec.key")
    #expect(ec.status == 2 && ec.stderr.contains("not an Ed25519 one"), "\(ec.stderr)")
  }
}
