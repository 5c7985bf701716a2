import ArgumentParser
import ContentServer
import Foundation
import HostedContent
import Logging
import PkgToolCLI
import PurchaseProof

/// `pkgtool-serve`, which `pkgtool serve` and `pkgtool storekit-test` run: parses the server's
/// options (or, after `storekit-test`, that command's) and exits as every pkgtool command does.
package enum ServeMain {
  package static func main() async -> Never {
    let arguments = Array(CommandLine.arguments.dropFirst())
    if arguments.first == StoreKitTestCommand.name {
      PkgToolMain.run(
        StoreKitTestCommand.self, Array(arguments.dropFirst()),
        usage: "Run 'pkgtool storekit-test --help' or 'pkgtool storekit-test <command> --help' for usage.")
    }
    await PkgToolMain.run(ServeCommand.self, arguments, usage: "Run 'pkgtool serve --help' for usage.")
  }
}

struct ServeCommand: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "pkgtool serve",
    abstract: "Serve a catalog's packages to apps that prove the purchase (the App Store's hosting, self-hosted).",
    discussion: """
      GET /catalog.json serves the signed catalog as published. POST /v1/downloads takes \
      {"productIdentifier": ID, "signedTransaction": JWS} (optionally "contentVersion") and, \
      when the StoreKit 2 transaction proves the purchase, answers a signed URL that expires: \
      GET /packages/NAME?expires=...&signature=... then serves the bytes (Range, If-Range). \
      GET /healthz answers the catalog's sequence and expiry (503 once it has expired). The \
      catalog is verified with --public-key or --root as a client verifies it, at start (a \
      catalog a client would refuse stops the start) and again on SIGHUP and whenever its \
      files change. Stops gracefully on SIGTERM.

      With --asset-packs, Background Assets packs are served too: GET /packs/ID (Range, \
      If-Range) answers 401 with a Basic challenge; the app's downloader extension answers it \
      with the user storekit and the StoreKit signed transaction as password, checked as for \
      /v1/downloads against the products --pack-product maps the pack to. \
      GET /download-manifest.json serves --download-manifest.

      One client (an IPv4 address, an IPv6 /64) holds at most --max-client-connections \
      connections; a connection that sends no request within --first-request-timeout is \
      closed. Behind a proxy or load balancer every connection has its address: give \
      --max-client-connections 0 there and limit clients at the proxy. With --metrics-listen, \
      GET /metrics on that address answers Prometheus' text format (requests by route, \
      status and refusal code; bytes; downloads in flight; seconds until the catalog expires; \
      notifications by type); keep that address off the public network.

      POST /v1/notifications takes App Store Server Notifications v2 (point App Store \
      Connect's notification URL there): a REFUND or REVOKE refuses the transaction from \
      the next request on, whatever the date of the JWS a client sends; REFUND_REVERSED \
      restores it; renewals and expiries update a subscription's end. Notifications are \
      kept in --state (SQLite by default; PostgreSQL when several instances share one \
      truth). When the store does not answer, both routes give 503 with Retry-After.

      A transaction proves the purchase when its alg is ES256, its x5c chain runs to \
      --root-certificate (Apple Root CA - G3) with Apple's marker extensions, checked at its \
      signedDate (with --environment Xcode or LocalTesting: x5c is the one certificate given, \
      the self-signed one StoreKit testing signs with, never Apple's), its signature verifies, \
      and its bundleId, environment and productId are the expected ones, with no \
      revocationDate and no expiresDate in the past, a signedDate not in the future, and no \
      refund or revocation in the state store.

      Give every instance behind a load balancer the same --url-key (32 random bytes or more, in \
      a file only its owner can read: (umask 077; head -c 32 /dev/urandom > url.key)); without \
      one, a random key is made and URLs hold only on this instance. With --public-url, URLs \
      point there (a CDN or the load balancer). docs/serve.md shows how to get and check \
      Apple's root certificate.

      Examples:
        pkgtool serve --catalog catalog.json --packages dist \\
            --listen 127.0.0.1:8080 --bundle-id com.example.app \\
            --root-certificate AppleRootCA-G3.cer --url-key url.key
        pkgtool serve --catalog catalog.json --packages dist \\
            --listen 0.0.0.0:8080 --bundle-id com.example.app \\
            --root-certificate AppleRootCA-G3.cer --url-key url.key \\
            --environment Sandbox --open com.example.app.sample \\
            --public-url https://content.example.com \\
            --max-client-connections 0 --metrics-listen 127.0.0.1:9464
      """,
    version: PkgTool.version)

  @Option(help: ArgumentHelp("The signed catalog (pkgtool publish writes it).", valueName: "catalog.json"))
  var catalog: String

  @Option(help: ArgumentHelp("The folder that holds the packages the catalog lists.", valueName: "dir"))
  var packages: String

  @Option(
    name: .customLong("public-key"),
    help: ArgumentHelp(
      "The publisher's public key (KEY.pub) that must have signed the catalog, as for install.", valueName: "key.pub"))
  var publicKey: String?

  @Option(
    name: .customLong("root"),
    help: ArgumentHelp(
      "Instead of --public-key: the root the apps ship, then each newer version (repeat, or a folder of them), as for install; read again on every reload.",
      valueName: "root.json"))
  var roots: [String] = []

  @Option(
    name: .customLong("asset-packs"),
    help: ArgumentHelp(
      "Also serve Background Assets packs: a folder of .aar files named ID or ID.aar, at /packs/ID.",
      valueName: "dir"))
  var assetPacks: String?

  @Option(
    name: .customLong("pack-product"),
    help: ArgumentHelp(
      "A pack and a product whose purchase opens it (repeat: one pack may need any of several products).",
      valueName: "pack-id=product-id"))
  var packProducts: [String] = []

  @Option(
    name: .customLong("download-manifest"),
    help: ArgumentHelp(
      "The download manifest served at /download-manifest.json, checked against the packs.", valueName: "file"))
  var downloadManifest: String?

  @Option(
    name: .customLong("expiry-warning"),
    help: ArgumentHelp(
      "How long before the catalog expires /healthz and the log start warning (default 7d).", valueName: "time"),
    transform: DurationArgument.option(range: 0...365 * 86_400))
  var expiryWarning = DurationArgument(seconds: 7 * 86_400)

  @Option(
    name: .customLong("reload-interval"),
    help: ArgumentHelp(
      "How often the catalog and packages are checked for a change (default 2s; SIGHUP reloads at once).",
      valueName: "time"),
    transform: DurationArgument.option(range: 0.1...3_600))
  var reloadInterval = DurationArgument(seconds: 2)

  @Option(help: ArgumentHelp("The address and port to listen on (port 0: any free port).", valueName: "host:port"))
  var listen = "127.0.0.1:8080"

  @Option(name: .customLong("bundle-id"), help: ArgumentHelp("The app's bundle identifier.", valueName: "id"))
  var bundleID: String

  @Option(
    name: .customLong("root-certificate"),
    help: ArgumentHelp("Apple Root CA - G3, PEM or DER (see docs/serve.md).", valueName: "file"))
  var rootCertificate: String

  @Option(
    help: ArgumentHelp(
      "The App Store environment transactions must come from (Xcode, LocalTesting: StoreKit testing, with its certificate as --root-certificate).",
      valueName: "Production|Sandbox|Xcode|LocalTesting"))
  var environment = "Production"

  @Option(
    name: .customLong("url-key"),
    help: ArgumentHelp(
      "The key signed URLs are made with (32 bytes or more, mode 600; the same on every instance).",
      valueName: "file"))
  var urlKey: String?

  @Option(
    name: .customLong("url-lifetime"),
    help: ArgumentHelp("How long a signed URL holds: 90s, 15m, 1h (from 1s to 7d).", valueName: "time"),
    transform: DurationArgument.option(range: 1...7 * 86_400))
  var urlLifetime = DurationArgument(seconds: 15 * 60)

  @Option(
    parsing: .upToNextOption,
    help: ArgumentHelp(
      "Products (or asset-pack IDs) served to anyone, without a transaction or signature.", valueName: "product-id"))
  var open: [String] = []

  @Option(
    name: .customLong("public-url"),
    help: ArgumentHelp(
      "Where signed URLs point (a CDN or load balancer) instead of the request's host.", valueName: "url"))
  var publicURL: String?

  @Option(
    name: .customLong("client-timeout"),
    help: ArgumentHelp(
      "Close a connection that sends no request, or takes none of the response, for this long (1s to 1h).",
      valueName: "time"),
    transform: DurationArgument.option(range: 1...3_600))
  var clientTimeout = DurationArgument(seconds: 30)

  @Option(
    name: .customLong("first-request-timeout"),
    help: ArgumentHelp(
      "Close a new connection that has not sent its first request within this long (1s to 1h; at most --client-timeout).",
      valueName: "time"),
    transform: DurationArgument.option(range: 1...3_600))
  var firstRequestTimeout = DurationArgument(seconds: 10)

  @Option(
    name: .customLong("max-connections"),
    help: ArgumentHelp("Connections open at once; more wait in the listen backlog.", valueName: "n"))
  var maxConnections = 1024

  @Option(
    name: .customLong("max-client-connections"),
    help: ArgumentHelp(
      "Connections one client (an IPv4 address, an IPv6 /64) may hold; more are closed. 0: no limit (behind a proxy).",
      valueName: "n"))
  var maxClientConnections = 32

  @Option(
    name: .customLong("metrics-listen"),
    help: ArgumentHelp(
      "Serve Prometheus metrics at GET /metrics on this address, apart from the public port (off by default).",
      valueName: "host:port"))
  var metricsListen: String?

  @Option(
    help: ArgumentHelp(
      "Where App Store notifications (refunds, revocations, renewals) are kept: sqlite:PATH for one instance, postgres://USER@HOST/DB shared by several.",
      valueName: "url"))
  var state = "sqlite:serve-state.sqlite"

  @Option(
    name: .customLong("app-apple-id"),
    help: ArgumentHelp(
      "The app's Apple ID (App Store Connect, App Information); notifications in Production must name it.",
      valueName: "number"))
  var appAppleID: Int64?

  @Option(
    name: .customLong("max-proof-age"),
    help: ArgumentHelp(
      "Refuse transactions signed longer ago than this (30d, 12h); off by default. For non-renewing subscriptions: see docs/serve.md.",
      valueName: "time"),
    transform: DurationArgument.option(range: 60...3_650 * 86_400, unitRequired: true))
  var maxProofAge: DurationArgument?

  func validate() throws {
    if assetPacks == nil, !packProducts.isEmpty || downloadManifest != nil {
      throw ValidationError(
        "--\(downloadManifest != nil ? "download-manifest" : "pack-product") goes with --asset-packs DIR, the folder of the packs"
      )
    }
    for item in packProducts {
      let parts = item.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
      guard parts.count == 2, !parts[0].isEmpty, !parts[1].isEmpty else {
        throw ValidationError(
          "--pack-product '\(item)' is not PACK_ID=PRODUCT_ID (for example BookPack=com.example.book)")
      }
    }
    guard (publicKey == nil) != roots.isEmpty else {
      throw ValidationError(
        "Give --public-key KEY.pub or --root ROOT.json (one of them): serve verifies the catalog as every client does, and refuses to serve one they would refuse."
      )
    }
  }

  func run() async throws {
    let (host, port) = try Self.address(listen)
    let metricsAddress = try metricsListen.map { try Self.address($0, option: "--metrics-listen") }
    guard maxConnections >= 1 else {
      throw OperationError("--max-connections is \(maxConnections)", hint: "give 1 or more (default 1024)")
    }
    guard maxClientConnections >= 0 else {
      throw OperationError(
        "--max-client-connections is \(maxClientConnections)", hint: "give 0 (no limit) or more (default 32)")
    }
    guard let environment = TransactionVerifier.Environment(rawValue: environment) else {
      throw OperationError(
        "--environment is '\(self.environment)'", hint: "use Production, Sandbox, Xcode or LocalTesting")
    }
    let lifetime = urlLifetime.seconds
    let timeout = clientTimeout.seconds
    var base: String?
    if let publicURL {
      var url = publicURL
      while url.hasSuffix("/") { url.removeLast() }
      guard let parsed = URL(string: url), ["http", "https"].contains(parsed.scheme?.lowercased() ?? ""),
        parsed.host != nil, parsed.query == nil, parsed.fragment == nil
      else {
        throw OperationError(
          "--public-url '\(publicURL)' is not an http(s) URL without query",
          hint: "for example https://content.example.com")
      }
      base = url
    }
    let root = try TransactionVerifier.loadRootCertificate(contentsOf: rootCertificate)
    // Xcode and LocalTesting data is signed by a certificate the developer's Xcode made, not by
    // Apple: it is trusted only as the certificate given, and never under Apple's root, which
    // would make Apple's name stand for transactions no App Store made.
    let isApple: Bool
    do { isApple = try TransactionVerifier.isAppleRoot(root) } catch {
      throw OperationError("cannot read the root certificate '\(rootCertificate)': \(error)")
    }
    if environment.isLocal {
      if isApple {
        throw OperationError(
          "--environment \(environment.rawValue) takes the StoreKit testing certificate, and '\(rootCertificate)' is Apple Root CA - G3",
          hint:
            "give --root-certificate the self-signed certificate the test transactions carry (their x5c); or use Production or Sandbox"
        )
      }
    }
    let signer = try urlKey.map { try URLSigner.load(contentsOf: $0) } ?? URLSigner.random()

    LoggingSystem.bootstrap { label in
      var handler = StreamLogHandler.standardError(label: label)
      handler.logLevel = .info
      return handler
    }
    let logger = Logger(label: "pkgtool.serve")
    var limits = ServeConfiguration.Limits()
    limits.idleTimeout = timeout
    limits.stalledWriteTimeout = timeout
    limits.firstRequestTimeout = min(firstRequestTimeout.seconds, timeout)
    limits.maximumConnections = maxConnections
    limits.maximumConnectionsPerClient = maxClientConnections
    let verifier = TransactionVerifier(
      rootCertificates: [root], bundleID: bundleID, environment: environment, maximumProofAge: maxProofAge?.seconds)
    var configuration = ServeConfiguration(
      catalogPath: catalog, packagesDirectory: packages, host: host, port: port, verifier: verifier,
      appAppleID: appAppleID, signer: signer, urlLifetime: lifetime, openProducts: Set(open), publicURL: base,
      limits: limits, metricsAddress: metricsAddress)
    configuration.reloadInterval = reloadInterval.seconds
    // The catalog and the packages first, verified as a client would: a start that fails on
    // them touches no state.
    let authority: CatalogAuthority
    if let publicKey {
      authority = .key(try CatalogPublicKey(contentsOf: publicKey, for: "serve --public-key"))
    } else {
      authority = .roots(roots)
    }
    var packConfiguration: AssetPackConfiguration?
    if let assetPacks {
      var map: [String: Set<String>] = [:]
      for item in packProducts {
        let parts = item.split(separator: "=", maxSplits: 1)
        map[String(parts[0]), default: []].insert(String(parts[1]))
      }
      let catalogProducts = try CatalogFile.unverified(contentsOf: catalog).catalog.products.map(\.productIdentifier)
      packConfiguration = AssetPackConfiguration(
        directory: assetPacks, manifestPath: downloadManifest, products: map,
        open: Set(open).subtracting(catalogProducts))
    }
    let initial: ContentStore
    do {
      initial = try ContentStore(
        catalogPath: catalog, directory: packages, authority: authority, assetPacks: packConfiguration)
    } catch let refusal as CatalogError {
      throw OperationError(
        "the catalog '\(catalog)' would be refused by every client: \(refusal)",
        hint: publicKey != nil
          ? "serve the catalog this key signed, or sign a fresh one (pkgtool publish, pkgtool catalog renew)"
          : "serve a catalog the newest root's catalog keys signed, or sign a fresh one (pkgtool catalog renew)")
    }
    let content = LiveContent(
      initial, catalogPath: catalog, directory: packages, authority: authority, assetPacks: packConfiguration,
      expiryWarning: expiryWarning.seconds)
    let products = Set(initial.catalog.products.map(\.productIdentifier))
    // Open products are the names --open gave that the catalog lists now; an open pack's ID never
    // opens a product a later catalog adds under the same name.
    configuration.openProducts = Set(open).intersection(products)
    let packIDs = Set(initial.assetPacks?.packs.keys.map { $0 } ?? [])
    for product in open where !products.contains(product) && !packIDs.contains(product) {
      throw OperationError(
        "--open names '\(product)', which the catalog '\(catalog)' does not list",
        hint: "name a product of the catalog: \(products.sorted().joined(separator: ", "))")
    }
    let store: any EntitlementStore
    do {
      store = try await EntitlementStores.open(state, logger: logger)
    } catch {
      switch error {
      case .badLocation(let why):
        throw OperationError("--state: \(why)", hint: "docs/serve.md, 'The state store'")
      case .newerSchema:
        throw OperationError("--state '\(EntitlementStores.redacted(state))': \(error)")
      case .unavailable(let why):
        throw OperationError(
          "cannot reach the state store: \(why)",
          hint: "start the database, or check --state; the gate does not start without its store")
      }
    }
    let server = ContentServer(configuration: configuration, content: content, state: store, logger: logger)
    if urlKey == nil {
      logger.notice("no --url-key: signed URLs hold only on this instance, until it stops")
    }
    if environment.isLocal {
      logger.notice(
        "--environment \(environment.rawValue): local testing; transactions are not from the App Store, only signed by the certificate '\(rootCertificate)'; do not use for sales"
      )
    }
    if !environment.isLocal && !isApple {
      logger.notice(
        "--root-certificate '\(rootCertificate)' is not Apple Root CA - G3: a test root; transactions are not from the App Store; do not use for sales"
      )
    }
    logger.notice("\(ContentWatcher.describe(initial)); reloaded on SIGHUP and when its files change")
    if let line = Self.expiryNotice(content.health()) { logger.warning("\(line)") }
    logger.notice("state: \(store.displayLocation); App Store notifications: POST /v1/notifications")
    if environment == .production && appAppleID == nil {
      logger.notice("no --app-apple-id: notifications are matched by bundle and environment only")
    }
    let count = initial.packages.count
    do {
      try await server.run { bound in
        let shown = host.contains(":") ? "[\(host)]" : host
        Terminal.standardOutput(
          "pkgtool serve: listening on http://\(shown):\(bound) (\(count) package\(count == 1 ? "" : "s") of \(products.count) product\(products.count == 1 ? "" : "s"))\n"
        )
      } onMetricsListening: { bound in
        let host = metricsAddress?.0 ?? ""
        let shown = host.contains(":") ? "[\(host)]" : host
        Terminal.standardOutput("pkgtool serve: metrics at http://\(shown):\(bound)/metrics\n")
      }
    } catch {
      let addresses = listen + (metricsListen.map { " (metrics: \($0))" } ?? "")
      throw OperationError("cannot serve on \(addresses): \(error)", hint: "is another server listening there?")
    }
  }

  /// A warning for the start's log when the catalog expires within the warning time.
  static func expiryNotice(_ health: LiveContent.Health) -> String? {
    guard health.state == .expiring else { return nil }
    return
      "the catalog (sequence \(health.sequence)) expires at \(health.expires ?? "?"): publish or run pkgtool catalog renew before then"
  }

  /// `host:port`, `[v6]:port`.
  static func address(_ text: String, option: String = "--listen") throws -> (String, Int) {
    let bad = OperationError("\(option) '\(text)' is not host:port", hint: "for example 127.0.0.1:8080 or [::1]:8080")
    guard let colon = text.lastIndex(of: ":"), let port = Int(text[text.index(after: colon)...]),
      (0...65535).contains(port)
    else { throw bad }
    var host = String(text[..<colon])
    if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
    guard !host.isEmpty else { throw bad }
    return (host, port)
  }
}
