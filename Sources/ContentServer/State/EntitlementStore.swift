import Logging
import ServiceLifecycle

/// One verified App Store Server Notification v2, as the store keeps it. Dates are Unix
/// milliseconds.
package struct NotificationRecord: Sendable, Equatable {
  /// The notification's `notificationUUID`: the store keeps one record per value.
  package var notificationUUID: String
  /// `REFUND`, `REVOKE`, `REFUND_REVERSED`, `DID_RENEW`, `EXPIRED`, `TEST`, ...
  package var notificationType: String
  /// The notification's `subtype`, if it has one.
  package var subtype: String?
  /// The notification's `signedDate`.
  package var signedDate: Int64
  /// `Production` or `Sandbox`, as the notification says.
  package var environment: String
  /// The app's bundle ID, as the notification says.
  package var bundleID: String
  /// `signedTransactionInfo.transactionId`, when the notification carries a transaction.
  package var transactionID: String?
  /// `signedTransactionInfo.originalTransactionId`.
  package var originalTransactionID: String?
  /// `signedTransactionInfo.productId`.
  package var productID: String?
  /// `signedTransactionInfo.signedDate`.
  package var transactionSignedDate: Int64?
  /// `signedTransactionInfo.revocationDate`.
  package var revocationDate: Int64?
  /// `signedTransactionInfo.expiresDate`.
  package var expiresDate: Int64?
  /// The JWS as received, kept for audit.
  package var signedPayload: String
  /// When the gate received it.
  package var receivedAt: Int64

  /// A record with every field given.
  package init(
    notificationUUID: String, notificationType: String, subtype: String?, signedDate: Int64, environment: String,
    bundleID: String, transactionID: String?, originalTransactionID: String?, productID: String?,
    transactionSignedDate: Int64?, revocationDate: Int64?, expiresDate: Int64?, signedPayload: String,
    receivedAt: Int64
  ) {
    self.notificationUUID = notificationUUID
    self.notificationType = notificationType
    self.subtype = subtype
    self.signedDate = signedDate
    self.environment = environment
    self.bundleID = bundleID
    self.transactionID = transactionID
    self.originalTransactionID = originalTransactionID
    self.productID = productID
    self.transactionSignedDate = transactionSignedDate
    self.revocationDate = revocationDate
    self.expiresDate = expiresDate
    self.signedPayload = signedPayload
    self.receivedAt = receivedAt
  }
}

/// Why the store could not answer. The descriptions name the store without its password.
package enum StoreError: Error, Sendable, Equatable, CustomStringConvertible {
  /// The database is down, timed out, refused the connection or failed the statement: the gate
  /// answers 503 with Retry-After. The store recovers by itself when the database is back.
  case unavailable(String)
  /// The database's schema is newer than this build knows: the gate refuses to start.
  case newerSchema(found: Int, known: Int)
  /// A `--state` URL that the store cannot use; the message names it (without its password) and
  /// says the accepted forms.
  case badLocation(String)

  package var description: String {
    switch self {
    case .unavailable(let message): return "the state store is unavailable: \(message)"
    case .newerSchema(let found, let known):
      return
        "the state store's schema is version \(found), newer than the version \(known) this pkgtool knows: "
        + "run the newer pkgtool-serve that migrated it, or a copy of the database from before"
    case .badLocation(let message): return message
    }
  }
}

/// The gate's only state: the verified App Store Server Notifications, one record per
/// `notificationUUID`, never changed once stored (the gate derives access from them).
///
/// Every call returns only after the database answered (`record`: after its commit, made durable),
/// and gives up with ``StoreError/unavailable(_:)`` after the store's timeout: it never hangs and
/// never crashes when the database is down, and works again by itself when it is back.
///
/// A store is a `Service`: run it (``run()``) beside the HTTP server, before it in a
/// `ServiceGroup`'s list so that it closes after the server has finished its requests.
package protocol EntitlementStore: Service, Sendable {
  /// Stores `record` unless one with its `notificationUUID` is stored; true when it was new.
  /// Returns after the commit. Storing the same notification twice, even from two instances at
  /// once, stores it once.
  func record(_ record: NotificationRecord) async throws(StoreError) -> Bool
  /// The records whose `notificationType` is one of `types` and whose `transactionID` equals
  /// `transactionID` or whose `originalTransactionID` equals `originalTransactionID` (either may
  /// be nil: nil matches nothing), in no particular order.
  func records(transactionID: String?, originalTransactionID: String?, types: Set<String>) async throws(StoreError)
    -> [NotificationRecord]
  /// Counts, for /healthz and logs: total records stored.
  func count() async throws(StoreError) -> Int
  /// Runs what the store needs in the background (PostgreSQL: postgres-nio's connection pool,
  /// which serves no query until this runs) until the task is cancelled or, in a `ServiceGroup`,
  /// a graceful shutdown; then closes the store (SQLite: its connection). Call it once, for every
  /// kind of store: it returns at once only when called again.
  func run() async
  /// A short description for the start-up log, without secrets (no password):
  /// `sqlite:/abs/path (schema 1)`, `postgres://user@host:5432/db (schema 1)`.
  var displayLocation: String { get }
}

/// Opens the store that a `--state` URL names.
package enum EntitlementStores {
  /// The accepted forms of a `--state` URL, for messages.
  package static let acceptedForms =
    "sqlite:PATH (one instance) or postgres://user[:password]@host[:port]/database[?sslmode=disable|require] "
    + "(several instances)"

  /// `url` with its password replaced by `***`: what messages and logs may show.
  package static func redacted(_ url: String) -> String { StoreLocation.redacted(url) }

  /// Opens the store that `url` names, runs its migrations, and returns it.
  ///
  /// - `sqlite:PATH`: a file, relative to the working folder, created if absent (its folder must
  ///   exist). For one instance of the gate.
  /// - `postgres://user[:password]@host[:port]/database[?sslmode=disable|require]` (also
  ///   `postgresql://`): a PostgreSQL database, which several instances can share. User, password
  ///   and database may be percent-encoded. `sslmode=require` verifies the server's certificate
  ///   and name against the system's roots; the default is `disable`.
  ///
  /// Each call waits at most `timeout` for the database (the migrations, which may wait for
  /// another instance's, at most `max(timeout, 30 s)`). Throws ``StoreError/badLocation(_:)``,
  /// ``StoreError/newerSchema(found:known:)`` or ``StoreError/unavailable(_:)``.
  package static func open(_ url: String, timeout: Duration = .seconds(2), logger: Logger) async throws(StoreError)
    -> any EntitlementStore
  {
    switch try StoreLocation(url) {
    case .sqlite(let path):
      return try await SQLiteEntitlementStore.open(path: path, timeout: timeout, logger: logger)
    case .postgres(let location):
      return try await PostgresEntitlementStore.open(location, timeout: timeout, logger: logger)
    }
  }
}
