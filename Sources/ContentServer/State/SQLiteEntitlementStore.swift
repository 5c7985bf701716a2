import Foundation
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import SQLiteNIO
import ServiceLifecycle

/// The embedded store: one SQLite file (sqlite-nio's own SQLite, so no system library), for one
/// instance of the gate. Several instances need PostgreSQL: SQLite's locks serialize their writes
/// safely, but only on one machine's local disk, and a second instance would not see the file.
///
/// One connection, one thread: every statement runs on the store's own single-thread pool, so
/// statements from any number of tasks run one at a time, in order, each to its end, and SQLite's
/// implicit transaction of each (the `INSERT` of ``record(_:)``) commits before the next starts.
/// Sharing one connection between concurrent statements would not be safe, though SQLite's mutex
/// keeps the memory sound: an implicit transaction commits when the connection's last active
/// statement finishes, so a record could return before its commit.
///
/// Durability: WAL journal with `synchronous=FULL`, so the WAL is synced on every commit and a
/// record that returned survives a power cut, not only a crash of the process (`NORMAL` would
/// sync only at checkpoints: the last commits could be lost, and Apple would not send again a
/// notification the gate had acknowledged). Waiting for another process's lock gives up after
/// the store's timeout (`busy_timeout`).
final class SQLiteEntitlementStore: EntitlementStore {
  /// The database file's absolute path.
  let path: String
  /// How long a call waits for the database.
  let timeout: Duration
  /// The connection; used only through ``perform(_:_:)`` (and the tests).
  let connection: SQLiteConnection
  /// The one thread that runs the connection's statements.
  private let threadPool: NIOThreadPool
  /// Whether ``run()`` was called, and whether the store is closed.
  private let lifecycle = NIOLockedValueBox(Lifecycle.open)
  private enum Lifecycle { case open, running, closed }
  let displayLocation: String

  private init(path: String, timeout: Duration, connection: SQLiteConnection, threadPool: NIOThreadPool) {
    self.path = path
    self.timeout = timeout
    self.connection = connection
    self.threadPool = threadPool
    displayLocation = "sqlite:\(path) (schema \(StoreSchema.known))"
  }

  deinit {
    // A store that was never run, or whose run was never cancelled: close it all the same (the
    // thread pool must be shut down before it goes away).
    if lifecycle.withLockedValue({ $0 }) != .closed { Self.close(connection, threadPool) }
  }

  /// Opens (creating it if absent) the database at `path`, sets its journal and durability, and
  /// runs the migrations.
  static func open(path: String, timeout: Duration, logger: Logger) async throws(StoreError) -> SQLiteEntitlementStore {
    let threadPool = NIOThreadPool(numberOfThreads: 1)
    threadPool.start()
    let location = "sqlite:\(path)"
    let connection: SQLiteConnection
    do {
      connection = try await withDeadline(timeout, location) { () throws(StoreError) in
        do {
          return try await SQLiteConnection.open(
            storage: .file(path: path), threadPool: threadPool, logger: logger,
            on: MultiThreadedEventLoopGroup.singleton.any())
        } catch {
          throw Self.atOpen(error, location)
        }
      }
    } catch {
      threadPool.shutdownGracefully { _ in }
      throw error
    }
    let store = SQLiteEntitlementStore(path: path, timeout: timeout, connection: connection, threadPool: threadPool)
    do {
      try await store.prepare(logger: logger)
    } catch {
      store.close()
      throw error
    }
    return store
  }

  /// Sets the connection's pragmas and migrates the schema.
  private func prepare(logger: Logger) async throws(StoreError) {
    let location = "sqlite:\(path)"
    let milliseconds = timeout.components.seconds * 1000 + timeout.components.attoseconds / 1_000_000_000_000_000
    let migrationTimeout = max(timeout, .seconds(30))
    let (from, to): (Int, Int) = try await withDeadline(migrationTimeout, location) {
      [connection] () throws(StoreError) in
      do {
        // First, so that no later statement waits for a lock for ever (sqlite-nio's own busy
        // handler retries without end).
        _ = try await connection.rows("PRAGMA busy_timeout = \(max(milliseconds, 1))")
        let mode = try await connection.rows("PRAGMA journal_mode = WAL").first?.column("journal_mode")?.string
        guard mode?.lowercased() == "wal" else {
          throw StoreError.badLocation(
            "cannot use the state location '\(location)': SQLite cannot keep a WAL journal there "
              + "(journal mode '\(mode ?? "?")'); put the file on a local disk")
        }
        _ = try await connection.rows("PRAGMA synchronous = FULL")
        _ = try await connection.rows("BEGIN IMMEDIATE")
        do {
          _ = try await connection.rows(StoreSchema.sqliteVersionTable)
          let current =
            try await connection.rows("SELECT COALESCE(MAX(version), 0) AS version FROM schema_version").first?
            .column("version")?.integer ?? 0
          guard current <= StoreSchema.known else {
            throw StoreError.newerSchema(found: Int(current), known: StoreSchema.known)
          }
          for step in StoreSchema.steps where step.version > current {
            for statement in step.sqlite { _ = try await connection.rows(statement) }
            _ = try await connection.rows(
              "INSERT INTO schema_version (version, applied_at) VALUES (?, ?)",
              [.integer(step.version), .integer(Int(Date().timeIntervalSince1970 * 1000))])
          }
          _ = try await connection.rows("COMMIT")
          return (Int(current), StoreSchema.known)
        } catch {
          _ = try? await connection.rows("ROLLBACK")
          throw error
        }
      } catch let error as StoreError {
        throw error
      } catch {
        throw Self.atOpen(error, location)
      }
    }
    if from != to { logger.info("\(StoreSchema.migratedMessage(location, from: from, to: to))") }
  }

  func record(_ record: NotificationRecord) async throws(StoreError) -> Bool {
    let placeholders = Array(repeating: "?", count: StoreSchema.columns.count).joined(separator: ", ")
    let sql =
      "INSERT INTO notifications (\(StoreSchema.columns.joined(separator: ", "))) VALUES (\(placeholders)) "
      + "ON CONFLICT (notification_uuid) DO NOTHING RETURNING 1 AS inserted"
    let binds = Self.binds(record)
    // RETURNING yields a row only when the row was inserted; the statement (and its implicit
    // transaction) has committed when the query returns.
    return try await perform("record") { connection in try await !connection.rows(sql, binds).isEmpty }
  }

  func records(transactionID: String?, originalTransactionID: String?, types: Set<String>) async throws(StoreError)
    -> [NotificationRecord]
  {
    guard !types.isEmpty, transactionID != nil || originalTransactionID != nil else { return [] }
    let sql = Self.recordsQuery(typeCount: types.count)
    let binds: [SQLiteData] =
      [Self.text(transactionID), Self.text(originalTransactionID)] + types.sorted().map { .text($0) }
    let rows = try await perform("records") { connection in try await connection.rows(sql, binds) }
    var records: [NotificationRecord] = []
    for row in rows {
      guard let record = Self.record(row) else {
        throw StoreError.unavailable("sqlite:\(path): a stored notification has a column of the wrong type")
      }
      records.append(record)
    }
    return records
  }

  /// The query of ``records(transactionID:originalTransactionID:types:)``: binds the transaction
  /// ID, the original transaction ID, then `typeCount` types. Each side of the OR is answered by
  /// its own index (SQLite's multi-index OR; the tests check the plan).
  static func recordsQuery(typeCount: Int) -> String {
    let typeList = Array(repeating: "?", count: typeCount).joined(separator: ", ")
    return "SELECT \(StoreSchema.columns.joined(separator: ", ")) FROM notifications "
      + "WHERE (transaction_id = ? OR original_transaction_id = ?) AND notification_type IN (\(typeList))"
  }

  func count() async throws(StoreError) -> Int {
    try await perform("count") { connection in
      try await connection.rows("SELECT COUNT(*) AS n FROM notifications").first?.column("n")?.integer ?? 0
    }
  }

  func run() async {
    let first = lifecycle.withLockedValue { state in
      guard state == .open else { return false }
      state = .running
      return true
    }
    guard first else { return }
    try? await gracefulShutdown()
    close()
  }

  /// Runs `body` with the connection, at most ``timeout``; its errors become
  /// ``StoreError/unavailable(_:)`` naming the file.
  private func perform<T: Sendable>(_ what: String, _ body: @escaping @Sendable (SQLiteConnection) async throws -> T)
    async throws(StoreError) -> T
  {
    let location = "sqlite:\(path)"
    guard lifecycle.withLockedValue({ $0 }) != .closed else { throw .unavailable("\(location) is closed") }
    return try await withDeadline(timeout, location) { [connection] () throws(StoreError) in
      do {
        return try await body(connection)
      } catch {
        throw .unavailable("\(location): \(Self.describe(error))")
      }
    }
  }

  /// Closes the connection and its thread, once.
  private func close() {
    let wasOpen = lifecycle.withLockedValue { state in
      defer { state = .closed }
      return state != .closed
    }
    if wasOpen { Self.close(connection, threadPool) }
  }

  private static func close(_ connection: SQLiteConnection, _ threadPool: NIOThreadPool) {
    // The close is queued behind the statements in flight; the pool stops after it.
    connection.close().whenComplete { _ in threadPool.shutdownGracefully { _ in } }
  }

  /// An error of SQLite (or of its thread) as a message.
  static func describe(_ error: any Error) -> String {
    if let error = error as? SQLiteError { return "\(error.message) (\(error.reason))" }
    return "\(error)"
  }

  /// An error while opening: a file that SQLite cannot use is a bad location, anything else
  /// (a lock held too long, a full disk) makes the store unavailable.
  static func atOpen(_ error: any Error, _ location: String) -> StoreError {
    if let error = error as? SQLiteError {
      switch error.reason {
      case .notADatabase, .corrupt, .cantOpen, .cantOpenDirectory, .cantOpenInvalidPath, .readOnly, .readonlyDirectory,
        .permission, .auth:
        return .badLocation("cannot use the state location '\(location)': \(describe(error))")
      default: break
      }
    }
    return .unavailable("\(location): \(describe(error))")
  }

  private static func text(_ value: String?) -> SQLiteData { value.map { .text($0) } ?? .null }
  private static func integer(_ value: Int64?) -> SQLiteData { value.map { .integer(Int($0)) } ?? .null }

  /// The values of `record`, in ``StoreSchema/columns`` order.
  private static func binds(_ record: NotificationRecord) -> [SQLiteData] {
    [
      .text(record.notificationUUID), .text(record.notificationType), text(record.subtype),
      .integer(Int(record.signedDate)), .text(record.environment), .text(record.bundleID), text(record.transactionID),
      text(record.originalTransactionID), text(record.productID), integer(record.transactionSignedDate),
      integer(record.revocationDate), integer(record.expiresDate), .text(record.signedPayload),
      .integer(Int(record.receivedAt)),
    ]
  }

  /// A row of `notifications` (all columns, in ``StoreSchema/columns`` order) as a record; nil
  /// when a column has the wrong type.
  private static func record(_ row: SQLiteRow) -> NotificationRecord? {
    func text(_ name: String) -> String?? {
      guard let data = row.column(name) else { return .none }
      if data.isNull { return .some(nil) }
      guard case .text(let value) = data else { return .none }
      return .some(value)
    }
    func integer(_ name: String) -> Int64?? {
      guard let data = row.column(name) else { return .none }
      if data.isNull { return .some(nil) }
      guard case .integer(let value) = data else { return .none }
      return .some(Int64(value))
    }
    guard case .some(.some(let uuid)) = text("notification_uuid"),
      case .some(.some(let type)) = text("notification_type"), case .some(let subtype) = text("subtype"),
      case .some(.some(let signedDate)) = integer("signed_date"),
      case .some(.some(let environment)) = text("environment"), case .some(.some(let bundleID)) = text("bundle_id"),
      case .some(let transactionID) = text("transaction_id"),
      case .some(let originalTransactionID) = text("original_transaction_id"),
      case .some(let productID) = text("product_id"),
      case .some(let transactionSignedDate) = integer("transaction_signed_date"),
      case .some(let revocationDate) = integer("revocation_date"),
      case .some(let expiresDate) = integer("expires_date"),
      case .some(.some(let signedPayload)) = text("signed_payload"),
      case .some(.some(let receivedAt)) = integer("received_at")
    else { return nil }
    return NotificationRecord(
      notificationUUID: uuid, notificationType: type, subtype: subtype, signedDate: signedDate,
      environment: environment, bundleID: bundleID, transactionID: transactionID,
      originalTransactionID: originalTransactionID, productID: productID,
      transactionSignedDate: transactionSignedDate, revocationDate: revocationDate, expiresDate: expiresDate,
      signedPayload: signedPayload, receivedAt: receivedAt)
  }
}

extension SQLiteConnection {
  /// The rows of `sql`, once it ran to its end. (A plain `_ = try await query(sql)` would pick
  /// sqlite-nio's overload that returns a future, and not wait.)
  func rows(_ sql: String, _ binds: [SQLiteData] = []) async throws -> [SQLiteRow] {
    let rows: [SQLiteRow] = try await query(sql, binds)
    return rows
  }
}
