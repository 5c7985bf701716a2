import ArgumentParser
import ContentServer
import Foundation
import HostedContent
import Logging
import PkgToolCLI
import PurchaseProof

/// `pkgtool-serve`, which `pkgtool serve` runs: parses the server's options and exits as every
/// pkgtool command does.
package enum ServeMain {
  package static func main() async -> Never {
    await PkgToolMain.run(
      ServeCommand.self, Array(CommandLine.arguments.dropFirst()), usage: "Run 'pkgtool serve --help' for usage.")
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
      GET /healthz answers ok. Stops gracefully on SIGTERM.

      A transaction proves the purchase when its alg is ES256, its x5c chain runs to \
      --root-certificate (Apple Root CA - G3) with Apple's marker extensions, checked at its \
      signedDate, its signature verifies, and its bundleId, environment and productId are the \
      expected ones, with no revocationDate and no expiresDate in the past.

      Give every instance behind a load balancer the same --url-key (32 random bytes or more: \
      head -c 32 /dev/urandom > url.key); without one, a random key is made and URLs hold only \
      on this instance. With --public-url, URLs point there (a CDN or \
      the load balancer). docs/serve.md shows how to get and check Apple's root certificate.

      Examples:
        pkgtool serve --catalog catalog.json --packages dist \\
            --listen 127.0.0.1:8080 --bundle-id com.example.app \\
            --root-certificate AppleRootCA-G3.cer --url-key url.key
        pkgtool serve --catalog catalog.json --packages dist \\
            --listen 0.0.0.0:8080 --bundle-id com.example.app \\
            --root-certificate AppleRootCA-G3.cer --url-key url.key \\
            --environment Sandbox --open com.example.app.sample \\
            --public-url https://content.example.com
      """,
    version: PkgTool.version)

  @Option(help: ArgumentHelp("The signed catalog (pkgtool publish writes it).", valueName: "catalog.json"))
  var catalog: String

  @Option(help: ArgumentHelp("The folder that holds the packages the catalog lists.", valueName: "dir"))
  var packages: String

  @Option(help: ArgumentHelp("The address and port to listen on (port 0: any free port).", valueName: "host:port"))
  var listen = "127.0.0.1:8080"

  @Option(name: .customLong("bundle-id"), help: ArgumentHelp("The app's bundle identifier.", valueName: "id"))
  var bundleID: String

  @Option(
    name: .customLong("root-certificate"),
    help: ArgumentHelp("Apple Root CA - G3, PEM or DER (see docs/serve.md).", valueName: "file"))
  var rootCertificate: String

  @Option(help: ArgumentHelp("The App Store environment transactions must come from.", valueName: "Production|Sandbox"))
  var environment = "Production"

  @Option(
    name: .customLong("url-key"),
    help: ArgumentHelp(
      "The key signed URLs are made with (32 bytes or more; the same on every instance).", valueName: "file"))
  var urlKey: String?

  @Option(
    name: .customLong("url-lifetime"),
    help: ArgumentHelp("How long a signed URL holds: 90s, 15m, 1h (from 1s to 7d).", valueName: "time"),
    transform: DurationArgument.option(range: 1...7 * 86_400))
  var urlLifetime = DurationArgument(seconds: 15 * 60)

  @Option(
    parsing: .upToNextOption,
    help: ArgumentHelp("Products served to anyone, without a transaction or signature.", valueName: "product-id"))
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

  func run() async throws {
    let (host, port) = try Self.address(listen)
    guard let environment = TransactionVerifier.Environment(rawValue: environment),
      [.production, .sandbox].contains(environment)
    else {
      throw OperationError("--environment is '\(self.environment)'", hint: "use Production or Sandbox")
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
    let configuration = ServeConfiguration(
      catalogPath: catalog, packagesDirectory: packages, host: host, port: port,
      verifier: TransactionVerifier(rootCertificates: [root], bundleID: bundleID, environment: environment),
      signer: signer, urlLifetime: lifetime, openProducts: Set(open), publicURL: base, limits: limits)
    let server = try ContentServer(configuration: configuration, logger: logger)
    let products = Set(server.gate.store.catalog.products.map(\.productIdentifier))
    for product in open where !products.contains(product) {
      throw OperationError(
        "--open names '\(product)', which the catalog '\(catalog)' does not list",
        hint: "name a product of the catalog: \(products.sorted().joined(separator: ", "))")
    }
    if urlKey == nil {
      logger.notice("no --url-key: signed URLs hold only on this instance, until it stops")
    }
    let count = server.gate.store.packages.count
    do {
      try await server.run { bound in
        let shown = host.contains(":") ? "[\(host)]" : host
        Terminal.standardOutput(
          "pkgtool serve: listening on http://\(shown):\(bound) (\(count) package\(count == 1 ? "" : "s") of \(products.count) product\(products.count == 1 ? "" : "s"))\n"
        )
      }
    } catch {
      throw OperationError("cannot serve on \(listen): \(error)", hint: "is another server listening there?")
    }
  }

  /// `host:port`, `[v6]:port`.
  static func address(_ text: String) throws -> (String, Int) {
    let bad = OperationError("--listen '\(text)' is not host:port", hint: "for example 127.0.0.1:8080 or [::1]:8080")
    guard let colon = text.lastIndex(of: ":"), let port = Int(text[text.index(after: colon)...]),
      (0...65535).contains(port)
    else { throw bad }
    var host = String(text[..<colon])
    if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
    guard !host.isEmpty else { throw bad }
    return (host, port)
  }
}
