// pkgtool-state-bench: the state store's own cost, in process, for bench/serve.sh. Not a test.
//
//   pkgtool-state-bench --state URL [--writes 2000] [--rounds 3] [--concurrency "1 8"]
//                       [--preload 10000] [--lookups 5000] [--payload-bytes 13000]
//
// 1. record: `rounds` rounds of `writes` new notifications at each concurrency (that many tasks
//    calling `record` at once), timed; records per second per round.
// 2. Preloads, untimed, up to `preload` records in all (other transactions), and 500 looked-up
//    purchases with 3 records each (REFUND, REFUND_REVERSED, DID_RENEW: a refund reversed, so a
//    download is granted), as bench/serve.sh's HTTP part does.
// 3. lookup: `lookups` calls of `records(transactionID:originalTransactionID:types:)`, one at a
//    time, exactly as `POST /v1/downloads` awaits it (Entitlement.accessTypes): half for a
//    purchase with its 3 records, half for one with none (most purchases were never refunded).
//    Each call is timed alone; p50, p99, mean.
//
// The stored JWS (`signed_payload`) is `payload-bytes` long: an App Store notification with its
// two x5c chains (leaf, WWDR intermediate, root, then again inside signedTransactionInfo) is
// about 13 KB, and a lookup reads it back with the rest of the row.
//
// Prints one JSON object on standard output.
import ContentServer
import Foundation
import Logging

struct Options {
  var state = ""
  var writes = 2000
  var rounds = 3
  var concurrency = [1, 8]
  var preload = 10_000
  var lookups = 5000
  var payloadBytes = 13_000

  init(_ arguments: [String]) {
    var rest = arguments[...]
    func value(_ name: String) -> String {
      guard let next = rest.popFirst() else { fail("\(name) needs a value") }
      return next
    }
    func number(_ name: String) -> Int {
      let text = value(name)
      guard let number = Int(text), number >= 0 else { fail("\(name) is not a number: \(text)") }
      return number
    }
    while let argument = rest.popFirst() {
      switch argument {
      case "--state": state = value(argument)
      case "--writes": writes = number(argument)
      case "--rounds": rounds = max(1, number(argument))
      case "--preload": preload = number(argument)
      case "--lookups": lookups = number(argument)
      case "--payload-bytes": payloadBytes = number(argument)
      case "--concurrency":
        concurrency = value(argument).split(separator: " ").compactMap { Int($0) }.filter { $0 > 0 }
      default: fail("unknown option \(argument)")
      }
    }
    if state.isEmpty { fail("--state URL is required") }
  }
}

func fail(_ message: String) -> Never {
  FileHandle.standardError.write(Data("pkgtool-state-bench: \(message)\n".utf8))
  exit(2)
}

/// Makes the records: every UUID and transaction ID distinct, dated in the recent past.
struct RecordFactory: Sendable {
  let payload: String
  let now = Int64(Date().timeIntervalSince1970 * 1000)

  init(payloadBytes: Int) {
    // Base64url-like text, as a JWS is.
    let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)
    var generator = SystemRandomNumberGenerator()
    payload = String(
      decoding: (0..<payloadBytes).map { _ in alphabet[Int(generator.next() % 64)] }, as: UTF8.self)
  }

  func record(type: String, transaction: String, original: String, signedDate: Int64, expires: Int64? = nil)
    -> NotificationRecord
  {
    NotificationRecord(
      notificationUUID: UUID().uuidString, notificationType: type, subtype: nil, signedDate: signedDate,
      environment: "Production", bundleID: "com.example.bench", transactionID: transaction,
      originalTransactionID: original, productID: "com.example.bench.mixed", transactionSignedDate: signedDate - 1000,
      revocationDate: type == "REFUND" ? signedDate : nil, expiresDate: expires, signedPayload: payload,
      receivedAt: now)
  }

  /// The `index`th record of another purchase: REFUND or DID_RENEW, alternately.
  func other(_ prefix: String, _ index: Int) -> NotificationRecord {
    let id = "\(prefix)\(index)"
    return index % 2 == 0
      ? record(type: "REFUND", transaction: id, original: id, signedDate: now - 60_000)
      : record(type: "DID_RENEW", transaction: id, original: id, signedDate: now - 60_000, expires: now + 86_400_000)
  }
}

func seconds(_ duration: Duration) -> Double {
  Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
}

/// Calls `record` for `count` records, `concurrency` at a time; the wall time.
func write(
  _ store: any EntitlementStore, count: Int, concurrency: Int, make: @escaping @Sendable (Int) -> NotificationRecord
)
  async throws -> Duration
{
  let clock = ContinuousClock()
  let start = clock.now
  try await withThrowingTaskGroup(of: Void.self) { group in
    var next = 0
    func add() {
      let index = next
      next += 1
      group.addTask {
        guard try await store.record(make(index)) else { fail("record \(index) was already stored") }
      }
    }
    while next < min(concurrency, count) { add() }
    while try await group.next() != nil {
      if next < count { add() }
    }
  }
  return clock.now - start
}

func percentile(_ sorted: [Double], _ p: Double) -> Double {
  guard !sorted.isEmpty else { return 0 }
  let rank = Int((p / 100 * Double(sorted.count)).rounded(.up)) - 1
  return sorted[min(max(rank, 0), sorted.count - 1)]
}

func summary(_ microseconds: [Double]) -> [String: Any] {
  let sorted = microseconds.sorted()
  return [
    "calls": sorted.count, "p50_us": percentile(sorted, 50), "p99_us": percentile(sorted, 99),
    "mean_us": sorted.reduce(0, +) / Double(max(sorted.count, 1)), "max_us": sorted.last ?? 0,
  ]
}

/// Runs the three parts on the store that `options` names; what to print.
func measure(_ options: Options) async throws -> [String: Any] {
  var logger = Logger(label: "pkgtool-state-bench")
  logger.logLevel = .warning
  let store: any EntitlementStore
  do {
    store = try await EntitlementStores.open(options.state, logger: logger)
  } catch {
    fail("\(error)")
  }
  let factory = RecordFactory(payloadBytes: options.payloadBytes)
  let run = String(UUID().uuidString.prefix(8))

  return try await withThrowingTaskGroup(of: Void.self) { group in
    group.addTask { await store.run() }
    defer { group.cancelAll() }

    // 1. record throughput.
    var writes: [String: Any] = [:]
    var written = 0
    for concurrency in options.concurrency {
      var rates: [Double] = []
      for round in 0..<options.rounds {
        let prefix = "w\(run)-\(concurrency)-\(round)-"
        let elapsed = try await write(store, count: options.writes, concurrency: concurrency) { index in
          factory.other(prefix, index)
        }
        rates.append(Double(options.writes) / seconds(elapsed))
        written += options.writes
      }
      writes["\(concurrency)"] = ["recordsPerSecond": rates]
    }

    // 2. preload, untimed: other purchases, then the looked-up ones.
    if written < options.preload {
      _ = try await write(store, count: options.preload - written, concurrency: 16) { index in
        factory.other("p\(run)-", index)
      }
    }
    let looked = 500
    let types = ["REFUND", "REFUND_REVERSED", "DID_RENEW"]
    _ = try await write(store, count: looked * 3, concurrency: 16) { index in
      let id = "l\(run)-\(index / 3)"
      let type = types[index % 3]
      return factory.record(
        type: type, transaction: id, original: id, signedDate: factory.now - 30_000 + Int64(index % 3) * 1000,
        expires: type == "DID_RENEW" ? factory.now + 86_400_000 : nil)
    }
    let stored = try await store.count()

    // 3. lookups, one at a time.
    let clock = ContinuousClock()
    var withRecords: [Double] = []
    var without: [Double] = []
    // A few untimed calls first: connections open, statements prepared, pages cached.
    for index in 0..<50 {
      _ = try await store.records(
        transactionID: "l\(run)-\(index)", originalTransactionID: "l\(run)-\(index)", types: Entitlement.accessTypes)
    }
    for index in 0..<options.lookups {
      let hit = index % 2 == 0
      let id = hit ? "l\(run)-\(index / 2 % looked)" : "none\(run)-\(index)"
      let start = clock.now
      let found = try await store.records(
        transactionID: id, originalTransactionID: id, types: Entitlement.accessTypes)
      let microseconds = seconds(clock.now - start) * 1e6
      guard found.count == (hit ? 3 : 0) else { fail("lookup of \(id) found \(found.count) records") }
      if hit {
        withRecords.append(microseconds)
      } else {
        without.append(microseconds)
      }
    }
    let lookup: [String: Any] = [
      "threeRecords": summary(withRecords), "noRecord": summary(without), "all": summary(withRecords + without),
    ]
    return [
      "store": store.displayLocation, "payloadBytes": options.payloadBytes, "storedRecords": stored,
      "record": writes, "writesPerRound": options.writes, "rounds": options.rounds, "lookup": lookup,
    ]
  }
}

let result = try await measure(Options(Array(CommandLine.arguments.dropFirst())))
let json = try JSONSerialization.data(withJSONObject: result, options: [.sortedKeys, .prettyPrinted])
print(String(decoding: json, as: UTF8.self))
