#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Empty folders made in batches ahead of need, in a private folder beside an output
/// (`.NAME.pkgtool-folders-<pid>-<random>`), and renamed into place one at a time.
///
/// Why: ext4 places a new file's inode by its folder's. A folder made between the files of its
/// neighbours lands in a block group of its own with room to spare, and its files fill that
/// group. When the same tree was just deleted (a CI job that removes its last output and
/// unpacks again), those are the groups it freed, and on a file system without a journal each
/// new inode there is handed out only after the kernel has stepped over every inode freed in
/// the last minute, one by one (`recently_deleted` in `find_inode_bit`): the cost grows with the
/// square of the files per group. Folders made together, before their files, share a group;
/// once it is full, their files go to groups chosen by each folder's inode number. bsdtar gets
/// the same effect because libarchive hands out every folder before any file. Measured on this
/// project's VM (docs/performance-archive.md#round-3-third-part-2026-11-26-folders-before-files):
/// the same 50,000-file unpack, its output deleted before each run, took 3.6, 24, 37 and 36 s
/// with folders made in turn, and 1.9, 6.5, 8.9 and 11.2 s from a reserve.
///
/// A folder taken from the reserve is what `mkdirat(name, 0755)` in place would make (the same
/// mode, umask, owner and inherited attributes; only its inode number and times differ), put
/// there without replacing anything. A package's first 8 folders are made in place, so a small
/// tree costs nothing more; past them the reserve costs at most one unused batch: batches grow
/// from 256 to 1,024 folders, and one is made only where the file system has room to spare (see
/// ``hasRoom(for:)``), so it never decides whether an unpack fits. What is left is removed by
/// ``discard()``; an interruption removes it like any temporary.
package final class FolderReserve {
  private let parent: DirectoryHandle
  private let destinationName: String
  private let inPlaceFirst: Int
  private var asked = 0
  /// The private folder holding the spares, made with the first batch.
  private var holder: PendingFolder?
  /// The spares' names, made in order; `stock[next...]` are still there.
  private var stock: [String] = []
  private var next = 0
  private var nextBatch: Int
  private let largestBatch: Int
  private let minimumFreeBytes: UInt64
  /// Set when a batch could not be made: folders are then made in place.
  private var exhausted = false
  /// Folders handed out so far (for tests and diagnostics).
  package private(set) var taken = 0

  /// Prepares a reserve beside `destinationName` in `parent`. Nothing is made until more than
  /// `inPlaceFirst` folders were asked for: those are made in place by the caller, so a package
  /// of a few folders pays nothing (256 spare folders made and removed are 28 ms on a tiny
  /// package). Batches are made only while the file system has `minimumFreeBytes` free (and see
  /// ``hasRoom(for:)``). Another temporary of this run for the same destination has already
  /// removed stale ones, so this does not look again.
  package init(
    beside destinationName: String, in parent: DirectoryHandle, inPlaceFirst: Int = 8, firstBatch: Int = 256,
    largestBatch: Int = 1024, minimumFreeBytes: UInt64 = 256 << 20
  ) {
    self.parent = parent
    self.destinationName = destinationName
    self.inPlaceFirst = inPlaceFirst
    nextBatch = max(1, firstBatch)
    self.largestBatch = max(nextBatch, largestBatch)
    self.minimumFreeBytes = minimumFreeBytes
  }

  deinit { discard() }

  /// Moves a new empty folder to `name` in `folder` and returns true; false when it could not
  /// (the caller then makes the folder itself, and meets the reason as its own error). Never
  /// replaces anything.
  package func take(_ name: String, in folder: DirectoryHandle) -> Bool {
    Interruption.pauseIfInterrupted()
    asked += 1
    guard asked > inPlaceFirst else { return false }
    if next == stock.count && !exhausted { refill() }
    guard next < stock.count, let holder else { return false }
    do {
      try renameNoReplace(holder.handle.fd, stock[next], folder.fd, name, path: folder.path + "/" + name)
    } catch {
      return false
    }
    next += 1
    taken += 1
    return true
  }

  /// True when the file system holding the reserve has at least `minimumFreeBytes` (256 MiB)
  /// and 4,096 inodes free, and 64 times what `count` more folders take (a block and an inode
  /// each): a reserve must never be what fills a disk.
  private func hasRoom(for count: Int) -> Bool {
    var info = statvfs()
    guard fstatvfs(parent.fd, &info) == 0 else { return false }
    let blockSize = max(UInt64(info.f_frsize), 512)
    let freeBytes = UInt64(info.f_bavail) * blockSize
    let needBytes = UInt64(count) * max(blockSize, 4096)
    // A file system that does not count inodes reports none free and none in all.
    let inodesCounted = info.f_files > 0
    let freeInodes = UInt64(info.f_favail)
    return freeBytes >= max(minimumFreeBytes, 64 * needBytes)
      && (!inodesCounted || freeInodes >= max(4096, 64 * UInt64(count)))
  }

  private func refill() {
    let batch = nextBatch
    nextBatch = min(largestBatch, nextBatch * 4)
    stock.removeAll(keepingCapacity: true)
    next = 0
    guard hasRoom(for: batch) else {
      exhausted = true
      return
    }
    if holder == nil {
      // A name too long for the holder's temporary name: folders are made in place.
      holder = try? PendingFolder(in: parent, for: destinationName, purpose: "folders", removingStale: false)
    }
    guard let holder else {
      exhausted = true
      return
    }
    let first = taken
    for index in first..<first + batch {
      let spare = String(index)
      guard mkdirat(holder.handle.fd, spare, 0o755) == 0 else {
        exhausted = true
        break
      }
      stock.append(spare)
    }
  }

  /// Removes the reserve and the folders left in it.
  package func discard() {
    if let holder {
      for spare in stock[next...] { _ = unlinkat(holder.handle.fd, spare, AT_REMOVEDIR) }
      holder.discard()
    }
    stock.removeAll()
    next = 0
  }
}
