#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// An output folder in the making: a private folder beside its destination, under a
/// ``TemporaryName`` (`.NAME.pkgtool-<purpose>-<pid>-<random>`), filled through ``handle``,
/// that becomes the destination whole (``publish(as:replace:)``) or disappears
/// (``discard()``).
///
/// - It is made through ``Interruption/creating(_:_:)``, so an interruption removes it with all
///   it holds; publishing runs inside ``Interruption/whilePublishing(_:_:)``.
/// - Its name says which process made it, so a later run removes what a killed run left
///   (``removeStale(in:for:)``).
/// - If it was neither published nor discarded, `deinit` discards it.
package final class PendingFolder {
  package let parent: DirectoryHandle
  package let name: String
  package let handle: DirectoryHandle
  /// The path it is registered under with ``Interruption``.
  private let registeredPath: String
  private var published = false

  /// Creates the folder for `destinationName` inside `parent`, first removing stale ones
  /// left by processes that no longer run (unless `removingStale` is false: a second temporary
  /// of the same run, whose first already did).
  package init(in parent: DirectoryHandle, for destinationName: String, purpose: String, removingStale: Bool = true)
    throws
  {
    self.parent = parent
    if removingStale { PendingFolder.removeStale(in: parent, for: destinationName) }
    let (made, _) = try PendingName.make(beside: destinationName, in: parent, purpose: purpose) { fd, name, path in
      guard mkdirat(fd, name, 0o700) == 0 else { throw SystemError("create folder", path: path) }
    }
    name = made.temporary
    registeredPath = made.temporaryPath
    handle = try parent.openDirectory(made.temporary)
  }

  deinit { discard() }

  /// Removes the folder and everything in it (unless it was published).
  package func discard() {
    guard !published else { return }
    published = true
    try? parent.removeTree(name)
  }

  /// Renames the folder to `destination` in `parent`. With `replace`, an existing
  /// destination is swapped out and removed only after the new one is in place; if anything
  /// fails, the old one is put back.
  package func publish(as destination: String, replace: Bool) throws {
    _ = fchmodat(parent.fd, name, 0o755, 0)
    handle.sync()
    if !parent.exists(destination) {
      try Interruption.whilePublishing(registeredPath) {
        try renameNoReplace(parent.fd, name, parent.fd, destination, path: parent.path + "/" + destination)
      }
      published = true
      parent.sync()
      return
    }
    guard replace else { throw SystemError("create", path: parent.path + "/" + destination, code: EEXIST) }
    // One swap: readers of the destination see the old folder or the new one, never neither.
    // The old one is left under the folder's temporary name, still registered, so that an
    // interruption while it is removed removes the rest; it is forgotten once gone.
    _ = try Interruption.whilePublishing {
      try exchangeEntries(name, in: parent, with: destination, in: parent)
    }
    published = true
    parent.sync()
    try? parent.removeTree(name)
    Interruption.forget(registeredPath)
  }

  /// Moves `member` of this folder to `destination` in `folder` (same file system). An existing
  /// destination is swapped with it in one step and left here as `member`, to go with this
  /// folder; returns true then. This folder stays pending (registered, discarded later).
  @discardableResult
  package func publish(_ member: String, as destination: String, in folder: DirectoryHandle) throws -> Bool {
    // Never while an interruption removes this folder (see Interruption).
    try Interruption.whilePublishing {
      if folder.exists(destination) {
        try exchangeEntries(member, in: handle, with: destination, in: folder)
        return true
      }
      try renameNoReplace(handle.fd, member, folder.fd, destination, path: folder.path + "/" + destination)
      return false
    }
  }

  /// Removes the temporaries (`.NAME.pkgtool-*-<pid>-*` folders and files) that processes
  /// which no longer run left in `parent`: those for `destinationName`, and those for any
  /// other name too (a killed run's output may have had another name).
  package static func removeStale(in parent: DirectoryHandle, for destinationName: String) {
    guard let names = try? parent.list() else { return }
    for (entry, _) in names {
      // A `swap` name may hold what a destination held before a swap that did not finish: it
      // is the user's, not a temporary.
      guard !entry.contains(".pkgtool-swap-"), let target = TemporaryName.target(of: Substring(entry)),
        TemporaryName.isStale(entry, of: String(target))
      else { continue }
      try? parent.removeTree(entry)
    }
  }
}
