import Foundation
import SQLiteNIO
import TestSupport
import Testing

@testable import ContentServer

/// The gate's state store on a real SQLite file and a real PostgreSQL server: what both kinds
/// promise (one record per notification, the lookups, the migrations), and what each adds.
@Suite struct EntitlementStoreTests {
  @Test(arguments: Backend.allCases) func recordingTwiceStoresOnce(backend: Backend) async throws {
    let location = try await StoreLocationFixture.fresh(backend)
    let store = try await EntitlementStores.open(location.url, logger: quietLogger)
    try await withRunning(store) { store throws in
      let first = sampleRecord("uuid-1")
      #expect(try await store.record(first))
      var again = first
      again.signedPayload = "a different body under the same UUID"
      #expect(try await store.record(again) == false)
      #expect(try await store.count() == 1)
      let stored = try await store.records(transactionID: "2000000001", originalTransactionID: nil, types: ["REFUND"])
      #expect(stored == [first])
    }
  }

  @Test(arguments: Backend.allCases) func recordsFilterByTransactionAndType(backend: Backend) async throws {
    let location = try await StoreLocationFixture.fresh(backend)
    let store = try await EntitlementStores.open(location.url, logger: quietLogger)
    try await withRunning(store) { store throws in
      let refund = sampleRecord("a", type: "REFUND", transactionID: "t1", originalTransactionID: "o1")
      let revoke = sampleRecord("b", type: "REVOKE", transactionID: "t2", originalTransactionID: "o1")
      let reversed = sampleRecord("c", type: "REFUND_REVERSED", transactionID: "t1", originalTransactionID: "o1")
      let renew = sampleRecord(
        "d", type: "DID_RENEW", transactionID: "t3", originalTransactionID: "o2", revocationDate: nil)
      let test = sampleRecord("e", type: "TEST", transactionID: nil, originalTransactionID: nil, revocationDate: nil)
      for record in [refund, revoke, reversed, renew, test] { #expect(try await store.record(record)) }
      let all: Set<String> = ["REFUND", "REVOKE", "REFUND_REVERSED", "DID_RENEW", "TEST"]

      func uuids(_ transactionID: String?, _ originalTransactionID: String?, _ types: Set<String>) async throws
        -> [String]
      {
        try await store.records(
          transactionID: transactionID, originalTransactionID: originalTransactionID, types: types
        )
        .map(\.notificationUUID).sorted()
      }
      #expect(try await uuids("t1", nil, all) == ["a", "c"])
      #expect(try await uuids(nil, "o1", all) == ["a", "b", "c"])
      #expect(try await uuids("t3", "o1", all) == ["a", "b", "c", "d"])
      #expect(try await uuids("t1", "o1", ["REVOKE"]) == ["b"])
      #expect(try await uuids("t1", nil, ["REFUND", "REVOKE"]) == ["a"])
      #expect(try await uuids("t1", "o1", []) == [])
      #expect(try await uuids(nil, nil, all) == [])
      #expect(try await uuids("nope", "o9", all) == [])
      // Every field comes back as stored, nil or not.
      #expect(try await store.records(transactionID: "t3", originalTransactionID: nil, types: all) == [renew])
      #expect(try await store.records(transactionID: "t1", originalTransactionID: nil, types: ["REFUND"]) == [refund])
      #expect(try await store.count() == 5)
    }
  }

  @Test(arguments: Backend.allCases) func newerSchemaIsRefused(backend: Backend) async throws {
    let location = try await StoreLocationFixture.fresh(backend)
    let store = try await EntitlementStores.open(location.url, logger: quietLogger)
    await withRunning(store) { _ in }
    try await location.execute("INSERT INTO schema_version (version, applied_at) VALUES (7, 0)")
    await #expect(throws: StoreError.newerSchema(found: 7, known: StoreSchema.known)) {
      _ = try await EntitlementStores.open(location.url, logger: quietLogger)
    }
    #expect(StoreError.newerSchema(found: 7, known: 1).description.contains("version 7, newer than the version 1"))
  }

  @Test(arguments: Backend.allCases) func reopeningKeepsDataAndMigratesOnce(backend: Backend) async throws {
    let location = try await StoreLocationFixture.fresh(backend)
    let log = LogCollector()
    let first = try await EntitlementStores.open(location.url, logger: log.logger)
    #expect(first.displayLocation.hasSuffix("(schema \(StoreSchema.known))"))
    try await withRunning(first) { store throws in #expect(try await store.record(sampleRecord("kept"))) }
    #expect(log.messages.filter { $0.contains("migrated the schema from version 0 to 1") }.count == 1)

    let second = try await EntitlementStores.open(location.url, logger: log.logger)
    try await withRunning(second) { store throws in
      #expect(try await store.count() == 1)
      #expect(try await store.record(sampleRecord("kept")) == false)
    }
    #expect(log.messages.filter { $0.contains("migrated") }.count == 1)
  }

  /// Both instances start at once (their migrations take turns on the advisory lock), and each
  /// sees what the other stored as soon as it is stored; a notification that reaches both is
  /// stored once.
  @Test func twoPostgresStoresShareOneDatabase() async throws {
    let location = try await StoreLocationFixture.fresh(.postgres)
    async let openedA = EntitlementStores.open(location.url, logger: quietLogger)
    async let openedB = EntitlementStores.open(location.url, logger: quietLogger)
    let (a, b) = try await (openedA, openedB)
    try await withRunning(a) { a throws in
      try await withRunning(b) { b throws in
        #expect(try await a.record(sampleRecord("from-a", transactionID: "tx-a")))
        #expect(
          try await b.records(transactionID: "tx-a", originalTransactionID: nil, types: ["REFUND"]).map(
            \.notificationUUID) == ["from-a"])
        #expect(try await b.record(sampleRecord("from-a")) == false)
        // The same notification delivered to both at once: exactly one of them stores it.
        for round in 0..<20 {
          let record = sampleRecord("both-\(round)")
          async let fromA = a.record(record)
          async let fromB = b.record(record)
          let (storedByA, storedByB) = try await (fromA, fromB)
          #expect(storedByA != storedByB)
        }
        #expect(try await a.count() == 21)
        #expect(try await b.count() == 21)
      }
    }
    #expect(
      try await PostgresTestServer.shared().psql("SELECT count(*) FROM schema_version", database: location.database!)
        == "1")
  }

  /// The server stops: every call gives up within about the timeout, none hangs. The server
  /// starts again: the same store object works again by itself (postgres-nio's pool reconnects).
  @Test func postgresDownThenBack() async throws {
    let server = try await PostgresTestServer.make()
    let timeout = Duration.seconds(1)
    let store = try await EntitlementStores.open(server.url(), timeout: timeout, logger: quietLogger)
    try await withRunning(store) { store throws in
      #expect(try await store.record(sampleRecord("before")))
      await server.stop()
      for attempt in 0..<3 {
        let start = ContinuousClock.now
        await #expect(throws: StoreError.self) { _ = try await store.count() }
        await #expect(throws: StoreError.self) { _ = try await store.record(sampleRecord("while-down-\(attempt)")) }
        let elapsed = seconds(since: start)
        // Two calls, each bounded by the one-second timeout.
        #expect(elapsed < 2 * 1 + 1.0, "attempt \(attempt): \(elapsed) s")
      }
      let error = await caught { _ = try await store.count() }
      guard case .unavailable(let message) = error else {
        throw TestFailure("count() while down: \(String(describing: error))")
      }
      #expect(message.contains("127.0.0.1"))
      #expect(!message.contains(server.password))
      try await server.start()
      let start = ContinuousClock.now
      var back = false
      while seconds(since: start) < 30 {
        if (try? await store.count()) != nil {
          back = true
          break
        }
        try await Task.sleep(for: .milliseconds(100))
      }
      #expect(back, "the store did not recover within 30 s of the server's return")
      #expect(try await store.record(sampleRecord("after")))
      #expect(try await store.count() >= 2)
    }
  }

  /// A PostgreSQL that is not there: opening gives up within the timeout.
  @Test func postgresUnreachableAtOpen() async throws {
    let server = try await PostgresTestServer.make()
    await server.stop()
    let start = ContinuousClock.now
    let error = await caught {
      _ = try await EntitlementStores.open(server.url(), timeout: .seconds(1), logger: quietLogger)
    }
    guard case .unavailable = error else { throw TestFailure("open on a stopped server: \(String(describing: error))") }
    #expect(seconds(since: start) < 2.5)
  }

  @Test func passwordsNeverShown() async throws {
    let server = try await PostgresTestServer.shared()
    let store = try await EntitlementStores.open(server.url(), logger: quietLogger)
    #expect(store.displayLocation == "postgres://postgres@127.0.0.1:\(server.port)/postgres (schema 1)")
    await withRunning(store) { _ in }

    let wrong = "Wr0ng-Secret-\(UUID().uuidString.prefix(6))"
    let error = await caught { _ = try await EntitlementStores.open(server.url(password: wrong), logger: quietLogger) }
    guard case .badLocation(let message) = error else {
      throw TestFailure("wrong password: \(String(describing: error))")
    }
    #expect(message.contains("password authentication failed"), "\(message)")
    #expect(!message.contains(wrong))
    for url in [
      "postgres://me:\(wrong)@host:99999/db", "postgres://me:\(wrong)@host/db?sslmode=maybe",
      "postgres://me:\(wrong)@host", "postgres://me:p@ss/\(wrong)@host:5432/db?x=1",
    ] {
      let error = await caught { _ = try await EntitlementStores.open(url, logger: quietLogger) }
      guard case .badLocation(let message) = error else { throw TestFailure("\(url): \(String(describing: error))") }
      #expect(!message.contains(wrong), "\(message)")
      #expect(message.contains("***"))
    }
  }

  /// 50 tasks record at once on one SQLite store (and read between): every record lands.
  @Test func sqliteConcurrentRecordsAllLand() async throws {
    let location = try await StoreLocationFixture.fresh(.sqlite)
    let store = try await EntitlementStores.open(location.url, logger: quietLogger)
    try await withRunning(store) { store throws in
      let results = try await withThrowingTaskGroup(of: Bool.self) { group in
        for task in 0..<50 {
          group.addTask {
            let stored = try await store.record(sampleRecord("n-\(task)", transactionID: "t-\(task)"))
            let found = try await store.records(
              transactionID: "t-\(task)", originalTransactionID: nil, types: ["REFUND"])
            return stored && found.count == 1
          }
        }
        return try await group.reduce(into: [Bool]()) { $0.append($1) }
      }
      #expect(results.count == 50 && results.allSatisfy { $0 })
      #expect(try await store.count() == 50)
      // And the same 50 again, at once: none is stored twice.
      let again = try await withThrowingTaskGroup(of: Bool.self) { group in
        for task in 0..<50 { group.addTask { try await store.record(sampleRecord("n-\(task)")) } }
        return try await group.reduce(into: [Bool]()) { $0.append($1) }
      }
      #expect(again.allSatisfy { !$0 })
      #expect(try await store.count() == 50)
    }
  }

  /// The connection's settings: WAL, synchronous=FULL, the busy timeout; and the lookup uses
  /// both indexes.
  @Test func sqliteDurabilityAndPlan() async throws {
    let location = try await StoreLocationFixture.fresh(.sqlite)
    let opened = try await EntitlementStores.open(location.url, timeout: .milliseconds(1500), logger: quietLogger)
    let store = try #require(opened as? SQLiteEntitlementStore)
    #expect(try await store.connection.rows("PRAGMA journal_mode").first?.column("journal_mode")?.string == "wal")
    #expect(try await store.connection.rows("PRAGMA synchronous").first?.column("synchronous")?.integer == 2)
    #expect(try await store.connection.rows("PRAGMA busy_timeout").first?.column("timeout")?.integer == 1500)
    let plan = try await store.connection.rows(
      "EXPLAIN QUERY PLAN " + SQLiteEntitlementStore.recordsQuery(typeCount: 2),
      [.text("t"), .text("o"), .text("REFUND"), .text("REVOKE")]
    ).compactMap { $0.column("detail")?.string }.joined(separator: "\n")
    #expect(plan.contains("INDEX notifications_transaction_id"), "\(plan)")
    #expect(plan.contains("INDEX notifications_original_transaction_id"), "\(plan)")
    #expect(!plan.contains("SCAN notifications"), "\(plan)")
    await withRunning(store) { _ in }
  }

  /// Another process holds SQLite's write lock: a record gives up after the timeout instead of
  /// waiting for ever, and works once the lock is released.
  @Test func sqliteLockedGivesUp() async throws {
    let location = try await StoreLocationFixture.fresh(.sqlite)
    let store = try await EntitlementStores.open(location.url, timeout: .milliseconds(500), logger: quietLogger)
    try await withRunning(store) { store throws in
      let other: SQLiteConnection = try await SQLiteConnection.open(
        storage: .file(path: String(location.url.dropFirst(7))))
      _ = try await other.rows("BEGIN IMMEDIATE")
      let start = ContinuousClock.now
      await #expect(throws: StoreError.self) { _ = try await store.record(sampleRecord("blocked")) }
      #expect(seconds(since: start) < 1.5)
      // Reads go on: WAL lets them past the writer.
      #expect(try await store.count() == 0)
      _ = try await other.rows("COMMIT")
      let _: Void = try await other.close()
      #expect(try await store.record(sampleRecord("blocked")))
    }
  }

  @Test func sqliteBadLocations() async throws {
    let folder = try TemporaryDirectory("pkgtool-state")
    try writeFile(folder.appending("not-a-db"), String(repeating: "this is not SQLite\n", count: 100))
    for url in [
      "sqlite:\(folder.path)/not-a-db", "sqlite:\(folder.path)/missing/state.db", "sqlite:", "sqlite:\(folder.path)",
    ] {
      let error = await caught { _ = try await EntitlementStores.open(url, logger: quietLogger) }
      guard case .badLocation(let message) = error else { throw TestFailure("\(url): \(String(describing: error))") }
      #expect(message.contains("sqlite:"), "\(message)")
    }
    // A store closed by its run's end answers no more, and says so.
    let store = try await EntitlementStores.open("sqlite:\(folder.path)/state.db", logger: quietLogger)
    await withRunning(store) { _ in }
    await #expect(throws: StoreError.self) { _ = try await store.count() }
  }
}

/// `--state` URLs.
@Suite struct StoreLocationTests {
  @Test func sqlitePaths() throws {
    let folder = try TemporaryDirectory("pkgtool-state")
    let base = (folder.path as NSString).standardizingPath
    #expect(try StoreLocation("sqlite:state.db", workingDirectory: folder.path) == .sqlite(path: base + "/state.db"))
    #expect(try StoreLocation("sqlite:\(folder.path)/./x/../s.db") == .sqlite(path: base + "/s.db"))
    #expect(throws: StoreError.self) { try StoreLocation("sqlite:nowhere/state.db", workingDirectory: folder.path) }
  }

  @Test func postgresURLs() throws {
    func postgres(_ url: String) throws -> StoreLocation.Postgres {
      guard case .postgres(let location) = try StoreLocation(url) else { throw TestFailure("not postgres: \(url)") }
      return location
    }
    let plain = try postgres("postgres://gate@db.internal/entitlements")
    #expect(
      plain
        == .init(
          username: "gate", password: nil, host: "db.internal", port: 5432, database: "entitlements", tls: .disable))
    let full = try postgres("postgresql://gate:p%40ss%2Fw@[::1]:6543/ent%20db?sslmode=require")
    #expect(
      full == .init(username: "gate", password: "p@ss/w", host: "::1", port: 6543, database: "ent db", tls: .require))
    #expect(full.display == "postgres://gate@[::1]:6543/ent db?sslmode=require")
    // An unencoded '@' or '/' in the password still parses: the user information ends at the last '@'.
    #expect(try postgres("postgres://gate:a@b/c@h:1/d").password == "a@b/c")
    for bad in [
      "mysql://u@h/d", "postgres://h/d", "postgres://u@h", "postgres://u@h/", "postgres://u@:5/d",
      "postgres://u@h:0/d", "postgres://u@h:x/d", "postgres://u@h/d?sslmode=verify-full", "postgres://u@h/d?foo=1",
      "postgres://@h/d", "state.db",
    ] {
      #expect(throws: StoreError.self, "\(bad)") { try StoreLocation(bad) }
    }
  }

  @Test func redaction() {
    #expect(StoreLocation.redacted("postgres://u:secret@h/d") == "postgres://u:***@h/d")
    #expect(StoreLocation.redacted("postgres://u:se@cr/et@h:1/d") == "postgres://u:***@h:1/d")
    #expect(StoreLocation.redacted("postgres://u@h:5432/d") == "postgres://u@h:5432/d")
    #expect(StoreLocation.redacted("sqlite:a:b@c") == "sqlite:a:b@c")
  }
}
