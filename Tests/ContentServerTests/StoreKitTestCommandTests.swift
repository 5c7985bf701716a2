import Foundation
import PurchaseProof
import StoreKitTesting
import TestSupport
import Testing
import X509

/// `pkgtool storekit-test` through the built binaries (`pkgtool` runs `pkgtool-serve
/// storekit-test`): the chain's files, and what it signs checked by the real verifiers.
@Suite struct StoreKitTestCommandTests {
  let dir: TemporaryDirectory

  init() throws {
    dir = try TemporaryDirectory("pkgtool-storekit-test")
    let made = try pkgtool(["storekit-test", "chain", "-o", "chain"], in: dir.path)
    try #require(made.status == 0, "\(made.stderr)")
  }

  func run(_ arguments: [String]) throws -> ProcessResult {
    try pkgtool(["storekit-test"] + arguments, in: dir.path)
  }

  /// The verifier a gate started with `--root-certificate chain/root.pem` uses.
  func verifier(_ environment: TransactionVerifier.Environment = .sandbox, root: String = "chain/root.pem") throws
    -> TransactionVerifier
  {
    TransactionVerifier(
      rootCertificates: [try TransactionVerifier.loadRootCertificate(contentsOf: dir.appending(root))],
      bundleID: "com.example.app", environment: environment)
  }

  func mode(_ path: String) throws -> Int {
    (try FileManager.default.attributesOfItem(atPath: dir.appending(path))[.posixPermissions] as? Int) ?? -1
  }

  func line(_ result: ProcessResult) throws -> String {
    try #require(result.status == 0, "\(result.stderr)")
    #expect(result.stdout.hasSuffix("\n") && result.stdout.dropLast().allSatisfy { $0 != "\n" }, "\(result.stdout)")
    return String(result.stdout.dropLast())
  }

  @Test func theChainHasApplesShapeItsFilesAndTheirModes() throws {
    for (file, expected) in [
      ("root.pem", 0o644), ("intermediate.pem", 0o644), ("leaf.pem", 0o644), ("root.key", 0o600),
      ("leaf.key", 0o600), ("README.txt", 0o644),
    ] {
      #expect(try mode("chain/" + file) == expected, "\(file)")
    }
    let chain = try StoreKitTestChain(contentsOf: dir.appending("chain"))
    #expect(try !TransactionVerifier.isAppleRoot(chain.root))
    #expect(chain.root.subject == chain.root.issuer && chain.intermediate.issuer == chain.root.subject)
    #expect(chain.leaf.issuer == chain.intermediate.subject)
    #expect(chain.intermediate.extensions[oid: TransactionVerifier.intermediateMarker] != nil)
    #expect(chain.leaf.extensions[oid: TransactionVerifier.leafMarker] != nil)
    #expect(chain.root.extensions[oid: TransactionVerifier.leafMarker] == nil)
    #expect(try String(decoding: readFile(dir.appending("chain/README.txt")), as: UTF8.self).contains("NOT Apple's"))

    // Refused over an existing non-empty folder, which is left as it was.
    let again = try run(["chain", "-o", "chain"])
    #expect(again.status == 2)
    #expect(
      again.stderr
        == "pkgtool: error: 'chain' already exists and is not an empty folder; a test chain is written into a new one (choose a new folder, or remove 'chain' first)\n"
    )
    #expect(try StoreKitTestChain(contentsOf: dir.appending("chain")).root == chain.root)
    // An empty folder is filled; a missing parent is named.
    try FileManager.default.createDirectory(atPath: dir.appending("empty"), withIntermediateDirectories: false)
    #expect(try run(["chain", "-o", "empty", "-q"]).stdout == "")
    #expect(try StoreKitTestChain(contentsOf: dir.appending("empty")).root != chain.root)
    let orphan = try run(["chain", "-o", "no/such/chain"])
    #expect(orphan.status == 2 && orphan.stderr.contains("the folder 'no/such' does not exist"), "\(orphan.stderr)")
    #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path).sorted() == ["chain", "empty"])
  }

  @Test func aTransactionItSignsIsAcceptedUnderItsRootAndNoOther() async throws {
    let jws = try line(
      try run([
        "transaction", "--chain", "chain", "--bundle-id", "com.example.app", "--product", "com.example.book",
        "--transaction-id", "2000000000000042", "--original-transaction-id", "2000000000000007", "--signed-date",
        "2026-05-01T12:00:00Z",
      ]))
    let now = Date(timeIntervalSince1970: 1_777_640_000)
    let transaction = try await verifier().verify(jws, productID: "com.example.book", now: now)
    #expect(transaction.transactionID == "2000000000000042")
    #expect(transaction.originalTransactionID == "2000000000000007")
    #expect(transaction.environment == "Sandbox" && transaction.bundleID == "com.example.app")
    #expect(transaction.signedDate == Date(timeIntervalSince1970: 1_777_636_800))
    #expect(transaction.type == "Non-Consumable" && transaction.expiresDate == nil && transaction.revocationDate == nil)

    // Another chain's root, Apple's, or another environment: refused.
    let other = try run(["chain", "-o", "other", "-q"])
    try #require(other.status == 0)
    let otherRoot = try verifier(root: "other/root.pem")
    do {
      _ = try await otherRoot.verify(jws, now: now)
      Issue.record("a transaction passed under another chain's root")
    } catch { #expect(error.code == "untrusted-chain") }
    let production = try verifier(.production)
    do {
      _ = try await production.verify(jws, now: now)
      Issue.record("a Sandbox transaction passed as Production")
    } catch { #expect(error.code == "wrong-environment") }

    // Milliseconds are dates too; --expires makes a subscription; -o writes the same one line.
    let written = try run([
      "transaction", "--chain", "chain", "--bundle-id", "com.example.app", "--product", "com.example.monthly",
      "--environment", "Production", "--signed-date", "1777636800000", "--expires", "2026-06-01T12:00:00.250+02:00",
      "-o", "monthly.jws",
    ])
    #expect(written.status == 0 && written.stdout.isEmpty, "\(written.stderr)")
    let monthly = String(decoding: try readFile(dir.appending("monthly.jws")), as: UTF8.self)
    #expect(monthly.hasSuffix("\n") && monthly.filter { $0 == "\n" }.count == 1)
    let subscription = try await verifier(.production).verify(String(monthly.dropLast()), now: now)
    #expect(subscription.type == "Auto-Renewable Subscription")
    #expect(
      subscription.transactionID == "2000000000000001" && subscription.originalTransactionID == "2000000000000001")
    #expect(subscription.expiresDate == Date(timeIntervalSince1970: 1_780_308_000.25))
  }

  /// Xcode and LocalTesting data is signed as Xcode signs: x5c the root alone; a gate started
  /// with `--environment Xcode --root-certificate chain/root.pem` accepts it.
  @Test func localTestingDataCarriesTheRootAlone() async throws {
    let jws = try line(
      try run([
        "transaction", "--chain", "chain", "--bundle-id", "com.example.app", "--product", "com.example.book",
        "--environment", "Xcode",
      ]))
    let transaction = try await verifier(.xcode).verify(jws, productID: "com.example.book")
    #expect(transaction.environment == "Xcode")
    let header = try #require(Base64URLTestDecoding.json(jws.split(separator: ".")[0]))
    #expect((header["x5c"] as? [String])?.count == 1)
  }

  @Test func aRefundNotificationIsAcceptedByTheNotificationVerifier() async throws {
    let body = try line(
      try run([
        "notification", "--chain", "chain", "--type", "REFUND", "--bundle-id", "com.example.app", "--product",
        "com.example.book", "--transaction-id", "2000000000000042", "--app-apple-id", "1234567890",
        "--environment", "Production", "--signed-date", "2026-05-01T12:00:00Z",
      ]))
    let object = try JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any]
    #expect(object?.keys.sorted() == ["signedPayload"])
    let payload = try #require(object?["signedPayload"] as? String)
    #expect(body == #"{"signedPayload":""# + payload + #""}"#)
    let notifications = NotificationVerifier(transactions: try verifier(.production), appAppleID: 1_234_567_890)
    let notification = try await notifications.verify(payload, now: Date(timeIntervalSince1970: 1_777_640_000))
    #expect(notification.notificationType == "REFUND" && notification.appAppleID == 1_234_567_890)
    #expect(notification.signedDate == Date(timeIntervalSince1970: 1_777_636_800))
    let refunded = try #require(notification.transaction)
    #expect(refunded.transactionID == "2000000000000042" && refunded.productID == "com.example.book")
    #expect(refunded.revocationDate == Date(timeIntervalSince1970: 1_777_636_800))
    // Another app's Apple ID in Production is refused.
    let otherApp = NotificationVerifier(transactions: try verifier(.production), appAppleID: 99)
    do {
      _ = try await otherApp.verify(payload, now: Date(timeIntervalSince1970: 1_777_640_000))
      Issue.record("a notification for another app passed")
    } catch { #expect(error.code == "wrong-app-apple-id") }

    // TEST carries no transaction; REFUND_REVERSED carries one without a revocation.
    let test = try line(
      try run(["notification", "--chain", "chain", "--type", "TEST", "--bundle-id", "com.example.app"]))
    let testPayload = try #require(
      (try JSONSerialization.jsonObject(with: Data(test.utf8)) as? [String: Any])?["signedPayload"] as? String)
    let verifiedTest = try await NotificationVerifier(transactions: try verifier()).verify(testPayload)
    #expect(verifiedTest.notificationType == "TEST" && verifiedTest.transaction == nil)
    let reversed = try line(
      try run([
        "notification", "--chain", "chain", "--type", "REFUND_REVERSED", "--bundle-id", "com.example.app", "--product",
        "com.example.book", "--transaction-id", "2000000000000042",
      ]))
    let reversedPayload = try #require(
      (try JSONSerialization.jsonObject(with: Data(reversed.utf8)) as? [String: Any])?["signedPayload"] as? String)
    let verifiedReversal = try await NotificationVerifier(transactions: try verifier()).verify(reversedPayload)
    #expect(verifiedReversal.transaction?.revocationDate == nil)
  }

  /// Each refusal: exit 2, one line that says what is wrong and what to give, then the usage line.
  @Test func badFlagsAreRefusedWithWhatToGive() throws {
    let base = ["--chain", "chain", "--bundle-id", "com.example.app"]
    let cases: [([String], String)] = [
      (
        ["transaction"] + base + ["--product", "com.example.book", "--signed-date", "yesterday"],
        "--signed-date 'yesterday' is not a date: give RFC 3339 (2026-05-01T12:00:00Z) or milliseconds since 1970 (1777636800000)"
      ),
      (
        ["transaction"] + base + ["--product", "com.example.book", "--expires", "2026-13-01T00:00:00Z"],
        "--expires '2026-13-01T00:00:00Z' is not a date"
      ),
      (
        ["transaction"] + base + ["--product", "com.example.book", "--transaction-id", "12ab"],
        "--transaction-id '12ab' is not a transaction identifier (digits, e.g. 2000000000000001)"
      ),
      (["transaction"] + base + ["--product", "com example"], "--product 'com example' is not a product identifier"),
      (
        ["transaction"] + base + ["--product", "com.example.book", "--environment", "Staging"],
        "the value 'Staging' is invalid for '--environment <environment>'"
      ),
      (
        ["transaction", "--chain", "chain", "--product", "com.example.book"],
        "missing expected argument '--bundle-id <id>'"
      ),
      (
        ["notification"] + base + ["--type", "REFUND", "--transaction-id", "1"],
        "--type REFUND is about a transaction: give its --product"
      ),
      (
        ["notification"] + base + ["--type", "REFUND", "--product", "com.example.book"],
        "--type REFUND is about a transaction: give its --transaction-id"
      ),
      (
        ["notification"] + base + ["--type", "TEST", "--product", "com.example.book"],
        "--type TEST carries no transaction: leave out --product"
      ),
      (["notification"] + base + ["--type", "REFUNDED"], "the value 'REFUNDED' is invalid for '--type <type>'"),
      (
        ["notification"] + base + [
          "--type", "EXPIRED", "--subtype", "voluntary", "--product", "p", "--transaction-id", "1",
        ],
        "--subtype 'voluntary' is not a notification subtype"
      ),
      (["frobnicate"], "unexpected argument 'frobnicate'"),
    ]
    for (arguments, message) in cases {
      let result = try run(arguments)
      #expect(result.status == 2, "\(arguments): \(result.stderr)")
      let lines = result.stderr.split(separator: "\n")
      // One line, or, for a closed set of more than four values, the line and the values.
      #expect(lines.first?.hasPrefix("pkgtool: error: " + message) == true, "\(result.stderr)")
      #expect(lines.count == 2 || lines.dropFirst().dropLast().allSatisfy { $0.hasPrefix("  - ") }, "\(result.stderr)")
      #expect(lines.last?.hasPrefix("Run 'pkgtool storekit-test --help'") == true, "\(result.stderr)")
      #expect(result.stdout.isEmpty)
    }
  }

  /// A chain folder that is missing or damaged is named, with how to make one.
  @Test func aMissingOrDamagedChainIsNamed() throws {
    let arguments = ["--bundle-id", "com.example.app", "--product", "com.example.book"]
    let missing = try run(["transaction", "--chain", "nothing"] + arguments)
    #expect(missing.status == 2)
    #expect(
      missing.stderr
        == "pkgtool: error: the test chain 'nothing' does not exist (make a test chain with: pkgtool storekit-test chain -o nothing)\n"
    )
    try FileManager.default.removeItem(atPath: dir.appending("chain/leaf.key"))
    let keyless = try run(["transaction", "--chain", "chain"] + arguments)
    #expect(keyless.status == 2)
    #expect(
      keyless.stderr.hasPrefix("pkgtool: error: cannot read 'chain/leaf.key' of the test chain: "), "\(keyless.stderr)")
    // Another chain's key: the pair does not match.
    #expect(try run(["chain", "-o", "other", "-q"]).status == 0)
    try FileManager.default.copyItem(atPath: dir.appending("other/leaf.key"), toPath: dir.appending("chain/leaf.key"))
    let mixed = try run(["transaction", "--chain", "chain"] + arguments)
    #expect(mixed.status == 2)
    #expect(mixed.stderr.contains("the keys in 'chain' do not belong to its certificates"), "\(mixed.stderr)")
    try writeFile(dir.appending("chain/root.pem"), "not a certificate\n")
    let garbled = try run(["notification", "--chain", "chain", "--type", "TEST", "--bundle-id", "com.example.app"])
    #expect(
      garbled.status == 2 && garbled.stderr.contains("'chain/root.pem' is not a PEM certificate"), "\(garbled.stderr)")
  }

  /// `pkgtool storekit-test` and `pkgtool help storekit-test` are the server program's; its
  /// help teaches with examples.
  @Test func helpIsTheServerProgramsAndTeaches() throws {
    for arguments in [["storekit-test", "--help"], ["help", "storekit-test"]] {
      let help = try pkgtool(arguments)
      #expect(help.status == 0)
      #expect(help.stdout.contains("USAGE: pkgtool storekit-test <subcommand>"), "\(help.stdout)")
      #expect(help.stdout.contains("pkgtool storekit-test chain -o chain"))
    }
    for command in ["chain", "transaction", "notification"] {
      let help = try pkgtool(["help", "storekit-test", command])
      #expect(help.status == 0 && help.stdout.contains("USAGE: pkgtool storekit-test \(command)"), "\(help.stdout)")
      #expect(help.stdout.contains("Example"))
      // Examples fit a terminal: ArgumentParser wraps at 80 columns, which would break them.
      let examples = help.stdout.components(separatedBy: "Example").last ?? ""
      for line in examples.split(separator: "\n").prefix { !$0.hasPrefix("USAGE") } {
        #expect(line.count < 80, "\(command): \(line)")
      }
    }
  }
}

/// Reads a base64url JSON part of a JWS in these tests.
enum Base64URLTestDecoding {
  static func json(_ part: Substring) -> [String: Any]? {
    var text = part.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
    while text.count % 4 != 0 { text += "=" }
    guard let data = Data(base64Encoded: text) else { return nil }
    return (try? JSONSerialization.jsonObject(with: data)) as? [String: Any]
  }
}
