import Foundation
import HostedContent
import Logging
import NIOConcurrencyHelpers
import ServiceLifecycle
import SystemIO
import UnixSignals

/// The content the server answers from now: one verified ``ContentStore``, swapped whole when a
/// reload verifies. A request takes ``current`` once and answers from it; a download in flight
/// keeps the store (and so the open file) it started with.
package final class LiveContent: Sendable {
  /// Where the catalog and the packages are, and who must have signed the catalog.
  package let catalogPath: String
  package let directory: String
  package let authority: CatalogAuthority
  /// The asset packs served beside the catalog's packages, if any.
  package let assetPacks: AssetPackConfiguration?
  /// How many seconds before expiry `/healthz` warns.
  package let expiryWarning: TimeInterval
  private let box: NIOLockedValueBox<ContentStore>
  private let swapped: NIOLockedValueBox<[@Sendable (ContentStore) -> Void]>
  /// Held for a whole reload: SIGHUP's and the watcher's never interleave, so an older read
  /// cannot be swapped in after a newer one.
  private let reloading = NIOLock()

  /// Content over a store already read and verified (the start's).
  package init(
    _ store: ContentStore, catalogPath: String, directory: String, authority: CatalogAuthority,
    assetPacks: AssetPackConfiguration? = nil, expiryWarning: TimeInterval = 7 * 86_400
  ) {
    self.assetPacks = assetPacks
    box = NIOLockedValueBox(store)
    swapped = NIOLockedValueBox([])
    self.catalogPath = catalogPath
    self.directory = directory
    self.authority = authority
    self.expiryWarning = expiryWarning
  }

  /// The store in use.
  package var current: ContentStore { box.withLockedValue { $0 } }

  /// Calls `observer` with every store swapped in from now on (metrics, logs).
  package func onSwap(_ observer: @escaping @Sendable (ContentStore) -> Void) {
    swapped.withLockedValue { $0.append(observer) }
  }

  /// Reads and verifies everything again, and swaps the result in when it verifies. On failure
  /// the store in use stays and the error (one line, naming the file and the reason) is thrown.
  @discardableResult
  package func reload(now: Date = Date()) throws -> ContentStore {
    reloading.lock()
    defer { reloading.unlock() }
    let previous = current
    let store = try ContentStore(
      catalogPath: catalogPath, directory: directory, authority: authority, assetPacks: assetPacks, now: now,
      reusing: previous)
    // An older catalog put back (a replay, or a copy restored by hand) would bring withdrawn
    // versions back; clients refuse it, and so does the gate.
    guard store.catalog.sequence > previous.catalog.sequence || store.catalogBytes == previous.catalogBytes else {
      throw CatalogError.replayed(
        "the catalog's sequence \(store.catalog.sequence) is not above the \(previous.catalog.sequence) served now: clients would refuse it as a replay"
      )
    }
    box.withLockedValue { $0 = store }
    for observer in swapped.withLockedValue({ $0 }) { observer(store) }
    return store
  }

  /// The paths whose change starts a reload, with their stamps: the catalog, the packages folder,
  /// every package listed, and the root files when the catalog is trusted under roots.
  package func watchedStamps() -> [String: [Int64]?] {
    let store = current
    var stamps = store.watchedStamps(catalogPath: catalogPath, directory: directory)
    if let assetPacks, let packs = store.assetPacks { stamps.merge(packs.watchedStamps(assetPacks)) { a, _ in a } }
    if case .roots(let arguments) = authority {
      for argument in arguments { stamps[argument] = Paths.changeStamp(of: argument) }
      for path in (try? RootFile.paths(arguments)) ?? [] { stamps[path] = Paths.changeStamp(of: path) }
    }
    return stamps
  }

  /// The catalog's health at `now`, as `/healthz` reports it.
  package func health(now: Date = Date()) -> Health {
    let store = current
    guard let expiry = store.expiry else {
      return Health(sequence: store.catalog.sequence, expires: nil, secondsLeft: nil, state: .valid)
    }
    let left = expiry.timeIntervalSince(now)
    let state: Health.State = left <= 0 ? .expired : left <= expiryWarning ? .expiring : .valid
    return Health(
      sequence: store.catalog.sequence, expires: store.catalog.expires, secondsLeft: left.rounded(.down), state: state)
  }

  /// The catalog's sequence and expiry, and whether clients still accept it.
  package struct Health: Sendable, Equatable {
    /// The catalog's sequence.
    package var sequence: Int64
    /// Its `expires`, as signed (nil for a catalog without one).
    package var expires: String?
    /// Seconds until it expires (negative once it has).
    package var secondsLeft: Double?
    /// Valid, within the warning time, or expired.
    package var state: State

    /// Where the catalog stands.
    package enum State: String, Sendable {
      case valid, expiring, expired
    }
  }
}

/// Reloads ``LiveContent`` on SIGHUP and when a watched file changes (polled every `interval`;
/// a change is acted on once two polls agree, so a file being copied in is not read half-way),
/// and logs when the catalog nears or passes its expiry. Runs in the server's service group.
package struct ContentWatcher: Service {
  let content: LiveContent
  let interval: Duration
  let logger: Logger

  /// A watcher of `content`, polling every `interval`.
  package init(content: LiveContent, interval: Duration = .seconds(2), logger: Logger) {
    self.content = content
    self.interval = interval
    self.logger = logger
  }

  package func run() async throws {
    let signals = await UnixSignalsSequence(trapping: .sighup)
    // Both loops end when the service group shuts down: gracefully (SIGTERM) or cancelled.
    await cancelWhenGracefulShutdown {
      await withTaskGroup(of: Void.self) { group in
        group.addTask {
          for await _ in signals {
            logger.notice("SIGHUP: reading the catalog and packages again")
            reload(because: "SIGHUP")
          }
        }
        group.addTask { await poll() }
      }
    }
  }

  /// Polls the watched stamps and the expiry.
  private func poll() async {
    var seen = content.watchedStamps()
    var pending: [String: [Int64]?]?
    var lastState = content.health().state
    while !Task.isCancelled {
      do { try await Task.sleep(for: interval) } catch { return }
      let now = content.watchedStamps()
      if now != seen {
        if pending == now {
          let changed = now.keys.filter { now[$0] != seen[$0] }.sorted()
          pending = nil
          reload(because: "changed: \(changed.map(Paths.name(of:)).joined(separator: ", "))")
          // What was on disk before the reload read it: a change made while it read is seen at
          // the next poll. (The paths watched may differ now; the next poll then reads again,
          // taking over every unchanged file without hashing it.)
          seen = now
        } else {
          pending = now
        }
      } else {
        pending = nil
      }
      let state = content.health().state
      if state != lastState {
        log(content.health())
        lastState = state
      }
    }
  }

  private func reload(because reason: String) {
    do {
      let store = try content.reload()
      logger.notice("\(reason): \(Self.describe(store))")
    } catch {
      logger.error(
        "\(reason): the new catalog or packages are not served, the previous ones stay (\(Self.describe(content.current))): \(error)"
      )
    }
    log(content.health())
  }

  private func log(_ health: LiveContent.Health) {
    switch health.state {
    case .valid: break
    case .expiring:
      logger.warning(
        "the catalog (sequence \(health.sequence)) expires at \(health.expires ?? "?"); clients refuse it after that: publish or run pkgtool catalog renew"
      )
    case .expired:
      logger.error(
        "the catalog (sequence \(health.sequence)) expired at \(health.expires ?? "?"); every client refuses it and /healthz answers 503: publish or run pkgtool catalog renew"
      )
    }
  }

  /// `catalog sequence N, expires T, P packages`, for the log.
  package static func describe(_ store: ContentStore) -> String {
    let count = store.packages.count
    var text =
      "catalog sequence \(store.catalog.sequence), expires \(store.catalog.expires ?? "never (no expiry)"), \(count) package\(count == 1 ? "" : "s")"
    if let packs = store.assetPacks {
      text += ", \(packs.packs.count) asset pack\(packs.packs.count == 1 ? "" : "s")"
    }
    return text
  }
}
