import Foundation
import Logging
import SQLiteNIO
import TestSupport
import Testing

@testable import ContentServer

/// The two kinds of store, for tests that hold for both.
enum Backend: String, CaseIterable, CustomTestStringConvertible, Sendable {
  case sqlite, postgres
  var testDescription: String { rawValue }
}

/// A store's location for one test, and what must live as long as it: a temporary folder for
/// SQLite, a database of its own on the shared test server for PostgreSQL.
struct StoreLocationFixture: Sendable {
  let url: String
  /// The folder (SQLite) or the server (PostgreSQL).
  let holder: any Sendable
  /// The database's name on ``PostgresTestServer/shared`` (PostgreSQL only).
  let database: String?

  /// A fresh, empty location.
  static func fresh(_ backend: Backend) async throws -> StoreLocationFixture {
    switch backend {
    case .sqlite:
      let folder = try SendableFolder()
      return StoreLocationFixture(
        url: "sqlite:" + folder.directory.appending("state.db"), holder: folder, database: nil)
    case .postgres:
      let server = try await PostgresTestServer.shared()
      let database = try await server.createDatabase()
      return StoreLocationFixture(url: server.url(database: database), holder: server, database: database)
    }
  }

  /// Runs `sql` on the location's database, outside any store.
  func execute(_ sql: String) async throws {
    if let database {
      try await PostgresTestServer.shared().psql(sql, database: database)
    } else {
      let connection: SQLiteConnection = try await SQLiteConnection.open(
        storage: .file(path: String(url.dropFirst("sqlite:".count))))
      do {
        _ = try await connection.rows(sql)
      } catch {
        try await connection.close()
        throw error
      }
      try await connection.close()
    }
  }
}

/// A temporary folder that tests may hand between tasks.
final class SendableFolder: @unchecked Sendable {
  let directory: TemporaryDirectory
  init() throws { directory = try TemporaryDirectory("pkgtool-state") }
}

/// Runs `body` while `store` runs (``EntitlementStore/run()`` in a child task), then stops the
/// store (which closes it).
@discardableResult
func withRunning<T: Sendable>(
  _ store: any EntitlementStore, _ body: @Sendable (any EntitlementStore) async throws -> T
) async rethrows -> T {
  try await withThrowingTaskGroup(of: Void.self) { group in
    group.addTask { await store.run() }
    do {
      let result = try await body(store)
      group.cancelAll()
      return result
    } catch {
      group.cancelAll()
      throw error
    }
  }
}

/// The store error `body` throws; nil when it throws none (another error is a test failure).
func caught(_ body: () async throws -> Void) async -> StoreError? {
  do {
    try await body()
    return nil
  } catch let error as StoreError {
    return error
  } catch {
    Issue.record("not a StoreError: \(error)")
    return nil
  }
}

/// A logger that says nothing.
let quietLogger = Logger(label: "pkgtool-test") { _ in SwiftLogNoOpLogHandler() }

/// A logger that keeps what it is told, for tests that check the log.
final class LogCollector: @unchecked Sendable {
  private let lock = NSLock()
  private var kept: [String] = []

  var messages: [String] { lock.withLock { kept } }

  var logger: Logger {
    Logger(label: "pkgtool-test") { _ in Handler(collector: self) }
  }

  fileprivate func append(_ message: String) { lock.withLock { kept.append(message) } }

  private struct Handler: LogHandler {
    let collector: LogCollector
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .trace
    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
      get { metadata[key] }
      set { metadata[key] = newValue }
    }
    func log(event: LogEvent) { collector.append("\(event.level): \(event.message)") }
  }
}

/// A notification record with the given identity and otherwise plausible fields.
func sampleRecord(
  _ uuid: String = UUID().uuidString, type: String = "REFUND", transactionID: String? = "2000000001",
  originalTransactionID: String? = "2000000000", revocationDate: Int64? = 1_700_000_500_000
) -> NotificationRecord {
  NotificationRecord(
    notificationUUID: uuid, notificationType: type, subtype: type == "DID_RENEW" ? "BILLING_RECOVERY" : nil,
    signedDate: 1_700_000_600_000, environment: "Sandbox", bundleID: "com.example.books",
    transactionID: transactionID, originalTransactionID: originalTransactionID, productID: "com.example.books.ch1",
    transactionSignedDate: 1_700_000_000_000, revocationDate: revocationDate,
    expiresDate: type == "DID_RENEW" ? 1_702_000_000_000 : nil, signedPayload: "eyJhbGciOiJFUzI1NiJ9.\(uuid).sig",
    receivedAt: 1_700_000_700_000)
}

/// Seconds since `start`.
func seconds(since start: ContinuousClock.Instant) -> Double {
  let elapsed = ContinuousClock.now - start
  return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
}
