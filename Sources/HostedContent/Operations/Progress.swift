import SystemIO
import XAR

/// Called now and then by a long operation (``Build``, ``Validation``, ``Unpack``, ``Install``,
/// ``Publish``) with the bytes of content read so far (`done`, decoded: what the rules see) and,
/// when the source knows it, the bytes it will read in all (`total`; see
/// ``PackageIndex/expectedDataSize``). Called on the thread running the operation, about once per
/// 256 KiB chunk: keep it cheap (read a clock, compare, return).
public typealias ProgressHandler = (_ done: UInt64, _ total: UInt64?) -> Void

// How each source knows its total before (or soon after) it starts. The total counts what
// ``PackageInspector`` counts as done: every file's decoded bytes.

extension XARPackageSource {
  /// The sum of the sizes the TOC declares for its files (decoded, not stored): known before the
  /// first entry, in memory. A TOC being parsed beside the reading (``StreamingXARPackageSource``)
  /// gives it once it is whole (usually well before the first interval is over).
  ///
  /// The sum of the declared decoded sizes of `table`'s files, saturating.
  static func declaredFileBytes(_ table: XAREntryTable) -> UInt64 {
    var total: UInt64 = 0
    for i in 0..<table.count where table.kind(at: i) == .file {
      let (sum, overflow) = total.addingReportingOverflow(table.sizes(at: i).size)
      total = overflow ? .max : sum
    }
    return total
  }
}

extension ZipPackageSource {
  /// The sum of the uncompressed sizes the central directory declares (read once more here,
  /// a few bytes per entry).
  package var expectedDataSize: UInt64? {
    guard format == .zip, let size = try? file.size(),
      let zip = try? ZipDirectory(file: file, fileSize: size, maxEntries: maxEntries)
    else { return nil }
    var total: UInt64 = 0
    for entry in zip.entries {
      let (sum, overflow) = total.addingReportingOverflow(entry.size)
      total = overflow ? .max : sum
    }
    return total
  }
}

extension ProjectSource {
  /// The sum of the sizes of the files `build` packs, the plist included: a walk of the same
  /// view (junk and whatever else is left out, left out) that opens no file's data. It costs a
  /// directory walk, so it is asked only when progress is shown.
  package var expectedDataSize: UInt64? { EntrySourceSizes.sumOfFileSizes(self) }
}

extension DirectorySource {
  /// The sum of the sizes of the folder's regular files, from a walk that reads no data.
  package var expectedDataSize: UInt64? { EntrySourceSizes.sumOfFileSizes(self) }
}

enum EntrySourceSizes {
  static func sumOfFileSizes(_ source: EntrySource) -> UInt64? {
    var total: UInt64 = 0
    do {
      try source.forEachEntry { entry, _ in
        guard entry.kind == .file else { return }
        let (sum, overflow) = total.addingReportingOverflow(entry.size)
        total = overflow ? .max : sum
      }
    } catch {
      return nil
    }
    return total
  }
}
