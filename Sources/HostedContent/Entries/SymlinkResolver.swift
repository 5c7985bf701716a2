/// Resolves symlinks among a package's own entries the way a file system would: relative to the
/// link's folder, through other links, with `..` applied after each link is expanded.
///
/// Names are matched the way the device's file system matches them: APFS and HFS+ volumes are
/// case-insensitive and normalization-insensitive by default, so `L/..` passes through a link
/// named `l` there, and `s/..` through one named `ſ` (U+017F). Keys are
/// ``NameEquivalence/key(_:)``, through ``fold(_:)``.
package struct SymlinkResolver {
  /// The key a path is matched under: ``NameEquivalence/key(_:)``.
  package static func fold(_ path: String) -> String { NameEquivalence.key(path) }

  /// True when a symlink target holds a character the OS would cut it at or that no name
  /// should hold (NUL and other control characters).
  package static func hasControlCharacter(_ target: String) -> Bool {
    target.utf8.contains { $0 < 0x20 || $0 == 0x7F }
  }

  /// Where a link leads.
  package enum Resolution: Equatable {
    /// To `path` inside the package; `exists` is false when nothing is there (dangling).
    case inside(path: String, exists: Bool)
    /// The target (or one on the way) is absolute.
    case absolute(String)
    /// The chain climbs above the package root.
    case abovePackageRoot
    /// The chain never ends.
    case loop
  }

  private var links: [String: String] = [:]
  /// What exists, for telling dangling links apart.
  package let paths: PathIndex

  /// A resolver over `paths` (which the caller fills with every entry).
  package init(paths: PathIndex = PathIndex()) {
    self.paths = paths
  }

  /// Records a symlink entry (other kinds are ignored: `paths` knows them).
  package mutating func add(_ entry: PackageEntry) {
    if entry.kind == .symlink { links[SymlinkResolver.fold(entry.path)] = entry.linkTarget ?? "" }
  }

  /// The first proper prefix of `path` that is a symlink, if any.
  package func symlinkedAncestor(of path: String) -> String? {
    guard !links.isEmpty else { return nil }
    var prefix = ""
    let parts = path.split(separator: "/", omittingEmptySubsequences: false).dropLast()
    for part in parts {
      prefix = prefix.isEmpty ? String(part) : prefix + "/" + part
      if links[SymlinkResolver.fold(prefix)] != nil { return prefix }
    }
    return nil
  }

  /// Follows the link at `path` to its end.
  package func resolve(_ path: String) -> Resolution {
    guard let target = links[SymlinkResolver.fold(path)] else {
      return .inside(path: path, exists: paths.contains(path))
    }
    var parts = path.split(separator: "/", omittingEmptySubsequences: false).dropLast().map(String.init)
    var hops = 0
    func split(_ s: String) -> [String] { s.split(separator: "/", omittingEmptySubsequences: true).map(String.init) }
    guard !target.hasPrefix("/") else { return .absolute(target) }
    // Components still to walk; a link met on the way puts its target's components in front.
    var remaining = split(target)
    while !remaining.isEmpty {
      let component = remaining.removeFirst()
      if component == "." { continue }
      if component == ".." {
        guard !parts.isEmpty else { return .abovePackageRoot }
        parts.removeLast()
        continue
      }
      parts.append(component)
      let current = parts.joined(separator: "/")
      if let next = links[SymlinkResolver.fold(current)] {
        hops += 1
        guard hops <= 40 else { return .loop }
        guard !next.hasPrefix("/") else { return .absolute(next) }
        parts.removeLast()
        remaining = split(next) + remaining
      }
    }
    let final = parts.joined(separator: "/")
    return .inside(path: final, exists: final.isEmpty || paths.contains(final))
  }
}
