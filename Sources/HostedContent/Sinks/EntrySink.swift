/// Consumes entries as they leave the rules: writes them somewhere, or nowhere.
package protocol EntrySink: AnyObject {
  /// Starts an entry. Returns a reason when the sink refuses to write it (the entry is then
  /// skipped and the run reports the reason as a `path-safety` finding).
  func begin(_ entry: PackageEntry) throws -> String?
  /// The next bytes of the current file.
  func write(_ bytes: UnsafeRawBufferPointer) throws
  /// Offered after ``begin(_:)`` and before a file's bytes, when its source can read them at any
  /// offset (a file in a folder): `read(offset, buffer)` fills `buffer` from `offset` and
  /// returns how many bytes, without moving the stream. A sink that decides how to store a file
  /// from a sample of it reads the sample here.
  func preview(_ entry: PackageEntry, read: (UInt64, UnsafeMutableRawBufferPointer) throws -> Int) throws
  /// Ends the current entry.
  func end(_ entry: PackageEntry) throws
  /// Takes back the current entry, begun but not ended because reading it failed: whatever
  /// of it was written goes away.
  func abandon(_ entry: PackageEntry)
  /// Offered before the first entry: the run's index of every path it has seen (each entry's
  /// path is in it before the entry is begun). A sink that keeps paths can keep them there
  /// instead of in an index of its own.
  func share(_ paths: PathIndex)
}

extension EntrySink {
  package func preview(_ entry: PackageEntry, read: (UInt64, UnsafeMutableRawBufferPointer) throws -> Int) throws {}
  package func abandon(_ entry: PackageEntry) {}
  package func share(_ paths: PathIndex) {}
}

/// A sink that writes one package file, which appears at its path on ``commit(checkingSize:)``
/// or not at all.
package protocol PackageSink: EntrySink {
  /// Files stored as they are because they already were compressed.
  var storedCount: Int { get }
  /// Files stored as they are because deflating them made them no smaller (known after
  /// ``commit(checkingSize:)``).
  var unshrunkCount: Int { get }
  /// Files stored as they are because a sample of their bytes did not shrink enough
  /// (`DeflateSample`), and their bytes (known after ``commit(checkingSize:)``).
  var storedBySample: (files: Int, bytes: UInt64) { get }
  /// Files that would have been stored but are deflated, because their bytes hold a zip
  /// signature that would end stored data early for a streaming reader (zip only).
  var deflatedForSignature: Int { get }
  /// Finishes the package and puts it in place, unless `check` (given the size the package will
  /// have) throws; then nothing appears and the error is passed on.
  func commit(checkingSize check: ((UInt64) throws -> Void)?) throws -> WrittenPackage
  /// Drops everything written; nothing appears.
  func discard()
}

extension PackageSink {
  package var deflatedForSignature: Int { 0 }
}

/// What a ``PackageSink`` wrote.
package struct WrittenPackage: Sendable {
  /// The package file's size in bytes.
  package var size: UInt64
  /// The SHA-256 of the package file, in hex.
  package var sha256: String
}

/// Reads everything and keeps nothing: what `validate` uses, so every checksum is verified.
package final class NullSink: EntrySink {
  package init() {}
  package func begin(_ entry: PackageEntry) throws -> String? { nil }
  package func write(_ bytes: UnsafeRawBufferPointer) throws {}
  package func end(_ entry: PackageEntry) throws {}
}
