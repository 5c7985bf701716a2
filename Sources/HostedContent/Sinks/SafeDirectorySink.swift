import SystemIO

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Writes entries under a private folder, the way a careful client would:
///
/// - every folder and file is created relative to an open folder handle, with no-follow flags,
///   and files with `O_EXCL`, so nothing already there (or planted by an earlier entry) is
///   followed or overwritten;
/// - names are checked again here (`..`, `.`, empty, absolute, control characters are refused);
///   nothing is written under a symlink or at a symlink's name, with names matched as the device
///   matches them (``NameEquivalence``), so the verdict does not hang on the destination's file
///   system; other names that are one on the device are refused by the file system where it is
///   case-insensitive (`O_EXCL`), and by `duplicate-path` everywhere;
/// - symlinks are created last, by ``commitSymlinks()``, and only when they resolve inside
///   `Contents/`;
/// - no device, FIFO, socket, special bit, owner, ACL or extended attribute is ever applied;
///   files get 0644 and folders 0755.
package final class SafeDirectorySink: EntrySink {
  private let root: DirectoryHandle
  private var folders: FolderTable
  private var symlinks: [(path: String, target: String)] = []
  /// The symlinks' paths, by ``NameEquivalence/key(_:)``: nothing else may take a link's name
  /// as the device matches names, whatever the destination's file system matches.
  private var reserved: Set<String> = []
  private var resolver = SymlinkResolver()
  private var current: FileDescriptor?
  /// Where ``current`` is, so an abandoned file can be removed.
  private var currentPlace: (folder: DirectoryHandle, name: String)?
  /// Files written.
  package private(set) var fileCount = 0
  /// The bytes of the files written (an abandoned file's bytes are not counted).
  package private(set) var byteCount: UInt64 = 0
  /// The bytes of the file being written so far.
  private var entryBytes: UInt64 = 0

  // Files up to `BackgroundFileWriter.fileLimit` are gathered and written by worker threads
  // (with `threads` > 1).
  private let threads: Int
  private let background = BackgroundFileWriter()
  private var whole: (folder: DirectoryHandle, name: String, bytes: [UInt8])?

  /// Where folders come from when there is one: made ahead of the files (see ``FolderReserve``).
  private let reserve: FolderReserve?

  /// Writes into `root`, a folder this run created and no one else writes to; folders are
  /// taken from `reserve` when one is given.
  package init(root: DirectoryHandle, threads: Int = 1, reserve: FolderReserve? = nil) {
    self.root = root
    folders = FolderTable(root: root)
    self.threads = max(1, threads)
    self.reserve = reserve
  }

  /// Makes the folder `name` in `parent` (which must not hold it).
  private func makeFolder(_ name: String, in parent: DirectoryHandle) throws {
    if let reserve, reserve.take(name, in: parent) { return }
    try parent.createDirectory(name, mode: 0o755)
  }

  deinit { try? background.wait() }

  /// Waits for the worker threads; throws the first error one of them met.
  package func waitForWrites() throws { try background.wait() }

  private func split(_ path: String) -> (parent: String, name: String) { splitPath(path) }

  /// Keeps its paths (and the marks of files written) in the run's index: one copy of every
  /// path, not two. Only before the first entry.
  package func share(_ paths: PathIndex) {
    guard paths !== resolver.paths, resolver.paths.entryCount == 0 else { return }
    resolver = SymlinkResolver(paths: paths)
  }

  /// True if a file (or hard link) was written at `path`: the resolver's path index marks them.
  private func isFile(_ path: String) -> Bool { resolver.paths.isMarked(path) }

  /// The handle of folder `path`, creating missing folders (an archive may omit them).
  private func folder(_ path: String) throws -> DirectoryHandle? {
    if let handle = try folders.handle(path) { return handle }
    let (parentPath, name) = split(path)
    guard reserved.isEmpty || !reserved.contains(NameEquivalence.key(path)), !isFile(path),
      let parent = try folder(parentPath)
    else {
      return nil
    }
    if !parent.exists(name) {
      try makeFolder(name, in: parent)
    }
    guard let handle = try? parent.openDirectory(name) else { return nil }  // a file is in the way
    folders.add(path, handle)
    return handle
  }

  package func begin(_ entry: PackageEntry) throws -> String? {
    if let problem = PathSafetyRule.problem(with: entry.path, validUTF8: entry.pathIsValidUTF8) {
      return "refused to write: \(problem)"
    }
    resolver.add(entry)
    resolver.paths.insert(entry.path)
    if let link = resolver.symlinkedAncestor(of: entry.path) {
      return "refused to write: the path lies under the symlink '\(link)'"
    }
    let (parentPath, name) = split(entry.path)
    guard let parent = try folder(parentPath) else {
      return "refused to write: '\(parentPath)' is not a folder"
    }
    if !reserved.isEmpty && reserved.contains(NameEquivalence.key(entry.path)) {
      return "refused to write: the path appears twice"
    }
    switch entry.kind {
    case .directory:
      if folders.contains(entry.path) { return nil }  // a repeated folder entry changes nothing
      guard !parent.exists(name) else { return "refused to write: the path appears twice" }
      try makeFolder(name, in: parent)
      folders.add(entry.path, try parent.openDirectory(name))
    case .file:
      guard !isFile(entry.path), !parent.exists(name) else { return "refused to write: the path appears twice" }
      resolver.paths.mark(entry.path)
      fileCount += 1
      if threads > 1 && entry.size <= UInt64(BackgroundFileWriter.fileLimit) {
        whole = (parent, name, background.takeBuffer())
      } else {
        current = try parent.createFile(name, mode: 0o644)
        currentPlace = (parent, name)
      }
    case .hardLink:
      let target = entry.linkTarget ?? ""
      guard entry.size == 0 else { return "refused to write: the hard link carries data of its own" }
      try waitForWrites()  // the target may still be being written
      guard isFile(target), !isFile(entry.path), !parent.exists(name) else {
        return "refused to write: the hard link's target '\(target)' is not a file written before"
      }
      let (targetParent, targetName) = split(target)
      guard let targetFolder = try folders.handle(targetParent) else {
        return "refused to write: hard link target not found"
      }
      try parent.createHardLink(name, to: targetName, in: targetFolder)
      resolver.paths.mark(entry.path)
    case .symlink:
      guard !parent.exists(name) else { return "refused to write: the path appears twice" }
      reserved.insert(NameEquivalence.key(entry.path))
      symlinks.append((entry.path, entry.linkTarget ?? ""))
    default:
      return "refused to write: a \(entry.kind.rawValue) is never created"
    }
    return nil
  }

  package func write(_ bytes: UnsafeRawBufferPointer) throws {
    entryBytes += UInt64(bytes.count)
    if let job = whole {
      // The engine never passes more than the declared size; the buffer holds the limit.
      guard job.bytes.count + bytes.count <= BackgroundFileWriter.fileLimit else {
        throw SystemError("write", path: job.name, code: EFBIG)
      }
      whole!.bytes.append(contentsOf: bytes)
    } else {
      try current?.write(bytes)
    }
  }

  package func end(_ entry: PackageEntry) throws {
    byteCount += entryBytes
    entryBytes = 0
    current = nil
    currentPlace = nil
    if let job = whole {
      whole = nil
      background.write(job.bytes, to: job.name, in: job.folder)
    }
  }

  /// Removes the file being written (its bytes could not all be read); it is never published.
  package func abandon(_ entry: PackageEntry) {
    entryBytes = 0
    if let job = whole {
      whole = nil
      background.giveBack(job.bytes)
    }
    if let place = currentPlace {
      current = nil
      currentPlace = nil
      place.folder.removeFileIfPresent(place.name)
    }
    if resolver.paths.unmark(entry.path) { fileCount -= 1 }
  }

  /// Forgets the recorded symlinks that lead to one of `skipped` (or into a folder among them)
  /// through any chain of links, so that ``commitSymlinks()`` does not create them: `unpack
  /// --keep-going` writes no link whose target the package holds but the folder will not.
  /// Returns each forgotten link's path with the skipped path it leads to.
  package func forgetSymlinks(leadingTo skipped: Set<String>) -> [(path: String, target: String)] {
    guard !skipped.isEmpty else { return [] }
    func isSkipped(_ path: String) -> Bool {
      var candidate = Substring(path)
      while true {
        if skipped.contains(String(candidate)) { return true }
        guard let slash = candidate.lastIndex(of: "/") else { return false }
        candidate = candidate[..<slash]
      }
    }
    var forgotten: [(path: String, target: String)] = []
    symlinks.removeAll { link in
      guard case .inside(let final, _) = resolver.resolve(link.path), isSkipped(final) else { return false }
      forgotten.append((link.path, final))
      return true
    }
    return forgotten
  }

  /// Creates the symlinks recorded, those that stay inside `Contents/`. Returns the paths of
  /// those it refused (the rules report them; this is a second line of defence).
  @discardableResult
  package func commitSymlinks() throws -> [String] {
    try waitForWrites()
    var refused: [String] = []
    for (path, target) in symlinks {
      guard !SymlinkResolver.hasControlCharacter(target), case .inside(let final, _) = resolver.resolve(path),
        final.hasPrefix("Contents/") || final == "Contents"
      else {
        refused.append(path)
        continue
      }
      let (parentPath, name) = split(path)
      guard let parent = try folders.handle(parentPath), !parent.exists(name) else {
        refused.append(path)
        continue
      }
      try parent.createSymlink(name, target: target)
    }
    return refused
  }
}

/// `a/b/c` → (`a/b`, `c`); `c` → (``, `c`).
private func splitPath(_ path: String) -> (parent: String, name: String) {
  guard let slash = path.lastIndex(of: "/") else { return ("", path) }
  return (String(path[..<slash]), String(path[path.index(after: slash)...]))
}

/// The folders a ``SafeDirectorySink`` made, by path, with a few of them held open. Holding every
/// one open took a descriptor per folder: a package of 300 folders could not be unpacked where a
/// process may open 256 files (macOS's default), nor one of 1,100 under Linux's usual 1,024. A
/// folder not held is opened again from its parent, one component at a time, never following a
/// symlink, inside the tree this run made and no one else writes to.
private struct FolderTable {
  private let root: DirectoryHandle
  private var made: Set<String> = [""]
  private var open: [String: DirectoryHandle] = [:]
  /// Folders held open at most (besides the root). Entries come folder by folder in every
  /// package seen, so a few suffice; the writer threads hold at most a few more.
  private static let limit = 32

  init(root: DirectoryHandle) { self.root = root }

  /// True if the sink made the folder `path` (or it is the root, "").
  func contains(_ path: String) -> Bool { made.contains(path) }

  /// Records a folder just made, and holds it open.
  mutating func add(_ path: String, _ handle: DirectoryHandle) {
    made.insert(path)
    hold(path, handle)
  }

  /// The handle of a folder the sink made, opened again if it is not held; nil if the sink did
  /// not make `path`.
  mutating func handle(_ path: String) throws -> DirectoryHandle? {
    if path.isEmpty { return root }
    if let handle = open[path] { return handle }
    guard made.contains(path) else { return nil }
    let (parentPath, name) = splitPath(path)
    guard let parent = try handle(parentPath) else { return nil }
    let handle = try parent.openDirectory(name)
    hold(path, handle)
    return handle
  }

  private mutating func hold(_ path: String, _ handle: DirectoryHandle) {
    if open.count >= FolderTable.limit { open.removeAll(keepingCapacity: true) }
    open[path] = handle
  }
}
