#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// A private folder beside a destination, where output is assembled before it is renamed into
/// place. Its name says what it is (`.NAME.pkgtool-<purpose>-<pid>-<random>`), so a later run
/// can remove what a killed run left behind.
package final class StagingFolder {
  package let parent: DirectoryHandle
  package let name: String
  package let handle: DirectoryHandle
  private var published = false

  /// Creates the staging folder for `destinationName` inside `parent`, first removing stale ones
  /// left by processes that no longer run.
  package init(in parent: DirectoryHandle, for destinationName: String, purpose: String) throws {
    self.parent = parent
    StagingFolder.removeStale(in: parent, for: destinationName)
    var made: String?
    for _ in 0..<8 {
      let candidate = TemporaryName.beside(destinationName, purpose: purpose)
      let path = parent.path + "/" + candidate
      do {
        try Interruption.creating(path) {
          guard mkdirat(parent.fd, candidate, 0o700) == 0 else { throw SystemError("create folder", path: path) }
        }
        made = candidate
        break
      } catch let error as SystemError where error.code == EEXIST {
        continue
      }
    }
    guard let made else { throw SystemError("create folder", path: parent.path, code: EEXIST) }
    name = made
    handle = try parent.openDirectory(made)
  }

  deinit { discard() }

  /// Removes the staging folder and everything in it (unless it was published).
  package func discard() {
    guard !published else { return }
    published = true
    try? parent.removeTree(name)
  }

  /// Renames the staging folder to `destination` in `parent`. With `replace`, an existing
  /// destination is swapped out and removed only after the new one is in place; if anything
  /// fails, the old one is put back.
  package func publish(as destination: String, replace: Bool) throws {
    _ = fchmodat(parent.fd, name, 0o755, 0)
    handle.sync()
    let registeredName = parent.path + "/" + name
    if !parent.exists(destination) {
      try Interruption.whilePublishing(registeredName) {
        try renameNoReplace(parent.fd, name, parent.fd, destination, path: parent.path + "/" + destination)
      }
      published = true
      parent.sync()
      return
    }
    guard replace else { throw SystemError("create", path: parent.path + "/" + destination, code: EEXIST) }
    // One swap: readers of the destination see the old folder or the new one, never neither.
    // The old one is left under the staging name and removed.
    _ = try Interruption.whilePublishing(registeredName) {
      try exchangeEntries(name, in: parent, with: destination, in: parent)
    }
    published = true
    parent.sync()
    try? parent.removeTree(name)
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
