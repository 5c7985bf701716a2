import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdCore
import Logging
import NIOConcurrencyHelpers
import NIOCore
import Prometheus
import ServiceLifecycle

/// What `pkgtool serve` counts, in Prometheus' text format (`GET /metrics` on `--metrics-listen`).
///
/// Each server has a registry of its own (not swift-metrics' process-wide `MetricsSystem`), so
/// several servers in one process (the tests) count apart. Every name starts `pkgtool_serve_`:
///
/// - `requests_total{route, status, error}`: answers by route pattern (`/packages/{name}`,
///   `/v1/downloads`, …; `unmatched` for paths no route takes), HTTP status, and the `error` code of
///   a JSON refusal (`revoked`, `unsigned-url`, `state-unavailable`, …; empty when none).
/// - `response_bytes_total{route}`: body bytes handed to the connections.
/// - `downloads_in_flight`: package and pack bodies being sent now.
/// - `notifications_total{type, outcome}`: App Store notifications taken, by `notificationType`,
///   `stored` or `duplicate`.
/// - `connections_open`, `connections_refused_total{reason}`: connections, and those closed at
///   accept because their client was over `--max-client-connections`.
/// - `connections_timed_out_total{reason}`: connections closed because they sent no request
///   within `--first-request-timeout`.
/// - `catalog_expires_in_seconds`: seconds until the served catalog's `expires` (negative once
///   past), computed at each scrape; absent when the catalog has no expiry.
package final class ServeMetrics: Sendable {
  /// The registry `/metrics` renders.
  package let registry = PrometheusCollectorRegistry()
  let downloadsInFlight: Gauge
  let connectionsOpen: Gauge
  /// The catalog's expiry and its gauge while it has one.
  private let expiry = NIOLockedValueBox<(date: Date, gauge: Gauge)?>(nil)

  static let prefix = "pkgtool_serve"

  /// An empty registry with the gauges that always exist.
  package init() {
    downloadsInFlight = registry.makeGauge(
      descriptor: Self.name("downloads_in_flight", help: "Package and pack bodies being sent now."))
    connectionsOpen = registry.makeGauge(
      descriptor: Self.name("connections_open", help: "Connections open on the main listener."))
  }

  static func name(_ name: String, unit: String = "", help: String) -> MetricNameDescriptor {
    MetricNameDescriptor(namespace: prefix, metricName: name, unitName: unit, helpText: help)
  }

  /// Counts one answer; `route` is the route's pattern, never a request's own path.
  package func countRequest(route: String, status: Int, error: String?) {
    registry.makeCounter(
      descriptor: Self.name("requests", unit: "total", help: "Answers by route, HTTP status and refusal code."),
      labels: [("route", route), ("status", String(status)), ("error", error ?? "")]
    ).increment()
  }

  /// The counter of body bytes sent on `route`.
  func responseBytes(route: String) -> Counter {
    registry.makeCounter(
      descriptor: Self.name("response_bytes", unit: "total", help: "Response body bytes sent, by route."),
      labels: [("route", route)])
  }

  /// Counts an App Store notification that passed its checks.
  package func countNotification(type: String, isNew: Bool) {
    registry.makeCounter(
      descriptor: Self.name("notifications", unit: "total", help: "App Store notifications taken, by type."),
      labels: [("type", type), ("outcome", isNew ? "stored" : "duplicate")]
    ).increment()
  }

  /// Counts a connection closed at accept: `reason` is `per-client-limit`.
  func countRefusedConnection(reason: String) {
    registry.makeCounter(
      descriptor: Self.name(
        "connections_refused", unit: "total", help: "Connections closed at accept, by reason."),
      labels: [("reason", reason)]
    ).increment()
  }

  /// Counts a connection closed by a timeout: `reason` is `first-request`.
  func countTimedOutConnection(reason: String) {
    registry.makeCounter(
      descriptor: Self.name(
        "connections_timed_out", unit: "total", help: "Connections closed by a timeout, by reason."),
      labels: [("reason", reason)]
    ).increment()
  }

  /// The served catalog's expiry, or nil when it has none. Call it at start and whenever the
  /// catalog is reloaded; `/metrics` then shows the seconds left until `date`.
  package func setCatalogExpiry(_ date: Date?) {
    expiry.withLockedValue { current in
      switch (current, date) {
      case (nil, nil): break
      case (let some?, nil):
        registry.unregisterGauge(some.gauge)
        current = nil
      case (let some?, let date?):
        current = (date, some.gauge)
      case (nil, let date?):
        let gauge = registry.makeGauge(
          descriptor: Self.name(
            "catalog_expires_in", unit: "seconds",
            help: "Seconds until the served catalog expires (negative once past); absent when it never does."))
        current = (date, gauge)
      }
    }
  }

  /// The exposition text, with the time-dependent gauges brought up to `now`.
  package func render(now: Date = Date()) -> [UInt8] {
    expiry.withLockedValue { current in
      if let current { current.gauge.set(to: current.date.timeIntervalSince(now).rounded(.down)) }
    }
    return registry.emitToBuffer()
  }

  /// Counts the answers and the bytes of the routes behind it. The outermost middleware.
  func middleware<Context: RequestContext>(context: Context.Type = Context.self) -> RequestMetrics<Context> {
    RequestMetrics(metrics: self)
  }

  /// The metrics listener: `GET /metrics` only, on an address of its own (not the public port).
  func application(host: String, port: Int, logger: Logger, onListening: @escaping @Sendable (Int) -> Void)
    -> some Service
  {
    let router = Router()
    router.get("/metrics") { _, _ in
      Response(
        status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
        body: .init(byteBuffer: ByteBuffer(bytes: self.render())))
    }
    return Application(
      router: router,
      configuration: .init(
        address: .hostname(host, port: port), serverName: nil,
        availableConnectionsDelegate: MaximumAvailableConnections(16)),
      onServerRunning: { channel in onListening(channel.localAddress?.port ?? 0) },
      logger: logger)
  }
}

extension HTTPField.Name {
  /// Set by ``ContentServer/json(_:_:)`` on a refusal: its `error` code, for ``RequestMetrics``,
  /// which removes it before the answer leaves.
  static let refusalCode = Self("X-Pkgtool-Refusal")!
}

/// Counts every answer by route, status and refusal code, and the body bytes sent; a package or
/// pack body counts as a download in flight while it is being written.
struct RequestMetrics<Context: RequestContext>: RouterMiddleware {
  let metrics: ServeMetrics

  func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws
    -> Response
  {
    var response: Response
    do {
      response = try await next(request, context)
    } catch {
      let status = (error as? any HTTPResponseError)?.status.code ?? 500
      metrics.countRequest(route: Self.route(context), status: status, error: nil)
      throw error
    }
    let route = Self.route(context)
    let refusal = response.headers[.refusalCode]
    response.headers[.refusalCode] = nil
    metrics.countRequest(route: route, status: response.status.code, error: refusal)
    let length = response.body.contentLength
    guard request.method != .head, length != 0 else { return response }
    let bytes = metrics.responseBytes(route: route)
    let inFlight = route.hasPrefix("/packages/") || route.hasPrefix("/packs/") ? metrics.downloadsInFlight : nil
    let body = response.body
    response.body = ResponseBody(contentLength: length) { writer in
      inFlight?.increment()
      defer { inFlight?.decrement() }
      try await body.write(CountingWriter(parent: writer, counter: bytes))
    }
    return response
  }

  /// The route's pattern as the router matched it; `unmatched` when none did.
  static func route(_ context: Context) -> String {
    guard let path = context.endpointPath, path != "NotFound" else { return "unmatched" }
    return path
  }
}

/// A body writer that counts the bytes it passes on.
struct CountingWriter: ResponseBodyWriter {
  var parent: any ResponseBodyWriter
  let counter: Counter

  mutating func write(_ buffer: ByteBuffer) async throws {
    counter.increment(by: Int64(buffer.readableBytes))
    try await parent.write(buffer)
  }

  consuming func finish(_ trailingHeaders: HTTPFields?) async throws {
    try await parent.finish(trailingHeaders)
  }
}
