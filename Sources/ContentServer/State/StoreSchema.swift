/// The store's schema, as numbered migrations that run at start, one list of statements per
/// dialect. A database records the versions applied in `schema_version` (one row each, created by
/// the runner itself); a store applies the steps above the highest, in one transaction, and
/// refuses a database whose version is above ``known``.
///
/// To change the schema, append a step: never edit one that has shipped. A step must leave the
/// data readable by this version's queries until every instance runs the new build, since
/// instances of two versions share a PostgreSQL database during a rolling update (an older one
/// then refuses to start, but the ones running go on).
enum StoreSchema {
  /// One migration: the statements that take a database from `version - 1` to `version`.
  struct Step {
    /// The version the database has after it.
    var version: Int
    /// The statements for SQLite, in order.
    var sqlite: [String]
    /// The statements for PostgreSQL, in order.
    var postgres: [String]
  }

  /// Every step, in order: `steps[i].version == i + 1`.
  static let steps: [Step] = [
    Step(
      version: 1,
      // STRICT: SQLite checks each value's type, as PostgreSQL does.
      sqlite: [
        """
        CREATE TABLE notifications (
          notification_uuid TEXT NOT NULL PRIMARY KEY,
          notification_type TEXT NOT NULL,
          subtype TEXT,
          signed_date INTEGER NOT NULL,
          environment TEXT NOT NULL,
          bundle_id TEXT NOT NULL,
          transaction_id TEXT,
          original_transaction_id TEXT,
          product_id TEXT,
          transaction_signed_date INTEGER,
          revocation_date INTEGER,
          expires_date INTEGER,
          signed_payload TEXT NOT NULL,
          received_at INTEGER NOT NULL
        ) STRICT
        """,
        "CREATE INDEX notifications_transaction_id ON notifications (transaction_id)",
        "CREATE INDEX notifications_original_transaction_id ON notifications (original_transaction_id)",
      ],
      postgres: [
        """
        CREATE TABLE notifications (
          notification_uuid text NOT NULL PRIMARY KEY,
          notification_type text NOT NULL,
          subtype text,
          signed_date bigint NOT NULL,
          environment text NOT NULL,
          bundle_id text NOT NULL,
          transaction_id text,
          original_transaction_id text,
          product_id text,
          transaction_signed_date bigint,
          revocation_date bigint,
          expires_date bigint,
          signed_payload text NOT NULL,
          received_at bigint NOT NULL
        )
        """,
        "CREATE INDEX notifications_transaction_id ON notifications (transaction_id)",
        "CREATE INDEX notifications_original_transaction_id ON notifications (original_transaction_id)",
      ])
  ]

  /// The newest version this build knows.
  static var known: Int { steps.count }

  /// The version table for SQLite, created (if absent) before the first step.
  static let sqliteVersionTable =
    "CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL PRIMARY KEY, applied_at INTEGER NOT NULL)"
  /// The version table for PostgreSQL, created before the first step when absent (the gate's
  /// role needs no CREATE right once it exists: PostgreSQL checks that right even for
  /// `CREATE TABLE IF NOT EXISTS`).
  static let postgresVersionTable =
    "CREATE TABLE schema_version (version integer NOT NULL PRIMARY KEY, applied_at bigint NOT NULL)"

  /// The columns of `notifications`, in the order the stores read and write them.
  static let columns = [
    "notification_uuid", "notification_type", "subtype", "signed_date", "environment", "bundle_id",
    "transaction_id", "original_transaction_id", "product_id", "transaction_signed_date", "revocation_date",
    "expires_date", "signed_payload", "received_at",
  ]

  /// What a store says in its log after migrating.
  static func migratedMessage(_ location: String, from: Int, to: Int) -> String {
    "state store \(location): migrated the schema from version \(from) to \(to)"
  }
}
