import ArgumentParser
import Foundation
import HostedContent
import PkgToolCLI
import PurchaseProof
import StoreKitTesting
import SystemIO

/// `pkgtool storekit-test`: test data with the App Store's shape, signed by a chain of its own,
/// to try a gate on a laptop or in CI without Apple. In the server program because it needs
/// X.509; `pkgtool storekit-test …` runs `pkgtool-serve storekit-test …`.
struct StoreKitTestCommand: ParsableCommand {
  static let name = "storekit-test"

  static let configuration = CommandConfiguration(
    commandName: "pkgtool storekit-test",
    abstract: "Make StoreKit test data: a certificate chain, signed transactions, App Store notifications.",
    discussion: """
      To try 'pkgtool serve' without the App Store: 'chain' makes a certificate chain with \
      the shape of Apple's (a self-signed root, an intermediate and a leaf carrying Apple's \
      marker extensions) that is NOT Apple's; 'transaction' signs a StoreKit 2 transaction \
      with it; 'notification' signs the App Store Server Notification v2 (a REFUND, say) \
      that App Store Connect would POST. A gate started with the chain's root.pem as \
      --root-certificate accepts them; a gate that trusts Apple Root CA - G3 refuses them.

      Never start a gate that serves paid content with a test root: whoever holds the chain's \
      keys can sign a purchase of anything. docs/serve.md, 'Try it on localhost', runs the \
      whole flow.

      Examples:
        pkgtool storekit-test chain -o chain
        pkgtool storekit-test transaction --chain chain \\
            --bundle-id com.example.app --product com.example.book \\
            --transaction-id 2000000000000001 -o transaction.jws
        pkgtool storekit-test notification --chain chain --type REFUND \\
            --bundle-id com.example.app --product com.example.book \\
            --transaction-id 2000000000000001 -o refund.json
        pkgtool serve ... --environment Sandbox \\
            --root-certificate chain/root.pem
      """,
    version: PkgTool.version,
    subcommands: [StoreKitChainCommand.self, StoreKitTransactionCommand.self, StoreKitNotificationCommand.self])
}

/// The environments test data can claim; the gate's `--environment` must be the same.
enum StoreKitEnvironment: String, CaseIterable, ExpressibleByArgument {
  case sandbox = "Sandbox"
  case production = "Production"
  case xcode = "Xcode"
  case localTesting = "LocalTesting"

  var verifierEnvironment: TransactionVerifier.Environment { TransactionVerifier.Environment(rawValue: rawValue)! }
}

/// The options every signing subcommand shares.
struct StoreKitSigningOptions: ParsableArguments {
  @Option(
    help: ArgumentHelp(
      "The test chain 'pkgtool storekit-test chain' wrote (its leaf signs; for Xcode and LocalTesting, its root).",
      valueName: "dir"))
  var chain: String

  @Option(name: .customLong("bundle-id"), help: ArgumentHelp("The app's bundle identifier.", valueName: "id"))
  var bundleID: String

  @Option(
    help: ArgumentHelp(
      "The environment the data claims; the gate's --environment must be the same.", valueName: "environment"))
  var environment: StoreKitEnvironment = .sandbox

  @Option(
    name: [.short, .customLong("output")],
    help: ArgumentHelp("Write to this file instead of standard output.", valueName: "file"))
  var output: String?

  func validate() throws {
    if bundleID.isEmpty || bundleID.contains(where: { $0.isWhitespace }) {
      throw ValidationError("--bundle-id '\(bundleID)' is not a bundle identifier (for example com.example.app)")
    }
  }

  /// Writes `text` and a newline to --output (atomically) or standard output.
  func emit(_ text: String) throws {
    guard let output else {
      Terminal.standardOutput(text + "\n")
      return
    }
    do { try PendingFile.write(Array((text + "\n").utf8), to: output, mode: 0o644) } catch let error as SystemError {
      throw OperationError(
        "cannot write '\(output)': \(error.reason)", hint: "check that its folder exists and is writable",
        code: .outputUnwritable)
    }
  }
}

/// App Store identifiers and dates as the options take them.
enum StoreKitArgument {
  /// Checks that `value` of `option` is an App Store transaction identifier: digits only.
  static func transactionID(_ value: String, _ option: String) throws {
    guard (1...32).contains(value.count), value.allSatisfy({ $0.isASCII && $0.isNumber }) else {
      throw ValidationError("\(option) '\(value)' is not a transaction identifier (digits, e.g. 2000000000000001)")
    }
  }

  /// A product identifier: letters, digits, `.`, `_` and `-`.
  static func productID(_ value: String) throws {
    let allowed = value.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "._-".contains($0)) }
    guard !value.isEmpty, allowed else {
      throw ValidationError(
        "--product '\(value)' is not a product identifier (letters, digits, '.', '_': com.example.book)")
    }
  }

  /// `text` as a date: RFC 3339 (`2026-05-01T12:00:00Z`, `2026-05-01T14:00:00.5+02:00`) or
  /// App Store milliseconds since 1970 (`1777636800000`).
  static func date(_ text: String, _ option: String) throws -> Date {
    if !text.isEmpty, text.count <= 15, text.allSatisfy({ $0.isASCII && $0.isNumber }), let milliseconds = Int64(text) {
      return Date(timeIntervalSince1970: Double(milliseconds) / 1000)
    }
    let plain = ISO8601DateFormatter()
    plain.formatOptions = [.withInternetDateTime]
    let fractional = ISO8601DateFormatter()
    fractional.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
    if let date = plain.date(from: text) ?? fractional.date(from: text) { return date }
    throw ValidationError(
      "\(option) '\(text)' is not a date: give RFC 3339 (2026-05-01T12:00:00Z) or milliseconds since 1970 (1777636800000)"
    )
  }
}

struct StoreKitChainCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "chain",
    abstract: "Write a test certificate chain with the shape of the App Store's, never Apple's.",
    discussion: """
      Writes into DIR, which must not exist or be empty (it appears whole or not at all):
        root.pem          the self-signed test root: 'pkgtool serve --root-certificate DIR/root.pem'
        intermediate.pem  signed by the root, with Apple's WWDR marker 1.2.840.113635.100.6.2.1
        leaf.pem          signed by the intermediate, with Apple's marker 1.2.840.113635.100.6.11.1
        root.key          the root's key, PKCS#8 PEM, mode 600 (signs Xcode and LocalTesting data)
        leaf.key          the leaf's key, PKCS#8 PEM, mode 600 (signs Production and Sandbox data)
        README.txt        what these are
      P-256 keys; valid from 2000 to 2049. 'transaction' and 'notification' sign with it \
      (--chain DIR). openssl x509 -in DIR/leaf.pem -noout -text shows a certificate.

      Example:
        pkgtool storekit-test chain -o chain
      """)

  @Option(name: [.short, .customLong("output")], help: ArgumentHelp("The folder to create.", valueName: "dir"))
  var output: String

  @Flag(name: [.short, .long], help: "Print nothing.")
  var quiet = false

  func run() throws {
    try StoreKitTestChain().write(to: output)
    if !quiet {
      Terminal.standardOutput(
        """
        wrote the test chain '\(output)' (not Apple's): root.pem, intermediate.pem, leaf.pem, root.key and leaf.key (0600)
        pkgtool serve takes it as --root-certificate \(output)/root.pem; never use it where a gate serves paid content

        """)
    }
  }
}

struct StoreKitTransactionCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "transaction",
    abstract: "Sign a StoreKit 2 transaction (a JWS, one line) with a test chain.",
    discussion: """
      Prints the JWS an app gets from StoreKit 2 (VerificationResult.jwsRepresentation) for a \
      purchase of --product: header {"alg":"ES256","x5c":[leaf, intermediate, root]} and a \
      payload with the App Store's fields (transactionId, originalTransactionId, bundleId, \
      productId, purchaseDate, signedDate, environment, type, ...), dates in milliseconds \
      since 1970. A Non-Consumable; with --expires an Auto-Renewable Subscription. With \
      --environment Xcode or LocalTesting it is signed as Xcode's StoreKit testing signs: by \
      the root alone, x5c the one self-signed certificate.

      Dates are RFC 3339 (2026-05-01T12:00:00Z) or milliseconds since 1970 (1777636800000). \
      --signed-date is now by default; the purchase date is the signed date.

      Examples:
        pkgtool storekit-test transaction --chain chain \\
            --bundle-id com.example.app --product com.example.book \\
            --transaction-id 2000000000000001 -o transaction.jws
        pkgtool storekit-test transaction --chain chain \\
            --bundle-id com.example.app --product com.example.monthly \\
            --expires 2030-01-01T00:00:00Z --environment Xcode
        jq -n --arg jws "$(cat transaction.jws)" \\
            '{productIdentifier: "com.example.book", signedTransaction: $jws}' |
          curl -s --json @- http://127.0.0.1:8080/v1/downloads
      """)

  @OptionGroup var signing: StoreKitSigningOptions

  @Option(help: ArgumentHelp("The product bought.", valueName: "id"))
  var product: String

  @Option(
    name: .customLong("transaction-id"),
    help: ArgumentHelp("The transaction's identifier (digits).", valueName: "n"))
  var transactionID = "2000000000000001"

  @Option(
    name: .customLong("original-transaction-id"),
    help: ArgumentHelp(
      "The purchase's first transaction (a restore's or renewal's original; default: --transaction-id).",
      valueName: "n"))
  var originalTransactionID: String?

  @Option(
    help: ArgumentHelp("When the subscription ends (makes it an Auto-Renewable Subscription).", valueName: "date"))
  var expires: String?

  @Option(
    name: .customLong("signed-date"),
    help: ArgumentHelp("When the App Store signed it (default: now).", valueName: "date"))
  var signedDate: String?

  func validate() throws {
    try StoreKitArgument.productID(product)
    try StoreKitArgument.transactionID(transactionID, "--transaction-id")
    if let originalTransactionID {
      try StoreKitArgument.transactionID(originalTransactionID, "--original-transaction-id")
    }
    if let expires { _ = try StoreKitArgument.date(expires, "--expires") }
    if let signedDate { _ = try StoreKitArgument.date(signedDate, "--signed-date") }
  }

  func run() throws {
    let chain = try StoreKitTestChain(contentsOf: signing.chain)
    let payload = StoreKitTestData.transaction(
      transactionID: transactionID, originalTransactionID: originalTransactionID, bundleID: signing.bundleID,
      productID: product, environment: signing.environment.rawValue,
      signedDate: try signedDate.map { try StoreKitArgument.date($0, "--signed-date") } ?? Date(),
      expiresDate: try expires.map { try StoreKitArgument.date($0, "--expires") })
    try signing.emit(try chain.jws(payload, as: signing.environment.verifierEnvironment))
  }
}

/// The App Store Server Notifications v2 types (`notificationType`).
enum StoreKitNotificationType: String, CaseIterable, ExpressibleByArgument {
  case consumptionRequest = "CONSUMPTION_REQUEST"
  case didChangeRenewalPref = "DID_CHANGE_RENEWAL_PREF"
  case didChangeRenewalStatus = "DID_CHANGE_RENEWAL_STATUS"
  case didFailToRenew = "DID_FAIL_TO_RENEW"
  case didRenew = "DID_RENEW"
  case expired = "EXPIRED"
  case gracePeriodExpired = "GRACE_PERIOD_EXPIRED"
  case offerRedeemed = "OFFER_REDEEMED"
  case oneTimeCharge = "ONE_TIME_CHARGE"
  case priceIncrease = "PRICE_INCREASE"
  case refund = "REFUND"
  case refundDeclined = "REFUND_DECLINED"
  case refundReversed = "REFUND_REVERSED"
  case renewalExtended = "RENEWAL_EXTENDED"
  case revoke = "REVOKE"
  case subscribed = "SUBSCRIBED"
  case test = "TEST"

  /// Whether the transaction inside carries a `revocationDate`, as the App Store's does.
  var revokes: Bool { self == .refund || self == .revoke }
}

struct StoreKitNotificationCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "notification",
    abstract: "Sign an App Store Server Notification v2 (the body App Store Connect POSTs) with a test chain.",
    discussion: """
      Prints {"signedPayload":"JWS"}, the body App Store Connect POSTs to a gate's \
      /v1/notifications: a notification of --type (and --subtype) about the transaction \
      --transaction-id, which it carries signed anew (data.signedTransactionInfo). For REFUND \
      and REVOKE that transaction has a revocationDate, the notification's date. TEST carries \
      no transaction and needs no --product or --transaction-id. In Production a gate started \
      with --app-apple-id N takes only notifications that name it (--app-apple-id N here too).

      Dates are RFC 3339 (2026-05-01T12:00:00Z) or milliseconds since 1970 (1777636800000); \
      --signed-date is now by default. --expires is the subscription's end, for DID_RENEW, \
      EXPIRED and the like.

      Examples:
        pkgtool storekit-test notification --chain chain --type REFUND \\
            --bundle-id com.example.app --product com.example.book \\
            --transaction-id 2000000000000001 -o refund.json
        curl -s --json @refund.json http://127.0.0.1:8080/v1/notifications
        pkgtool storekit-test notification --chain chain --type TEST \\
            --bundle-id com.example.app
      """)

  @OptionGroup var signing: StoreKitSigningOptions

  @Option(help: ArgumentHelp("What happened.", valueName: "type"))
  var type: StoreKitNotificationType

  @Option(help: ArgumentHelp("The subtype, when the type has one: VOLUNTARY, BILLING_RETRY, ...", valueName: "subtype"))
  var subtype: String?

  @Option(help: ArgumentHelp("The product of the transaction (every type but TEST).", valueName: "id"))
  var product: String?

  @Option(
    name: .customLong("transaction-id"),
    help: ArgumentHelp("The transaction it is about (every type but TEST).", valueName: "n"))
  var transactionID: String?

  @Option(
    name: .customLong("original-transaction-id"),
    help: ArgumentHelp("The purchase's first transaction (default: --transaction-id).", valueName: "n"))
  var originalTransactionID: String?

  @Option(
    name: .customLong("app-apple-id"),
    help: ArgumentHelp("The app's Apple ID, as the gate's --app-apple-id.", valueName: "n"))
  var appAppleID: Int64?

  @Option(help: ArgumentHelp("When the subscription ends (DID_RENEW, EXPIRED, ...).", valueName: "date"))
  var expires: String?

  @Option(
    name: .customLong("signed-date"),
    help: ArgumentHelp("When the App Store signed it (default: now).", valueName: "date"))
  var signedDate: String?

  func validate() throws {
    if type == .test {
      for (given, option) in [(product, "--product"), (transactionID, "--transaction-id")] where given != nil {
        throw ValidationError("--type TEST carries no transaction: leave out \(option)")
      }
    } else {
      guard let product else {
        throw ValidationError("--type \(type.rawValue) is about a transaction: give its --product")
      }
      guard let transactionID else {
        throw ValidationError("--type \(type.rawValue) is about a transaction: give its --transaction-id")
      }
      try StoreKitArgument.productID(product)
      try StoreKitArgument.transactionID(transactionID, "--transaction-id")
    }
    if let originalTransactionID {
      try StoreKitArgument.transactionID(originalTransactionID, "--original-transaction-id")
    }
    if let subtype, subtype.isEmpty || !subtype.allSatisfy({ $0.isASCII && ($0.isUppercase || $0 == "_") }) {
      throw ValidationError("--subtype '\(subtype)' is not a notification subtype (upper case and '_': VOLUNTARY)")
    }
    if let appAppleID, appAppleID <= 0 { throw ValidationError("--app-apple-id must be a positive number") }
    if let expires { _ = try StoreKitArgument.date(expires, "--expires") }
    if let signedDate { _ = try StoreKitArgument.date(signedDate, "--signed-date") }
  }

  func run() throws {
    let chain = try StoreKitTestChain(contentsOf: signing.chain)
    let environment = signing.environment.verifierEnvironment
    let signed = try signedDate.map { try StoreKitArgument.date($0, "--signed-date") } ?? Date()
    var inner: String?
    if let product, let transactionID {
      let transaction = StoreKitTestData.transaction(
        transactionID: transactionID, originalTransactionID: originalTransactionID, bundleID: signing.bundleID,
        productID: product, environment: environment.rawValue, signedDate: signed,
        expiresDate: try expires.map { try StoreKitArgument.date($0, "--expires") },
        revocationDate: type.revokes ? signed : nil)
      inner = try chain.jws(transaction, as: environment)
    }
    let payload = StoreKitTestData.notification(
      type: type.rawValue, subtype: subtype, bundleID: signing.bundleID, environment: environment.rawValue,
      appAppleID: appAppleID, signedDate: signed, signedTransactionInfo: inner)
    try signing.emit(try chain.notificationBody(payload, as: environment))
  }
}
