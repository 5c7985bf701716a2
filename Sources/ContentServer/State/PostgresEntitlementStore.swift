import Foundation
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import NIOSSL
import PostgresNIO

/// The shared store: a PostgreSQL database that several instances of the gate use at once.
///
/// postgres-nio's `PostgresClient` keeps a pool of connections, which ``run()`` drives: it
/// reconnects by itself after the server went away (with a backoff from 100 ms growing to at most
/// 60 s while the server stays away, so after a long outage the store may need up to a minute
/// after the server's return). Every call gives up after the store's timeout, and the server
/// ends a statement that runs longer (`statement_timeout`), so nothing is left running behind a
/// call that gave up.
///
/// Durability: ``record(_:)`` inserts in an explicit transaction and returns when the server
/// answered its `COMMIT`: in the extended query protocol the implicit transaction of a lone
/// statement commits only after the server has reported the statement complete, so a lone
/// `INSERT` could return before its commit. With the server's default `synchronous_commit=on`
/// a commit is on disk when it is acknowledged; the store warns at start when it is `off`.
final class PostgresEntitlementStore: EntitlementStore {
  /// The database, without the password for display.
  let location: StoreLocation.Postgres
  /// How long a call waits for the database.
  let timeout: Duration
  /// The connection pool.
  let client: PostgresClient
  private let logger: Logger
  private let runs = NIOLockedValueBox(0)
  let displayLocation: String

  private init(location: StoreLocation.Postgres, timeout: Duration, client: PostgresClient, logger: Logger) {
    self.location = location
    self.timeout = timeout
    self.client = client
    self.logger = logger
    displayLocation = "\(location.display) (schema \(StoreSchema.known))"
  }

  /// Connects once to migrate the schema (serialized between instances by an advisory lock), and
  /// returns the store, whose pool connects when ``run()`` runs.
  static func open(_ location: StoreLocation.Postgres, timeout: Duration, logger: Logger) async throws(StoreError)
    -> PostgresEntitlementStore
  {
    let milliseconds = Self.milliseconds(timeout)
    let tls: PostgresClient.Configuration.TLS
    let connectionTLS: PostgresConnection.Configuration.TLS
    switch location.tls {
    case .disable:
      tls = .disable
      connectionTLS = .disable
    case .require:
      let configuration = TLSConfiguration.makeClientConfiguration()
      tls = .require(configuration)
      do {
        connectionTLS = .require(try NIOSSLContext(configuration: configuration))
      } catch {
        throw .badLocation("cannot use the state location '\(location.display)': TLS: \(error)")
      }
    }

    var configuration = PostgresClient.Configuration(
      host: location.host, port: location.port, username: location.username, password: location.password,
      database: location.database, tls: tls)
    configuration.options.connectTimeout = timeout
    configuration.options.maximumConnections = 10
    configuration.options.additionalStartupParameters = [
      ("application_name", "pkgtool-serve"), ("statement_timeout", "\(max(milliseconds, 1))"),
    ]
    let client = PostgresClient(configuration: configuration, backgroundLogger: logger)
    let store = PostgresEntitlementStore(location: location, timeout: timeout, client: client, logger: logger)

    var migration = PostgresConnection.Configuration(
      host: location.host, port: location.port, username: location.username, password: location.password,
      database: location.database, tls: connectionTLS)
    let migrationTimeout = max(timeout, .seconds(30))
    migration.options.connectTimeout = .milliseconds(milliseconds)
    migration.options.additionalStartupParameters = [
      ("application_name", "pkgtool-serve"), ("statement_timeout", "\(Self.milliseconds(migrationTimeout))"),
    ]
    try await store.migrate(migration, timeout: migrationTimeout)
    return store
  }

  /// Brings the schema to ``StoreSchema/known`` on one connection of its own, in one transaction
  /// that first takes a transaction-level advisory lock: instances that start at once migrate
  /// one after the other, and the later ones find the work done.
  private func migrate(_ configuration: PostgresConnection.Configuration, timeout: Duration) async throws(StoreError) {
    let display = location.display
    let logger = self.logger
    let connection = try await withDeadline(self.timeout, display) { () throws(StoreError) in
      do {
        let connection = try await PostgresConnection.connect(
          on: MultiThreadedEventLoopGroup.singleton.any(), configuration: configuration, id: 0, logger: logger
        ).get()
        // Connected after the deadline: nobody will use it.
        if Task.isCancelled { _ = try? await connection.close().get() }
        return connection
      } catch {
        throw Self.atOpen(error, display)
      }
    }
    let outcome: Result<(from: Int, to: Int, synchronousCommit: String), StoreError>
    do {
      outcome = .success(
        try await withDeadline(timeout, display) { () throws(StoreError) in
          do {
            return try await connection.withTransaction(logger: logger) { connection in
              // "pkgtool" in ASCII: the lock that serializes pkgtool's migrations.
              try await connection.query("SELECT pg_advisory_xact_lock(31643289470857068)", logger: logger)
              let exists =
                try await connection.query(
                  "SELECT to_regclass('schema_version') IS NOT NULL", logger: logger
                ).collect().first?.decode(Bool.self) ?? false
              if !exists {
                try await connection.query(PostgresQuery(unsafeSQL: StoreSchema.postgresVersionTable), logger: logger)
              }
              let current =
                try await connection.query(
                  "SELECT COALESCE(MAX(version), 0)::bigint FROM schema_version", logger: logger
                ).collect().first?.decode(Int64.self) ?? 0
              guard current <= StoreSchema.known else {
                throw StoreError.newerSchema(found: Int(current), known: StoreSchema.known)
              }
              for step in StoreSchema.steps where step.version > current {
                for statement in step.postgres {
                  try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger)
                }
                let now = Int64(Date().timeIntervalSince1970 * 1000)
                try await connection.query(
                  "INSERT INTO schema_version (version, applied_at) VALUES (\(step.version), \(now))",
                  logger: logger)
              }
              let synchronousCommit =
                try await connection.query("SHOW synchronous_commit", logger: logger)
                .collect().first?.decode(String.self) ?? "on"
              return (Int(current), StoreSchema.known, synchronousCommit)
            }
          } catch let error as PostgresTransactionError {
            if let error = error.closureError as? StoreError { throw error }
            throw Self.atOpen(error, display)
          } catch {
            throw Self.atOpen(error, display)
          }
        })
    } catch {
      outcome = .failure(error)
    }
    try? await connection.close()
    let (from, to, synchronousCommit) = try outcome.get()
    if from != to { logger.info("\(StoreSchema.migratedMessage(display, from: from, to: to))") }
    if synchronousCommit == "off" || synchronousCommit == "local" {
      let warning =
        "state store \(display): the server's synchronous_commit is '\(synchronousCommit)': a notification "
        + "acknowledged to Apple may be lost if the server crashes; set it to 'on'"
      logger.warning("\(warning)")
    }
  }

  func record(_ record: NotificationRecord) async throws(StoreError) -> Bool {
    let r = record
    let query: PostgresQuery = """
      INSERT INTO notifications (notification_uuid, notification_type, subtype, signed_date, environment, bundle_id,
        transaction_id, original_transaction_id, product_id, transaction_signed_date, revocation_date, expires_date,
        signed_payload, received_at)
      VALUES (\(r.notificationUUID), \(r.notificationType), \(r.subtype), \(r.signedDate), \(r.environment),
        \(r.bundleID), \(r.transactionID), \(r.originalTransactionID), \(r.productID), \(r.transactionSignedDate),
        \(r.revocationDate), \(r.expiresDate), \(r.signedPayload), \(r.receivedAt))
      ON CONFLICT (notification_uuid) DO NOTHING RETURNING 1
      """
    let logger = self.logger
    return try await perform("record") { client in
      // RETURNING yields a row only when the row was inserted; the COMMIT is answered when the
      // insert is durable.
      try await client.withTransaction(logger: logger) { connection in
        try await !connection.query(query, logger: logger).collect().isEmpty
      }
    }
  }

  func records(transactionID: String?, originalTransactionID: String?, types: Set<String>) async throws(StoreError)
    -> [NotificationRecord]
  {
    guard !types.isEmpty, transactionID != nil || originalTransactionID != nil else { return [] }
    let query: PostgresQuery = """
      SELECT notification_uuid, notification_type, subtype, signed_date, environment, bundle_id, transaction_id,
        original_transaction_id, product_id, transaction_signed_date, revocation_date, expires_date, signed_payload,
        received_at
      FROM notifications
      WHERE (transaction_id = \(transactionID) OR original_transaction_id = \(originalTransactionID))
        AND notification_type = ANY(\(types.sorted()))
      """
    return try await perform("records") { client in
      var records: [NotificationRecord] = []
      for try await row in try await client.query(query) {
        let (
          uuid, type, subtype, signedDate, environment, bundleID, transactionID, originalTransactionID, productID,
          transactionSignedDate, revocationDate, expiresDate, signedPayload, receivedAt
        ) = try row.decode(
          (
            String, String, String?, Int64, String, String, String?, String?, String?, Int64?, Int64?, Int64?, String,
            Int64
          ).self)
        records.append(
          NotificationRecord(
            notificationUUID: uuid, notificationType: type, subtype: subtype, signedDate: signedDate,
            environment: environment, bundleID: bundleID, transactionID: transactionID,
            originalTransactionID: originalTransactionID, productID: productID,
            transactionSignedDate: transactionSignedDate, revocationDate: revocationDate, expiresDate: expiresDate,
            signedPayload: signedPayload, receivedAt: receivedAt))
      }
      return records
    }
  }

  func count() async throws(StoreError) -> Int {
    try await perform("count") { client in
      let rows = try await client.query("SELECT COUNT(*)::bigint FROM notifications").collect()
      return Int(try rows.first?.decode(Int64.self) ?? 0)
    }
  }

  func run() async {
    let first = runs.withLockedValue { runs in
      defer { runs += 1 }
      return runs == 0
    }
    // PostgresClient.run() may run only once (a second call would stop the process).
    guard first else { return }
    await client.run()
  }

  /// Runs `body` with the pool, at most ``timeout``; its errors become
  /// ``StoreError/unavailable(_:)`` naming the database (without the password).
  private func perform<T: Sendable>(_ what: String, _ body: @escaping @Sendable (PostgresClient) async throws -> T)
    async throws(StoreError) -> T
  {
    let display = location.display
    return try await withDeadline(timeout, display) { [client] () throws(StoreError) in
      do {
        return try await body(client)
      } catch {
        throw .unavailable("\(display): \(Self.describe(error))")
      }
    }
  }

  /// An error while opening: a refused login or a missing database is a bad location, anything
  /// else (the server down, a timeout) makes the store unavailable.
  static func atOpen(_ error: any Error, _ display: String) -> StoreError {
    if let error = error as? PSQLError, let state = error.serverInfo?[.sqlState] {
      // 28xxx: invalid authorization (bad password, no such role); 3D000: no such database.
      if state.hasPrefix("28") || state == "3D000" {
        return .badLocation("cannot use the state location '\(display)': \(describe(error))")
      }
    }
    return .unavailable("\(display): \(describe(error))")
  }

  /// An error of postgres-nio as a message: the server's own message and SQLSTATE, or the
  /// network's. postgres-nio's own description of its errors is deliberately generic (it hides
  /// the query), and neither shows the password, which no error carries.
  static func describe(_ error: any Error) -> String {
    if let error = error as? PostgresTransactionError {
      if let inner = error.beginError ?? error.closureError ?? error.commitError { return describe(inner) }
      return "the transaction failed"
    }
    if let error = error as? PSQLError {
      if let message = error.serverInfo?[.message] {
        return "the server says: \(message)" + (error.serverInfo?[.sqlState].map { " (SQLSTATE \($0))" } ?? "")
      }
      if let underlying = error.underlying { return "\(error.code): \(describe(underlying))" }
      return "\(error.code)"
    }
    let text = "\(error)"
    if text.contains("CircuitBreaker") { return "cannot connect to the server for a while; retrying" }
    return text
  }

  static func milliseconds(_ duration: Duration) -> Int64 {
    duration.components.seconds * 1000 + duration.components.attoseconds / 1_000_000_000_000_000
  }
}
