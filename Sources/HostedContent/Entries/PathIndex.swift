import SystemIO

/// Every path a run has seen, shared by the rules that need the whole picture (so each does not
/// keep its own copy): the entries' paths, and the folders their paths imply (archives may omit
/// folder entries).
package final class PathIndex {
  /// Paths of entries.
  package private(set) var entries: Set<String> = []
  /// Folders that only appear as parts of longer paths.
  package private(set) var impliedFolders: Set<String> = []

  package init() {}

  /// True if `path` is an entry or an implied folder.
  package func contains(_ path: String) -> Bool {
    entries.contains(path) || impliedFolders.contains(path)
  }

  /// Records an entry's path and the folders above it.
  package func insert(_ path: String) {
    entries.insert(path)
    var prefix = Substring(path)
    while let slash = prefix.lastIndex(of: "/") {
      prefix = prefix[..<slash]
      let folder = String(prefix)
      if entries.contains(folder) || !impliedFolders.insert(folder).inserted { break }
    }
  }
}
