import Foundation
import HTTPTypes
import HostedContent
import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import NIOPosix
import PurchaseProof
import ServiceLifecycle
import TextCoding

/// `pkgtool serve`: the purchase gate and the package bytes over HTTP/1.1, with Hummingbird 2.
///
/// - `GET /catalog.json`: the catalog exactly as published, with its SHA-256 as ETag.
/// - `POST /v1/downloads`: a ``DownloadGate`` decision as JSON (200, 400, 403, or 503 with
///   `Retry-After` when the state store does not answer).
/// - `POST /v1/notifications`: App Store Server Notifications v2, through ``NotificationIntake``
///   into the state store (200 once committed; 400, 403; 503 when the store does not answer).
/// - `GET`/`HEAD /packages/NAME`: a package, streamed from its open file in bounded chunks, with
///   single byte ranges (206/416), `If-Range`, `If-None-Match`, ETag = its SHA-256.
/// - `GET /healthz`.
///
/// Its only state is the store of notifications (``EntitlementStore``): instances with the same
/// URL key, catalog and store answer the same.
package struct ContentServer: Sendable {
  /// What it serves and how.
  package let configuration: ServeConfiguration
  /// The gate, over the store read at startup.
  package let gate: DownloadGate
  /// Where App Store notifications go.
  package let intake: NotificationIntake
  /// The state store, opened by the caller; its background work runs with the server.
  let state: any EntitlementStore
  let logger: Logger
  /// What `/metrics` shows (``ServeMetrics``).
  package let metrics: ServeMetrics

  /// A server over a catalog and packages already read and verified; nothing listens yet.
  package init(
    configuration: ServeConfiguration, content: LiveContent, state: any EntitlementStore, logger: Logger,
    metrics: ServeMetrics = ServeMetrics()
  ) {
    self.configuration = configuration
    gate = DownloadGate(
      content: content, verifier: configuration.verifier, state: state, signer: configuration.signer,
      urlLifetime: configuration.urlLifetime, openProducts: configuration.openProducts)
    intake = NotificationIntake(
      verifier: NotificationVerifier(transactions: configuration.verifier, appAppleID: configuration.appAppleID),
      state: state)
    self.state = state
    self.logger = logger
    self.metrics = metrics
    // The expiry /metrics counts down to: the catalog's at start, then each reloaded one's.
    metrics.setCatalogExpiry(content.current.expiry)
    content.onSwap { store in metrics.setCatalogExpiry(store.expiry) }
  }

  /// Runs until SIGTERM or SIGINT (then stops accepting, lets requests in progress finish for up
  /// to `shutdownGrace` seconds, and returns). `onListening` receives the bound port, and
  /// `onMetricsListening` the metrics listener's when there is one.
  package func run(
    shutdownGrace: TimeInterval = 10, onListening: @escaping @Sendable (Int) -> Void = { _ in },
    onMetricsListening: @escaping @Sendable (Int) -> Void = { _ in }
  ) async throws {
    let limits = configuration.limits
    let clients = ClientConnections(limit: limits.maximumConnectionsPerClient, metrics: metrics, logger: logger)
    let metrics = self.metrics
    let app = Application(
      router: makeRouter(),
      server: .http1(
        configuration: .init(
          additionalChannelHandlers: [
            ClientConnectionLimiter(clients: clients),
            FirstRequestTimeout(
              timeout: .milliseconds(Int64(min(limits.firstRequestTimeout, limits.idleTimeout) * 1000)),
              metrics: metrics),
            IdleStateHandler(writeTimeout: .milliseconds(Int64(limits.stalledWriteTimeout * 1000))),
            StalledClientCloser(),
          ],
          idleTimeout: .milliseconds(Int64(limits.idleTimeout * 1000)),
          httpDecoderConfiguration: .init(
            maxHeaderFieldSize: limits.maximumHeaderSize, maxHeaderListSize: limits.maximumHeaderSize,
            maxHeaderFieldCount: limits.maximumHeaderCount))),
      configuration: .init(
        address: .hostname(configuration.host, port: configuration.port), serverName: nil,
        availableConnectionsDelegate: MaximumAvailableConnections(limits.maximumConnections)),
      onServerRunning: { channel in onListening(channel.localAddress?.port ?? 0) },
      logger: logger)
    // The store's background work (a connection pool) runs beside the server. It comes first:
    // a group shuts down in reverse order, so the store closes after the last request is done.
    // The watcher reloads the catalog on SIGHUP and when its files change.
    let watcher = ContentWatcher(
      content: gate.content, interval: .milliseconds(Int64(configuration.reloadInterval * 1000)), logger: logger)
    var groupConfiguration = ServiceGroupConfiguration(
      services: [.init(service: state), .init(service: watcher), .init(service: app)]
        + (configuration.metricsAddress.map { address in
          [
            .init(
              service: metrics.application(
                host: address.host, port: address.port, logger: logger, onListening: onMetricsListening))
          ]
        } ?? []),
      gracefulShutdownSignals: [.sigterm, .sigint], logger: logger)
    groupConfiguration.maximumGracefulShutdownDuration = Duration.milliseconds(Int64(shutdownGrace * 1000))
    groupConfiguration.maximumCancellationDuration = Duration.seconds(5)
    try await ServiceGroup(configuration: groupConfiguration).run()
  }

  /// The routes, behind the request log and the path check.
  func makeRouter() -> Router<ServeContext> {
    let router = Router(context: ServeContext.self)
    router.add(middleware: metrics.middleware(context: ServeContext.self))
    router.add(middleware: RequestLog(logger: logger))
    router.add(middleware: PathCheck())
    let gate = self.gate
    let content = gate.content
    let publicURL = configuration.publicURL
    let limits = configuration.limits

    // 200 while clients accept the catalog (with a warning in the last --expiry-warning), 503
    // once it has expired. Never earlier: a load balancer would pull every instance at once.
    router.get("/healthz") { _, _ in
      let health = content.health()
      var answer: [String: Any] = [
        "status": health.state == .expired ? "expired" : "ok",
        "catalog": [
          "sequence": health.sequence, "expires": health.expires ?? NSNull(),
          "secondsLeft": health.secondsLeft.map { Int64($0) } ?? NSNull(),
        ] as [String: Any],
      ]
      switch health.state {
      case .valid: break
      case .expiring:
        answer["warning"] =
          "the catalog expires at \(health.expires ?? "?"): publish or run pkgtool catalog renew, then reload"
      case .expired:
        answer["warning"] =
          "the catalog expired at \(health.expires ?? "?"); every client refuses it: publish or run pkgtool catalog renew"
      }
      return Self.json(health.state == .expired ? .serviceUnavailable : .ok, answer)
    }

    router.get("/catalog.json") { request, _ in
      let store = content.current
      var headers: HTTPFields = [.contentType: "application/json", .eTag: store.catalogETag]
      headers[.cacheControl] = "no-cache"
      if let match = request.headers[.ifNoneMatch], Self.matches(match, store.catalogETag) {
        return Response(status: .notModified, headers: headers)
      }
      return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: store.catalogBytes)))
    }

    router.post("/v1/downloads") { request, context in
      if let declared = request.headers[.contentLength].flatMap(Int.init), declared > limits.maximumBodySize {
        return Self.json(
          .contentTooLarge, ["error": "body-too-large", "detail": "the body is over \(limits.maximumBodySize) bytes"])
      }
      var request = request
      let body: ByteBuffer
      do { body = try await request.collectBody(upTo: limits.maximumBodySize) } catch {
        return Self.json(
          .contentTooLarge, ["error": "body-too-large", "detail": "the body is over \(limits.maximumBodySize) bytes"])
      }
      do throws(DownloadGate.Refusal) {
        let grant = try await gate.decide(body: Array(buffer: body))
        let base = publicURL ?? Self.origin(of: request)
        var answer: [String: Any] = [
          "url": base + grant.pathAndQuery, "size": grant.size, "sha256": grant.sha256,
          "contentVersion": grant.contentVersion,
        ]
        answer["expires"] = grant.expires.map { Date(timeIntervalSince1970: Double($0)).ISO8601Format() } ?? NSNull()
        return Self.json(.ok, answer)
      } catch let refusal {
        if case .stateUnavailable(let why) = refusal {
          logger.error("POST /v1/downloads: \(why)")
          return Self.unavailable(code: refusal.code, detail: refusal.detail)
        }
        return Self.json(.init(code: refusal.status), ["error": refusal.code, "detail": refusal.detail])
      }
    }

    let intake = self.intake
    router.post("/v1/notifications") { request, context in
      if let declared = request.headers[.contentLength].flatMap(Int.init), declared > limits.maximumNotificationSize {
        return Self.json(
          .contentTooLarge,
          ["error": "body-too-large", "detail": "the body is over \(limits.maximumNotificationSize) bytes"])
      }
      var request = request
      let body: ByteBuffer
      do { body = try await request.collectBody(upTo: limits.maximumNotificationSize) } catch {
        return Self.json(
          .contentTooLarge,
          ["error": "body-too-large", "detail": "the body is over \(limits.maximumNotificationSize) bytes"])
      }
      do throws(NotificationIntake.Refusal) {
        let outcome = try await intake.receive(body: Array(buffer: body))
        let notification = outcome.notification
        metrics.countNotification(type: notification.notificationType, isNew: outcome.isNew)
        let kind = notification.notificationType + (notification.subtype.map { "/" + $0 } ?? "")
        let transaction = notification.transaction?.transactionID.map { " transaction \($0)" } ?? ""
        let effect = Entitlement.accessTypes.contains(notification.notificationType) ? " (changes access)" : ""
        logger.notice(
          "notification \(kind) \(notification.notificationUUID)\(transaction): \(outcome.isNew ? "stored" : "already stored")\(effect)"
        )
        return Self.json(.ok, ["status": outcome.isNew ? "stored" : "duplicate"])
      } catch let refusal {
        if case .stateUnavailable(let why) = refusal {
          logger.error("POST /v1/notifications: \(why)")
          return Self.unavailable(code: refusal.code, detail: refusal.detail)
        }
        // The detail may quote what the sender wrote before any signature was checked: escaped
        // (one line, no control characters) and capped, so a sender cannot forge log lines.
        logger.warning("notification refused: \(refusal.code): \(Self.loggable(refusal.detail))")
        return Self.json(.init(code: refusal.status), ["error": refusal.code, "detail": refusal.detail])
      }
    }

    let signer = gate.signer
    let open = gate.openProducts
    let chunk = limits.chunkSize
    let servePackage: @Sendable (Request, ServeContext) async throws -> Response = { request, context in
      let name = String(request.uri.path.dropFirst("/packages/".count)).removingPercentEncoding ?? ""
      guard let package = content.current.packages[name] else {
        return Self.json(.notFound, ["error": "not-found", "detail": "no package is served under this name"])
      }
      if !open.contains(package.productIdentifier) {
        let query = request.uri.queryParameters
        let check = signer.check(
          path: ContentStore.servedPath(of: name), expires: query["expires"].map(String.init),
          signature: query["signature"].map(String.init))
        switch check {
        case .valid: break
        case .malformed:
          return Self.json(.forbidden, ["error": "unsigned-url", "detail": "this URL needs 'expires' and 'signature'"])
        case .badSignature:
          return Self.json(.forbidden, ["error": "bad-url-signature", "detail": "the URL's signature is not valid"])
        case .expired:
          return Self.json(.forbidden, ["error": "expired-url", "detail": "the URL has expired; ask for a new one"])
        }
      }
      return Self.packageResponse(package.file, request: request, chunkSize: chunk, channel: context.channel)
    }
    router.get("/packages/:name", use: servePackage)
    router.head("/packages/:name", use: servePackage)

    // Background Assets packs (--asset-packs): the download manifest, and each pack behind HTTP
    // Basic authentication, whose password is the StoreKit signed transaction.
    router.get("/download-manifest.json") { request, _ in
      guard let packs = content.current.assetPacks, let bytes = packs.manifestBytes, let etag = packs.manifestETag
      else {
        return Self.json(.notFound, ["error": "not-found", "detail": "this server serves no download manifest"])
      }
      var headers: HTTPFields = [.contentType: "application/json", .eTag: etag, .cacheControl: "no-cache"]
      if let match = request.headers[.ifNoneMatch], Self.matches(match, etag) {
        return Response(status: .notModified, headers: headers)
      }
      headers[.contentLength] = String(bytes.count)
      return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: bytes)))
    }
    let servePack: @Sendable (Request, ServeContext) async throws -> Response = { request, context in
      let id = String(request.uri.path.dropFirst("/packs/".count)).removingPercentEncoding ?? ""
      guard let pack = content.current.assetPacks?.packs[id] else {
        return Self.json(.notFound, ["error": "not-found", "detail": "no asset pack is served under this ID"])
      }
      if !pack.products.isEmpty {
        let password: String
        switch PackCredential(request.headers[.authorization]) {
        case .missing:
          return Self.challenge(
            "missing-credential", "this pack needs a credential: user storekit, password the signed transaction")
        case .malformed(let why):
          return Self.challenge("bad-credential", why)
        case .transaction(let jws):
          password = jws
        }
        do throws(DownloadGate.Refusal) {
          _ = try await gate.prove(password, anyOf: pack.products)
        } catch let refusal {
          if case .stateUnavailable(let why) = refusal {
            logger.error("\(request.method.rawValue) /packs/\(id): \(why)")
            return Self.unavailable(code: refusal.code, detail: refusal.detail)
          }
          return Self.json(.init(code: refusal.status), ["error": refusal.code, "detail": refusal.detail])
        }
      }
      return Self.packageResponse(pack.file, request: request, chunkSize: chunk, channel: context.channel)
    }
    router.get("/packs/:id", use: servePack)
    router.head("/packs/:id", use: servePack)
    return router
  }

  /// 401 with the Basic challenge a URLSession delegate (the downloader extension) answers.
  static func challenge(_ code: String, _ detail: String) -> Response {
    var response = json(.unauthorized, ["error": code, "detail": detail])
    response.headers[.wwwAuthenticate] = #"Basic realm="asset packs", charset="UTF-8""#
    return response
  }

  /// The headers and, for GET, the streamed bytes of (part of) a package.
  static func packageResponse(
    _ package: ServedFile, request: Request, chunkSize: Int, channel: any Channel
  ) -> Response {
    // Written to in place since it was hashed (cp over it): its bytes are no longer the ones its
    // ETag names. Never served under it; the watcher reloads, and the client tries again.
    guard package.isUnchanged() else {
      var response = json(
        .serviceUnavailable,
        ["error": "package-changed", "detail": "the package changed on the server; try again shortly"])
      response.headers[.retryAfter] = "5"
      return response
    }
    let etag = "\"\(package.sha256)\""
    var headers: HTTPFields = [.contentType: "application/octet-stream", .eTag: etag, .acceptRanges: "bytes"]
    if let match = request.headers[.ifNoneMatch], matches(match, etag) {
      return Response(status: .notModified, headers: headers)
    }
    // If-Range with another validator (an ETag of other bytes, or a date): the whole file.
    var rangeHeader = request.headers[.range]
    if let ifRange = request.headers[.ifRange], ifRange.trimmingCharacters(in: .whitespaces) != etag {
      rangeHeader = nil
    }
    let status: HTTPResponse.Status
    let range: ClosedRange<Int64>?
    switch ByteRange(header: rangeHeader, size: package.size) {
    case .whole:
      status = .ok
      range = package.size > 0 ? 0...(package.size - 1) : nil
    case .part(let part):
      status = .partialContent
      range = part
      headers[.contentRange] = "bytes \(part.lowerBound)-\(part.upperBound)/\(package.size)"
    case .unsatisfiable:
      headers[.contentRange] = "bytes */\(package.size)"
      headers[.contentLength] = "0"
      return Response(status: .rangeNotSatisfiable, headers: headers)
    }
    let length = range.map { $0.upperBound - $0.lowerBound + 1 } ?? 0
    headers[.contentLength] = String(length)
    guard request.method == .get, let range else {
      return Response(status: status, headers: headers)
    }
    let file = package.file
    let body = ResponseBody(contentLength: Int(length)) { writer in
      var offset = range.lowerBound
      let end = range.upperBound + 1
      while offset < end {
        let count = Int(min(Int64(chunkSize), end - offset))
        let at = offset
        // Off the event loops, one chunk at a time: here when the bytes are in the page cache
        // (a read that cannot wait for the disk), else on the thread pool, where blocking is
        // allowed. Each hop between threads costs a wake-up: with one client, they, not the
        // copies, were most of the server's time.
        var buffer = ByteBufferAllocator().buffer(capacity: count)
        _ = buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: count) { pointer in
          file.readIfCached(into: UnsafeMutableRawBufferPointer(rebasing: pointer.prefix(count)), at: UInt64(at)) ?? 0
        }
        if buffer.readableBytes == 0 {
          buffer = try await NIOThreadPool.singleton.runIfActive { () throws -> ByteBuffer in
            var buffer = ByteBufferAllocator().buffer(capacity: count)
            _ = try buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: count) { pointer in
              try file.read(into: UnsafeMutableRawBufferPointer(rebasing: pointer.prefix(count)), at: UInt64(at))
            }
            return buffer
          }
        }
        // A write in place during the download: the client must not get a whole-looking body of
        // mixed bytes. The connection is cut; a resume with If-Range then gets the new ETag.
        guard buffer.readableBytes > 0, package.isUnchanged() else { throw PackageChanged() }
        offset += Int64(buffer.readableBytes)
        try await writer.write(buffer)
        // The writer only hands the chunk to the event loop and returns; it learns that the
        // socket is full (the channel's high-water mark) when the event loop has run that write.
        // A busy event loop runs it late, and in the meantime the writer took chunk after chunk:
        // 64 clients at 2 MB/s held 1.5 GB. Waiting here until the event loop has run it means
        // the next write waits while the socket is full, so a download holds at most about three
        // chunks: the one in the channel past the mark, the one waiting, the one being read.
        try await channel.eventLoop.submit {}.get()
      }
      try await writer.finish(nil)
    }
    return Response(status: status, headers: headers, body: body)
  }

  struct PackageChanged: Error {}

  /// `If-None-Match`: `*` or a list of entity tags, weak or strong.
  static func matches(_ header: String, _ etag: String) -> Bool {
    header.split(separator: ",").contains { item in
      let tag = item.trimmingCharacters(in: .whitespaces)
      return tag == "*" || tag == etag || tag == "W/" + etag
    }
  }

  /// `http://HOST` from the request's Host header, when it is a plain host[:port]; used only when
  /// no --public-url is given.
  static func origin(of request: Request) -> String {
    let host = request.head.authority ?? "localhost"
    let plain = host.utf8.allSatisfy { byte in
      switch byte {
      case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
        UInt8(ascii: "0")...UInt8(ascii: "9"),
        UInt8(ascii: "."), UInt8(ascii: "-"), UInt8(ascii: ":"), UInt8(ascii: "["), UInt8(ascii: "]"):
        return true
      default: return false
      }
    }
    return "http://" + (plain && !host.isEmpty ? host : "localhost")
  }

  /// `text` as one log line: control characters escaped, at most 300 characters.
  static func loggable(_ text: String) -> String {
    let escaped = text.debugEscapedForTerminal
    return escaped.count > 300 ? String(escaped.prefix(300)) + "…" : escaped
  }

  /// 503 with `Retry-After`: the store did not answer; the client (or Apple) tries again.
  static func unavailable(code: String, detail: String) -> Response {
    var response = json(.serviceUnavailable, ["error": code, "detail": detail])
    response.headers[.retryAfter] = "5"
    return response
  }

  /// A JSON answer.
  static func json(_ status: HTTPResponse.Status, _ object: [String: Any]) -> Response {
    let data =
      (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])) ?? Data()
    var headers: HTTPFields = [.contentType: "application/json"]
    headers[.refusalCode] = object["error"] as? String
    return Response(
      status: status, headers: headers,
      body: .init(byteBuffer: ByteBuffer(bytes: Array(data) + [UInt8(ascii: "\n")])))
  }
}

/// Hummingbird's basic request context and the connection's channel.
struct ServeContext: RequestContext {
  var coreContext: CoreRequestContextStorage
  /// The connection.
  let channel: any Channel

  init(source: ApplicationRequestContextSource) {
    coreContext = .init(source: source)
    channel = source.channel
  }
}

/// One log line per request: method, path without its query (so never a URL signature), status,
/// length and time. Request bodies (transactions) are never logged.
struct RequestLog: RouterMiddleware {
  typealias Context = ServeContext
  let logger: Logger

  func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws
    -> Response
  {
    let start = ContinuousClock.now
    let path = request.uri.path
    let method = request.method.rawValue
    do {
      let response = try await next(request, context)
      logger.info(
        "\(method) \(path) \(response.status.code) \(response.headers[.contentLength] ?? "-") \(Self.milliseconds(since: start))ms"
      )
      return response
    } catch {
      let status = (error as? HTTPResponseError)?.status.code ?? 500
      logger.info("\(method) \(path) \(status) - \(Self.milliseconds(since: start))ms")
      throw error
    }
  }

  static func milliseconds(since start: ContinuousClock.Instant) -> Int64 {
    let elapsed = ContinuousClock.now - start
    return elapsed.components.seconds * 1000 + elapsed.components.attoseconds / 1_000_000_000_000_000
  }
}

/// Refuses, before routing, a path that another reader could resolve differently: `.` or `..`
/// segments (plain or percent-encoded), encoded slashes or backslashes, NUL, and bad
/// percent-encoding.
struct PathCheck: RouterMiddleware {
  typealias Context = ServeContext

  func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws
    -> Response
  {
    guard Self.isPlain(request.uri.path) else {
      return ContentServer.json(
        .badRequest, ["error": "bad-path", "detail": "the path has '..', '.', or encoded separators"])
    }
    return try await next(request, context)
  }

  static func isPlain(_ path: String) -> Bool {
    guard path.hasPrefix("/"), !path.contains("\\") else { return false }
    let lower = path.lowercased()
    for encoded in ["%2f", "%5c", "%00"] where lower.contains(encoded) { return false }
    for segment in path.split(separator: "/", omittingEmptySubsequences: false).dropFirst() {
      guard let decoded = String(segment).removingPercentEncoding else { return false }
      if decoded == "." || decoded == ".." { return false }
      if decoded.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) { return false }
    }
    return true
  }
}

/// Closes a connection whose client has taken none of the response for the write timeout of the
/// `IdleStateHandler` in front of it (a client that stopped reading, or that never sends).
final class StalledClientCloser: ChannelInboundHandler, RemovableChannelHandler, Sendable {
  typealias InboundIn = NIOAny

  func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
    if let idle = event as? IdleStateHandler.IdleStateEvent, idle == .write {
      context.close(promise: nil)
      return
    }
    context.fireUserInboundEventTriggered(event)
  }
}
