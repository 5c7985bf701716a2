import Foundation
import SystemIO

/// `DOCS/<product>/` on a device: the layout `install` keeps, owned by one type.
///
/// ```
/// DOCS/<product>/
///   <version>/              one folder per installed version (the package's Contents/)
///   current -> <version>    the symlink apps read, switched in one rename
///   .pkgtool/lock           held while an install decides and switches
///   .pkgtool/<version>.json the record of each installed version (``Install/Record``)
///   .pkgtool/catalog-sequence  what an earlier pkgtool kept here (the highest catalog sequence
///   .pkgtool/root-version      and root version used for this product); read once, migrated
/// ```
///
/// What a device remembers of a publisher (root version, catalog sequence) is kept once per
/// documents folder, for every product: ``InstallFolder``.
///
/// Every path is opened relative to the handle of the documents folder, never joined as a
/// string; a product folder is only ever a real folder (not a symlink). Versions are published
/// through ``PendingFolder`` and `current` through ``PendingFile``, so each appears whole or not
/// at all.
package final class ProductFolder {
  /// The symlink that names the current version.
  package static let currentLink = "current"
  /// The folder that holds install records.
  package static let recordFolder = ".pkgtool"
  /// The file in the record folder that serializes installs.
  package static let lockFile = "lock"
  /// The file in the record folder where an earlier pkgtool kept the highest catalog sequence
  /// used for the product (now kept per publisher, ``InstallFolder``).
  package static let catalogSequenceFile = "catalog-sequence"
  /// The file in the record folder where an earlier pkgtool kept the highest root version given
  /// for the product (now kept per publisher, ``InstallFolder``).
  package static let rootVersionFile = "root-version"

  /// The open product folder.
  package let handle: DirectoryHandle
  /// `DOCS/<product>`, for messages.
  package let path: String
  /// Held from ``open(_:in:path:lockTimeout:)`` until this value goes.
  private let lock: FileLock?

  /// A product folder already open as `handle`, unlocked (to read what it holds).
  package init(handle: DirectoryHandle, path: String) {
    self.handle = handle
    self.path = path
    self.lock = nil
  }

  private init(handle: DirectoryHandle, path: String, lock: FileLock) {
    self.handle = handle
    self.path = path
    self.lock = lock
  }

  /// Refuses `product` when `documents` holds another folder with the same name up to case or
  /// Unicode normalization: such product IDs share one folder on APFS (and NTFS), so two products
  /// would mix, on every file system alike.
  package static func checkName(_ product: String, in documents: DirectoryHandle, documentsPath: String) throws {
    if let other = try? documents.list().first(where: {
      !$0.name.utf8.elementsEqual(product.utf8) && NameEquivalence.areEquivalent($0.name, product)
    }) {
      throw OperationError(
        "cannot install \(product) into '\(documentsPath)': it holds '\(other.name)', which is the same folder name on case-insensitive file systems (APFS, NTFS)",
        hint: "product IDs that differ only by case cannot share one folder; install into another folder")
    }
  }

  /// Opens `DOCS/<product>` (made when missing) and takes its lock, waiting up to `lockTimeout`
  /// seconds for another install. `path` names the folder in messages.
  package static func open(_ product: String, in documents: DirectoryHandle, path: String, lockTimeout: Double)
    throws -> ProductFolder
  {
    do {
      if !documents.exists(product) {
        do { try documents.createDirectory(product, mode: 0o755) } catch let error as SystemError
          where error.code == EEXIST
        {}
      }
      let folder = try documents.openDirectory(product)
      let lock = try FileLock(lockFile, in: try openRecordFolder(in: folder), timeout: lockTimeout)
      return ProductFolder(handle: folder, path: path, lock: lock)
    } catch let busy as FileLock.Busy {
      throw OperationError("\(busy)", hint: "wait for it to finish, then install again")
    } catch let error as SystemError {
      throw OperationError(
        "cannot install into '\(path)': \(error.reason) (\(error.codeName))",
        hint: "it must be a folder (not a symlink) you can write", code: .outputUnwritable)
    }
  }

  /// The version `current` points at, if any.
  package var currentVersion: ContentVersion? {
    guard let target = try? handle.readLink(Self.currentLink) else { return nil }
    return ContentVersion(target)
  }

  /// Whether the folder of version `name` exists.
  package func hasVersion(_ name: String) -> Bool { handle.exists(name) }

  /// The record of an installed version.
  package func record(for version: ContentVersion) -> Install.Record? {
    guard let folder = try? handle.openDirectory(Self.recordFolder),
      let file = try? folder.openFile("\(version).json"),
      let bytes = try? file.read(count: 1 << 16, at: 0)
    else { return nil }
    return try? JSONDecoder().decode(Install.Record.self, from: Data(bytes))
  }

  /// Writes the record of `record.contentVersion`, whole or not at all.
  package func write(_ record: Install.Record) throws {
    try writeRecordFile("\(record.contentVersion).json", try JSONText.bytes(record))
  }

  /// The highest catalog sequence an earlier pkgtool kept for this product
  /// (`.pkgtool/catalog-sequence`), if any: read once, to migrate it into the documents folder's
  /// trust record (``InstallFolder``). Throws when the file is there but does not hold a number:
  /// a damaged record never turns the check off.
  package var earlierCatalogSequence: Int64? { get throws { try number(in: Self.catalogSequenceFile) } }

  /// The highest root version an earlier pkgtool kept for this product (`.pkgtool/root-version`),
  /// if any; read and checked as ``earlierCatalogSequence``.
  package var earlierRootVersion: Int64? { get throws { try number(in: Self.rootVersionFile) } }

  /// The integer in the record file `name` (digits and a final newline, as written here); nil
  /// when there is no such file. Throws when the file is there but holds anything else, or
  /// cannot be read.
  private func number(in name: String) throws -> Int64? {
    guard let folder = try? handle.openDirectory(Self.recordFolder), folder.exists(name) else { return nil }
    let shown = "'\(path.isEmpty ? "" : path + "/")\(Self.recordFolder)/\(name)'"
    let bytes: [UInt8]
    do { bytes = try folder.openFile(name).read(count: 64, at: 0) } catch {
      throw OperationError("cannot read \(shown): \(error)", hint: "check its permissions", code: .inputUnreadable)
    }
    var digits = bytes[...]
    if digits.last == 0x0A { digits = digits.dropLast() }
    guard !digits.isEmpty, digits.count <= 19, digits.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }),
      let value = Int64(String(decoding: digits, as: UTF8.self))
    else {
      throw OperationError(
        "the install record \(shown) is damaged (it must hold a number): the replay check cannot be made",
        hint: "restore it from a backup, or remove the product's folder and install again")
    }
    return value
  }

  /// Removes what a killed install left for version `name` and for `current`.
  package func removeStale(for name: String) {
    PendingFolder.removeStale(in: handle, for: name)
    PendingFolder.removeStale(in: handle, for: Self.currentLink)
  }

  /// Publishes `member` of `staging` as the folder of version `name`, in one step; an existing
  /// folder of that version is swapped out and goes with the staging folder. Returns whether one
  /// was replaced.
  package func publish(_ member: String, of staging: PendingFolder, as name: String) throws -> Bool {
    try staging.publish(member, as: name, in: handle)
  }

  /// Switches `current` to version `name`: a new symlink renamed over it, atomically; then
  /// flushes the folder.
  package func switchCurrent(to name: String) throws {
    try PendingFile.switchSymlink(Self.currentLink, to: name, in: handle)
    handle.sync()
  }

  /// Removes versions beyond the newest `keep` (never `current`) and their records; returns
  /// their names. Nil `keep` keeps every version.
  package func prune(keep: Int?, current: ContentVersion) throws -> [String] {
    guard let keep else { return [] }
    let versions = try handle.list().compactMap { name, _ -> ContentVersion? in
      guard let v = ContentVersion(name), v.description == name,
        Paths.isDirectoryMode((try? handle.status(name))?.st_mode ?? 0)
      else { return nil }
      return v
    }.sorted(by: >)
    var kept = [current]
    var removed: [String] = []
    for v in versions where v != current {
      if kept.count < max(1, keep) {
        kept.append(v)
      } else {
        try handle.removeTree(v.description)
        if let records = try? handle.openDirectory(Self.recordFolder), records.exists("\(v).json") {
          try? records.removeTree("\(v).json")
        }
        removed.append(v.description)
      }
    }
    return removed
  }

  /// The record folder, made when missing.
  private static func openRecordFolder(in folder: DirectoryHandle) throws -> DirectoryHandle {
    if !folder.exists(recordFolder) {
      do { try folder.createDirectory(recordFolder) } catch let error as SystemError where error.code == EEXIST {}
    }
    return try folder.openDirectory(recordFolder)
  }

  /// Writes `name` in the record folder, whole or not at all.
  private func writeRecordFile(_ name: String, _ bytes: [UInt8]) throws {
    try PendingFile.write(bytes, to: name, in: Self.openRecordFolder(in: handle))
  }
}
