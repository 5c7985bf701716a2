import Crypto
import Foundation
import HostedContent
import PurchaseProof
import SwiftASN1
import TestSupport
import Testing
import X509

/// Issue 44: the URL key's mode, StoreKit testing's environments, and the server's reason for a
/// refusal as `pkgtool install URL` and `unpack URL` show it: the real binaries over loopback.
extension ServeEndToEndTests {
  /// Apple Root CA - G3, as https://www.apple.com/certificateauthority/AppleRootCA-G3.cer serves
  /// it (DER, here in PEM). Its SHA-256 is checked below against the published fingerprint, so
  /// these are Apple's bytes: a certificate cannot be made to hash to another's fingerprint.
  static let appleRootCAG3PEM = """
    -----BEGIN CERTIFICATE-----
    MIICQzCCAcmgAwIBAgIILcX8iNLFS5UwCgYIKoZIzj0EAwMwZzEbMBkGA1UEAwwS
    QXBwbGUgUm9vdCBDQSAtIEczMSYwJAYDVQQLDB1BcHBsZSBDZXJ0aWZpY2F0aW9u
    IEF1dGhvcml0eTETMBEGA1UECgwKQXBwbGUgSW5jLjELMAkGA1UEBhMCVVMwHhcN
    MTQwNDMwMTgxOTA2WhcNMzkwNDMwMTgxOTA2WjBnMRswGQYDVQQDDBJBcHBsZSBS
    b290IENBIC0gRzMxJjAkBgNVBAsMHUFwcGxlIENlcnRpZmljYXRpb24gQXV0aG9y
    aXR5MRMwEQYDVQQKDApBcHBsZSBJbmMuMQswCQYDVQQGEwJVUzB2MBAGByqGSM49
    AgEGBSuBBAAiA2IABJjpLz1AcqTtkyJygRMc3RCV8cWjTnHcFBbZDuWmBSp3ZHtf
    TjjTuxxEtX/1H7YyYl3J6YRbTzBPEVoA/VhYDKX1DyxNB0cTddqXl5dvMVztK517
    IDvYuVTZXpmkOlEKMaNCMEAwHQYDVR0OBBYEFLuw3qFYM4iapIqZ3r6966/ayySr
    MA8GA1UdEwEB/wQFMAMBAf8wDgYDVR0PAQH/BAQDAgEGMAoGCCqGSM49BAMDA2gA
    MGUCMQCD6cHEFl4aXTQY2e3v9GwOAEZLuN+yRhHFD/3meoyhpmvOwgPUnPWTxnS4
    at+qIxUCMG1mihDK1A3UT82NQz60imOlM27jbdoXt2QfyFMm+YhidDkLF1vLUagM
    6BgD56KyKA==
    -----END CERTIFICATE-----

    """

  /// `pkgtool serve ARGUMENTS` that is expected to refuse to start: its status and standard
  /// error, or status -1 when it was still running after 20 s (it started: killed here).
  func serveThatMustNotStart(_ arguments: [String]) throws -> ProcessResult {
    let errPath = folder.appending("refused-\(UUID().uuidString).err")
    _ = FileManager.default.createFile(atPath: errPath, contents: nil)
    let process = Process()
    process.executableURL = URL(fileURLWithPath: pkgtoolBinary)
    process.arguments =
      [
        "serve", "--listen", "127.0.0.1:0", "--bundle-id", "com.example.app", "--public-key", "keys/signing.pub",
      ] + arguments
    process.currentDirectoryURL = URL(fileURLWithPath: folder.path)
    process.standardOutput = FileHandle.nullDevice
    process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: errPath))
    process.standardInput = FileHandle.nullDevice
    try process.run()
    let deadline = Date().addingTimeInterval(20)
    while process.isRunning && Date() < deadline { usleep(20_000) }
    var status: Int32 = -1
    if process.isRunning {
      kill(process.processIdentifier, SIGKILL)
      process.waitUntilExit()
    } else {
      status = process.terminationStatus
    }
    return ProcessResult(status: status, stdout: "", stderr: String(decoding: try readFile(errPath), as: UTF8.self))
  }

  @Test func theAppleRootFixtureIsApplesAndIsKnownByItsFingerprint() throws {
    let apple = try Certificate(pemEncoded: Self.appleRootCAG3PEM)
    var serializer = DER.Serializer()
    try serializer.serialize(apple)
    // The fingerprint apple.com/certificateauthority lists, written out here apart from the
    // constant the server uses.
    #expect(sha256(serializer.serializedBytes) == "63343abfb89a6a03ebb57e9b3f5fa7be7c4f5c756f3017b3a8c488c3653e9179")
    #expect(try TransactionVerifier.isAppleRoot(apple))
    #expect(try !TransactionVerifier.isAppleRoot(chain.root))
  }

  /// `--url-key` is refused at start unless only its owner can read and write it: exit 2, one
  /// line naming the file, its mode and `chmod 600 FILE`.
  @Test func serveRefusesAURLKeyOthersCanRead() throws {
    for mode in [0o644, 0o640, 0o604, 0o620] {
      let name = "open-\(String(mode, radix: 8)).key"
      try writeFile(folder.appending(name), key, mode: mode)
      let result = try serveThatMustNotStart([
        "--catalog", "catalog.json", "--packages", "dist", "--root-certificate", "root.pem", "--url-key", name,
        "--state", "sqlite:state-\(UUID().uuidString).sqlite",
      ])
      #expect(result.status == 2, "\(result.stderr)")
      #expect(result.stderr.split(separator: "\n").count == 1, "\(result.stderr)")
      #expect(result.stderr.contains("'\(name)' has mode 0\(String(mode, radix: 8))"), "\(result.stderr)")
      #expect(result.stderr.contains("chmod 600 \(name)"), "\(result.stderr)")
    }
    let help = try pkgtool(["serve", "--help"])
    // The help wraps its lines: compared with its white space made single spaces.
    let words = help.stdout.split(whereSeparator: \.isWhitespace).joined(separator: " ")
    #expect(words.contains("(umask 077; head -c 32 /dev/urandom > url.key)"), "\(help.stdout)")
  }

  /// `--environment Xcode` with the self-signed certificate StoreKit testing signs with (x5c of
  /// that one certificate, signed with its key): the server says at start that this is local
  /// testing, grants a download, and the signed URL serves the package.
  @Test func xcodeEnvironmentWithItsOwnCertificateGrantsADownload() throws {
    let server = try Server(in: folder, ["--environment", "Xcode"])
    let jws = try chain.jws(
      TestChain.payload(environment: "Xcode"), x5c: [chain.root], signer: chain.rootKey)
    let granted = try curl(
      ["-X", "POST", server.base + "/v1/downloads"], body: request("com.example.app.book1", jws))
    #expect(granted.status == 200, "\(String(decoding: granted.body, as: UTF8.self))")
    let url = try #require(granted.json["url"] as? String)
    let package = try curl([url])
    let book = try readFile(bookPackage)
    #expect(package.status == 200 && package.body == book)
    // An App Store chain is not what Xcode signs: refused under Xcode.
    let appStore = try curl(
      ["-X", "POST", server.base + "/v1/downloads"],
      body: request("com.example.app.book1", try chain.jws(TestChain.payload(environment: "Xcode"))))
    #expect(appStore.status == 403, "\(String(decoding: appStore.body, as: UTF8.self))")
    #expect(server.stop() == 0)
    #expect(server.log.contains("local testing; transactions are not from the App Store"), "\(server.log)")
  }

  /// Xcode and LocalTesting never take Apple's root: refused at start, exit 2, one line.
  @Test func localTestingWithApplesRootIsRefusedAtStart() throws {
    try writeFile(folder.appending("AppleRootCA-G3.pem"), Self.appleRootCAG3PEM)
    for environment in ["Xcode", "LocalTesting"] {
      let result = try serveThatMustNotStart([
        "--catalog", "catalog.json", "--packages", "dist", "--root-certificate", "AppleRootCA-G3.pem", "--url-key",
        "url.key", "--environment", environment, "--state", "sqlite:state-\(UUID().uuidString).sqlite",
      ])
      #expect(result.status == 2, "\(result.stderr)")
      #expect(result.stderr.hasPrefix("pkgtool: error: --environment \(environment)"), "\(result.stderr)")
      #expect(result.stderr.contains("'AppleRootCA-G3.pem' is Apple Root CA - G3"), "\(result.stderr)")
      #expect(result.stderr.split(separator: "\n").count == 1, "\(result.stderr)")
    }
    // LocalTesting with a certificate of its own starts, and says so.
    let server = try Server(in: folder, ["--environment", "LocalTesting"])
    #expect(server.stop() == 0)
    #expect(server.log.contains("--environment LocalTesting: local testing"), "\(server.log)")
  }

  /// A refusal's reason reaches the user: `pkgtool unpack URL` and `install URL` of an unsigned
  /// and an expired URL name the server's code and detail, not a bare "HTTP 403".
  @Test func installAndUnpackShowTheServersReasonForARefusal() throws {
    let server = try Server(in: folder)
    let signer = try URLSigner(key: key)
    let path = "/packages/com.example.app.book1-1.0.pkg"
    let now = Int64(Date().timeIntervalSince1970)
    let cases = [
      (server.base + path, "HTTP 403 unsigned-url: this URL needs 'expires' and 'signature'"),
      (
        server.base + path + "?" + signer.query(path: path, expires: now - 10),
        "HTTP 403 expired-url: the URL has expired; ask for a new one"
      ),
    ]
    for (url, reason) in cases {
      let unpacked = try pkgtool(["unpack", url, "-o", "unpacked-\(UUID().uuidString)"], in: folder.path)
      #expect(unpacked.status != 0)
      #expect(unpacked.stderr.contains(reason), "\(unpacked.stderr)")
      let installed = try pkgtool(
        ["install", url, "--into", "docs", "--catalog", "catalog.json", "--public-key", "keys/signing.pub"],
        in: folder.path)
      #expect(installed.status != 0)
      #expect(installed.stderr.contains(reason), "\(installed.stderr)")
    }
    #expect(server.stop() == 0)
  }
}
