import Foundation
import SystemIO

/// What a device remembers of the publishers whose catalogs `install` accepted into one
/// documents folder (docs/catalog.md, "What a device remembers"): under each name of
/// ``CatalogPublisher/anchors``, the newest root version and the highest catalog sequence
/// accepted, whatever the product. Kept in `DOCS/.pkgtool/trust.json` (``InstallFolder``).
package struct TrustRecord: Codable, Equatable, Sendable {
  /// The newest root version and the highest catalog sequence accepted under one name.
  package struct Memory: Codable, Equatable, Sendable {
    /// The newest root version a catalog was verified under; nil when only keys were used.
    package var rootVersion: Int64?
    /// The highest catalog sequence accepted.
    package var catalogSequence: Int64?

    /// A memory of these numbers.
    package init(rootVersion: Int64? = nil, catalogSequence: Int64? = nil) {
      self.rootVersion = rootVersion
      self.catalogSequence = catalogSequence
    }

    /// Raises each number to `other`'s when that one is higher.
    package mutating func raise(to other: Memory?) {
      guard let other else { return }
      if let value = other.rootVersion, value > (rootVersion ?? 0) { rootVersion = value }
      if let value = other.catalogSequence, value > (catalogSequence ?? Int64.min) { catalogSequence = value }
    }
  }

  /// The form of the record; 1.
  package var format = 1
  /// What is remembered, by anchor (`root:<SHA-256>` or `key:<key id>`).
  package var anchors: [String: Memory] = [:]
  /// The highest numbers the per-product records of an earlier pkgtool held
  /// (`DOCS/<product>/.pkgtool/root-version` and `catalog-sequence`) when this record was first
  /// written. Those records do not say whose they were, so they count for every publisher.
  package var migrated: Memory?

  /// A record with nothing but `migrated`.
  package init(migrated: Memory? = nil) { self.migrated = migrated }

  /// What this record remembers of `publisher`: the highest numbers under any of its anchors or
  /// migrated; and the newest root version under any anchor at all (a single key cannot stand
  /// for a root that may have retired it).
  package func remembered(of publisher: CatalogPublisher) -> (publisher: Memory, rootVersionInFolder: Int64?) {
    var memory = Memory()
    memory.raise(to: migrated)
    for anchor in publisher.anchors { memory.raise(to: anchors[anchor]) }
    var any = Memory()
    any.raise(to: migrated)
    for other in anchors.values { any.raise(to: other) }
    return (memory, any.rootVersion)
  }

  /// Records `rootVersion` (nil for one key) and `catalogSequence` under every anchor of
  /// `publisher`, where they are higher than what is kept.
  package mutating func raise(_ publisher: CatalogPublisher, catalogSequence: Int64) {
    for anchor in publisher.anchors {
      anchors[anchor, default: Memory()].raise(
        to: Memory(rootVersion: publisher.rootVersion, catalogSequence: catalogSequence))
    }
  }

  /// Why a decoded record cannot be what pkgtool wrote; nil when it can.
  fileprivate var problem: String? {
    guard format == 1 else { return "its format is \(format), not 1" }
    for (anchor, memory) in anchors {
      let parts = anchor.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
      guard parts.count == 2, ["root", "key"].contains(parts[0]), !parts[1].isEmpty,
        parts[1].utf8.allSatisfy({ ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x61 && $0 <= 0x66) })
      else { return "'\(anchor.debugDescription.dropFirst().dropLast())' is not a root's or a key's name" }
      if let problem = memory.problem { return "\(anchor): \(problem)" }
    }
    return migrated?.problem.map { "migrated: \($0)" }
  }
}

extension TrustRecord.Memory {
  fileprivate var problem: String? {
    if let rootVersion, rootVersion < 1 { return "the root version \(rootVersion) is not 1 or more" }
    if let catalogSequence, catalogSequence < 0 { return "the catalog sequence \(catalogSequence) is negative" }
    return nil
  }
}

/// The documents folder `install` was given, and what it keeps for every product in it:
///
/// ```
/// DOCS/.pkgtool/lock        held while the trust record is checked and raised
/// DOCS/.pkgtool/trust.json  the trust record (``TrustRecord``), written whole or not at all
/// ```
///
/// Product ids never start with `.`, so `.pkgtool` is never a product's folder.
package struct InstallFolder {
  /// The folder, in the documents folder, of what is kept for every product.
  package static let recordFolder = ".pkgtool"
  /// The trust record's file in the record folder.
  package static let trustFile = "trust.json"
  /// The lock file in the record folder.
  package static let lockFile = "lock"
  /// The longest trust record read (some ten thousand anchors).
  static let maxRecordSize = 1 << 20

  /// The open documents folder.
  package let handle: DirectoryHandle
  /// Its path, for messages.
  package let path: String

  /// The documents folder open as `handle`.
  package init(handle: DirectoryHandle, path: String) {
    self.handle = handle
    self.path = path
  }

  /// `'DOCS/.pkgtool/trust.json'`, for messages.
  var shownTrustFile: String { "'\(path)/\(Self.recordFolder)/\(Self.trustFile)'" }

  /// The trust record as it stands; when there is none yet, the one that would be written:
  /// what the per-product records of an earlier pkgtool hold, migrated. Throws when the record
  /// (or an earlier one) is there but damaged or unreadable: a damaged record never turns the
  /// checks off.
  package func record() throws -> TrustRecord {
    if let record = try stored() { return record }
    return TrustRecord(migrated: try earlierRecords())
  }

  /// Under the folder's lock: reads the record again, asks `check` whether the install may go
  /// on (its answer, a refusal, is returned and nothing is written), and if so records
  /// `publisher` at `catalogSequence`, whole or not at all. Two installs into one folder, of
  /// any products, never lose each other's raise.
  package func accept(
    _ publisher: CatalogPublisher, catalogSequence: Int64, lockTimeout: Double,
    check: (TrustRecord) -> String?
  ) throws -> String? {
    let records: DirectoryHandle
    let lock: FileLock
    do {
      if !handle.exists(Self.recordFolder) {
        do { try handle.createDirectory(Self.recordFolder) } catch let error as SystemError where error.code == EEXIST {
        }
      }
      records = try handle.openDirectory(Self.recordFolder)
      lock = try FileLock(Self.lockFile, in: records, timeout: lockTimeout)
    } catch let busy as FileLock.Busy {
      throw OperationError("\(busy)", hint: "wait for it to finish, then install again")
    } catch let error as SystemError {
      throw OperationError(
        "cannot install into '\(path)': \(error.reason) (\(error.codeName))",
        hint: "'\(path)/\(Self.recordFolder)' must be a folder (not a symlink) you can write", code: .outputUnwritable)
    }
    return try withExtendedLifetime(lock) {
      let stored = try self.stored()
      var record = try stored ?? TrustRecord(migrated: earlierRecords())
      if let refusal = check(record) { return refusal }
      record.raise(publisher, catalogSequence: catalogSequence)
      guard record != stored else { return nil }
      PendingFolder.removeStale(in: records, for: Self.trustFile)
      do {
        try PendingFile.write(try JSONText.bytes(record), to: Self.trustFile, in: records)
        records.sync()
      } catch let error as SystemError {
        throw OperationError.writing(path + "/" + Self.recordFolder + "/" + Self.trustFile, error)
      }
      return nil
    }
  }

  /// The record in `trust.json`; nil when there is none.
  private func stored() throws -> TrustRecord? {
    guard handle.exists(Self.recordFolder) else { return nil }
    let bytes: [UInt8]
    do {
      let records = try handle.openDirectory(Self.recordFolder)
      guard records.exists(Self.trustFile) else { return nil }
      let (file, size) = try records.openFileAndSize(Self.trustFile)
      guard size <= Self.maxRecordSize else { throw damaged("it is larger than \(Self.maxRecordSize) bytes") }
      bytes = try file.read(count: Int(size), at: 0)
    } catch let error as SystemError {
      throw OperationError(
        "cannot read \(shownTrustFile): \(error.reason) (\(error.codeName))", hint: "check its permissions",
        code: .inputUnreadable)
    }
    let record: TrustRecord
    do {
      _ = try JSONValue(parsing: bytes)
      record = try JSONDecoder().decode(TrustRecord.self, from: Data(bytes))
    } catch {
      throw damaged("it is not JSON of the expected kind: \(describeDecoding(error))")
    }
    if let problem = record.problem { throw damaged(problem) }
    return record
  }

  private func damaged(_ reason: String) -> OperationError {
    OperationError(
      "the install record \(shownTrustFile) is damaged (\(reason)): the replay and rollback checks cannot be made",
      hint:
        "restore it from a backup; removing it makes the folder forget the newest root version and catalog sequence it accepted"
    )
  }

  /// The highest root version and catalog sequence in the per-product records an earlier
  /// pkgtool kept (``ProductFolder/earlierRootVersion``); nil when there are none.
  private func earlierRecords() throws -> TrustRecord.Memory? {
    let names: [(name: String, validUTF8: Bool)]
    do { names = try handle.list() } catch let error as SystemError {
      throw OperationError(
        "cannot read '\(path)': \(error.reason) (\(error.codeName))", hint: "check its permissions",
        code: .inputUnreadable)
    }
    var found: TrustRecord.Memory?
    for (name, valid) in names where valid && ProductIdentifier.problem(with: name) == nil {
      guard let folder = try? handle.openDirectory(name) else { continue }
      let product = ProductFolder(handle: folder, path: path + "/" + name)
      let earlier = TrustRecord.Memory(
        rootVersion: try product.earlierRootVersion, catalogSequence: try product.earlierCatalogSequence)
      guard earlier.rootVersion != nil || earlier.catalogSequence != nil else { continue }
      if found == nil { found = TrustRecord.Memory() }
      found?.raise(to: earlier)
    }
    return found
  }
}
