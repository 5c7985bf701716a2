import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTPTypes

/// Open connections per client, so that one client cannot take every connection the server
/// allows (`--max-connections`) and lock everyone else out.
///
/// A client is its IPv4 address, or the /64 prefix of its IPv6 address: a /64 is the smallest
/// block a network hands one site or host (SLAAC), so one machine can open connections from
/// 2^64 addresses of it but rarely from two /64s. An IPv4-mapped IPv6 address counts as its IPv4
/// address. Connections over a Unix socket are not limited. Behind a proxy, every connection
/// comes from the proxy's own address: there the proxy limits clients, and
/// `--max-client-connections 0` turns this off (docs/serve.md).
package final class ClientConnections: Sendable {
  /// Connections one client may hold open at once; 0: no limit.
  let limit: Int
  let metrics: ServeMetrics
  let logger: Logger
  private let open = NIOLockedValueBox<[Client: Entry]>([:])

  struct Entry {
    var count: Int
    /// Whether a refusal was logged since the client last went under the limit: one line per flood.
    var logged: Bool
  }

  init(limit: Int, metrics: ServeMetrics, logger: Logger) {
    self.limit = limit
    self.metrics = metrics
    self.logger = logger
  }

  /// Counts a new connection from `client`; false (and nothing counted) when the client already
  /// holds the limit.
  func admit(_ client: Client?) -> Bool {
    guard let client else {
      metrics.connectionsOpen.increment()
      return true
    }
    let (admitted, log) = open.withLockedValue { open -> (Bool, Bool) in
      var entry = open[client] ?? Entry(count: 0, logged: false)
      if limit > 0 && entry.count >= limit {
        let log = !entry.logged
        entry.logged = true
        open[client] = entry
        return (false, log)
      }
      entry.count += 1
      open[client] = entry
      return (true, false)
    }
    if admitted {
      metrics.connectionsOpen.increment()
    } else {
      metrics.countRefusedConnection(reason: "per-client-limit")
      if log {
        logger.warning(
          "client \(client) holds \(limit) connections (--max-client-connections): closing its new ones until it closes some"
        )
      }
    }
    return admitted
  }

  /// Counts a connection ``admit(_:)`` took as closed.
  func close(_ client: Client?) {
    metrics.connectionsOpen.decrement()
    guard let client else { return }
    open.withLockedValue { open in
      guard var entry = open[client] else { return }
      entry.count -= 1
      if entry.count <= 0 {
        open[client] = nil
      } else {
        if entry.count < limit { entry.logged = false }
        open[client] = entry
      }
    }
  }

  /// A client: an IPv4 address, or an IPv6 /64 prefix.
  struct Client: Hashable, Sendable, CustomStringConvertible {
    /// 4 bytes (IPv4) or 8 (the IPv6 prefix).
    let bytes: [UInt8]

    /// The client of `address`; nil for a Unix socket or no address.
    init?(_ address: SocketAddress?) {
      switch address {
      case .v4(let v4):
        bytes = withUnsafeBytes(of: v4.address.sin_addr) { Array($0) }
      case .v6(let v6):
        let all = withUnsafeBytes(of: v6.address.sin6_addr) { Array($0) }
        if all[0..<10].allSatisfy({ $0 == 0 }) && all[10] == 0xFF && all[11] == 0xFF {
          bytes = Array(all[12..<16])
        } else {
          bytes = Array(all[0..<8])
        }
      default:
        return nil
      }
    }

    var description: String {
      if bytes.count == 4 { return bytes.map(String.init).joined(separator: ".") }
      let groups = stride(from: 0, to: 8, by: 2).map {
        String(UInt16(bytes[$0]) << 8 | UInt16(bytes[$0 + 1]), radix: 16)
      }
      return groups.joined(separator: ":") + "::/64"
    }
  }
}

/// Admits or closes each new connection by ``ClientConnections``: over its client's limit, the
/// connection is closed before anything is read from it. One per connection.
final class ClientConnectionLimiter: ChannelInboundHandler, RemovableChannelHandler {
  typealias InboundIn = NIOAny
  let clients: ClientConnections
  private var decided = false

  init(clients: ClientConnections) { self.clients = clients }

  func handlerAdded(context: ChannelHandlerContext) {
    // Added while the pipeline is set up: decide once it is, never in the middle of it.
    if context.channel.isActive {
      let bound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
      context.eventLoop.execute { bound.value.0.decide(context: bound.value.1) }
    }
  }

  func channelActive(context: ChannelHandlerContext) {
    decide(context: context)
    context.fireChannelActive()
  }

  private func decide(context: ChannelHandlerContext) {
    guard !decided else { return }
    decided = true
    let client = ClientConnections.Client(context.channel.remoteAddress)
    let clients = self.clients
    if clients.admit(client) {
      context.channel.closeFuture.whenComplete { _ in clients.close(client) }
    } else {
      context.close(promise: nil)
    }
  }
}

/// Closes a connection that has not sent a whole request head within `timeout` of opening: a
/// client that connects and sends nothing (or dribbles its first head) holds a connection for
/// this long, not for the keep-alive idle timeout. Once the first head has come, the idle
/// timeout (`--client-timeout`) governs the connection. One per connection, after the HTTP
/// decoder.
final class FirstRequestTimeout: ChannelInboundHandler, RemovableChannelHandler {
  typealias InboundIn = HTTPRequestPart
  let timeout: TimeAmount
  let metrics: ServeMetrics
  private var task: Scheduled<Void>?
  private var started = false
  private var received = false

  init(timeout: TimeAmount, metrics: ServeMetrics) {
    self.timeout = timeout
    self.metrics = metrics
  }

  func handlerAdded(context: ChannelHandlerContext) {
    if context.channel.isActive { start(context: context) }
  }

  func handlerRemoved(context: ChannelHandlerContext) {
    task?.cancel()
    task = nil
  }

  func channelActive(context: ChannelHandlerContext) {
    start(context: context)
    context.fireChannelActive()
  }

  func channelInactive(context: ChannelHandlerContext) {
    task?.cancel()
    task = nil
    context.fireChannelInactive()
  }

  func channelRead(context: ChannelHandlerContext, data: NIOAny) {
    if !received, case .head = unwrapInboundIn(data) {
      received = true
      task?.cancel()
      task = nil
    }
    context.fireChannelRead(data)
  }

  private func start(context: ChannelHandlerContext) {
    guard !started else { return }
    started = true
    let bound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
    let metrics = self.metrics
    task = context.eventLoop.scheduleTask(in: timeout) {
      let (handler, context) = bound.value
      handler.task = nil
      guard !handler.received else { return }
      metrics.countTimedOutConnection(reason: "first-request")
      context.close(promise: nil)
    }
  }
}
