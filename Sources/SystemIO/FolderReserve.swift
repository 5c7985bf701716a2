#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Empty folders made in batches ahead of need, in a private folder beside an output
/// (`.NAME.pkgtool-folders-<pid>-<random>`), and renamed into place one at a time.
///
/// Why: ext4 places a new file's inode by its folder. A folder that was made between the files
/// of its neighbours lands in a block group of its own with room to spare, and its files fill
/// that group. When the same tree was just deleted (a CI job that removes its last output and
/// unpacks again), those are the groups it freed, and on a file system without a journal every
/// new inode there is found only after the kernel has skipped each inode freed in the last
/// minute, one by one (`recently_deleted` in `find_inode_bit`): the cost grows with the square
/// of the files per group. Folders made together, before the files, share one group; once it is
/// full their files are spread over groups chosen by each folder's new inode number, which
/// moves on from run to run. bsdtar gets the same effect because libarchive hands out every
/// folder before any file. Measured on this project's VM (docs/performance.md, round 3, third
/// part): the same 50,000-file unpack, its output deleted before each run, went 3.6 → 24 → 37 s
/// with folders made in turn.
///
/// A folder taken from the reserve is the same as one made in place: empty, mode 0755 (less the
/// umask), renamed without replacing anything. What is left is removed by ``discard()``.
package final class FolderReserve {
  private let holder: PendingFolder
  private var stock: [String] = []
  private var made = 0
  private var nextBatch: Int
  private let largestBatch: Int
  /// Folders handed out so far.
  package private(set) var taken = 0

  /// Prepares a reserve beside `destinationName` in `parent`; no folder is made before the
  /// first ``take(_:in:)``.
  package init(
    beside destinationName: String, in parent: DirectoryHandle, firstBatch: Int = 128, largestBatch: Int = 4096
  ) throws {
    holder = try PendingFolder(in: parent, for: destinationName, purpose: "folders")
    nextBatch = max(1, firstBatch)
    self.largestBatch = max(nextBatch, largestBatch)
  }

  deinit { discard() }

  /// Moves a new empty folder to `name` in `folder` and returns true; false when it could not
  /// (the caller then makes the folder itself, and meets the reason as its own error). Never
  /// replaces anything.
  package func take(_ name: String, in folder: DirectoryHandle) -> Bool {
    if stock.isEmpty { refill() }
    guard let spare = stock.popLast() else { return false }
    do {
      try renameNoReplace(holder.handle.fd, spare, folder.fd, name, path: folder.path + "/" + name)
      taken += 1
      return true
    } catch {
      stock.append(spare)
      return false
    }
  }

  private func refill() {
    let batch = nextBatch
    nextBatch = min(largestBatch, nextBatch * 4)
    // Made in order, taken from the end: the names are only numbers.
    for index in (made..<made + batch).reversed() {
      let spare = String(index)
      guard mkdirat(holder.handle.fd, spare, 0o755) == 0 else { break }
      stock.append(spare)
    }
    made += batch
  }

  /// Removes the reserve and the folders left in it.
  package func discard() {
    stock.removeAll()
    holder.discard()
  }
}
