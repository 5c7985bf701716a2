import XAR

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// An open folder. Every operation is relative to it and never follows a symlink in the last
/// component, so nothing can be redirected outside it by a link planted in the way.
public final class DirectoryHandle {
  public let fd: Int32
  /// The path it was opened with, for messages.
  public let path: String

  /// Opens a folder by path (not following a symlink at the last component).
  public init(path: String) throws {
    let fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW)
    guard fd >= 0 else { throw SystemError("open folder", path: path) }
    self.fd = fd
    self.path = path
  }

  private init(fd: Int32, path: String) {
    self.fd = fd
    self.path = path
  }

  deinit { close(fd) }

  private func full(_ name: String) -> String { path.hasSuffix("/") ? path + name : path + "/" + name }

  /// The subfolder `name`, refusing a symlink.
  public func openDirectory(_ name: String) throws -> DirectoryHandle {
    let fd = openat(self.fd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW)
    guard fd >= 0 else { throw SystemError("open folder", path: full(name)) }
    return DirectoryHandle(fd: fd, path: full(name))
  }

  /// Names in this folder (not `.` or `..`), each with its raw bytes, sorted by bytes.
  public func list() throws -> [(name: String, validUTF8: Bool)] {
    let copy = dup(fd)
    guard copy >= 0, let dir = fdopendir(copy) else { throw SystemError("list", path: path) }
    defer { closedir(dir) }
    // The duplicate shares its position with `fd`: start from the beginning every time.
    rewinddir(dir)
    var names: [[UInt8]] = []
    errno = 0
    while let entry = readdir(dir) {
      let bytes = withUnsafeBytes(of: entry.pointee.d_name) { raw in
        Array(raw.prefix { $0 != 0 })
      }
      if bytes == [46] || bytes == [46, 46] { continue }
      names.append(bytes)
    }
    if errno != 0 { throw SystemError("list", path: path) }
    names.sort { $0.lexicographicallyPrecedes($1) }
    return names.map { bytes in
      if let s = String(validating: bytes, as: UTF8.self) { return (s, true) }
      return (String(decoding: bytes, as: UTF8.self), false)
    }
  }

  /// `lstat` of `name`.
  public func status(_ name: String) throws -> stat {
    var info = stat()
    guard fstatat(fd, name, &info, AT_SYMLINK_NOFOLLOW) == 0 else { throw SystemError("inspect", path: full(name)) }
    return info
  }

  /// True if `name` exists (as anything, links not followed).
  public func exists(_ name: String) -> Bool {
    var info = stat()
    return fstatat(fd, name, &info, AT_SYMLINK_NOFOLLOW) == 0
  }

  /// Opens the regular file `name` for reading, refusing a symlink, and anything that is not a
  /// regular file (checked on the opened descriptor; opened without blocking, so a FIFO put in
  /// its place cannot hang the caller).
  public func openFile(_ name: String) throws -> FileDescriptor {
    let fd = openat(self.fd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)
    guard fd >= 0 else { throw SystemError("open", path: full(name)) }
    return try FileDescriptor.checkedRegular(FileDescriptor(owning: fd, path: full(name)))
  }

  /// Creates the file `name`, which must not exist.
  public func createFile(_ name: String, mode: mode_t = 0o644) throws -> FileDescriptor {
    let fd = openat(self.fd, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, mode)
    guard fd >= 0 else { throw SystemError("create", path: full(name)) }
    return FileDescriptor(owning: fd, path: full(name))
  }

  /// Creates the folder `name`, which must not exist.
  public func createDirectory(_ name: String, mode: mode_t = 0o755) throws {
    guard mkdirat(fd, name, mode) == 0 else { throw SystemError("create folder", path: full(name)) }
  }

  /// Creates a symlink `name` → `target`.
  public func createSymlink(_ name: String, target: String) throws {
    guard symlinkat(target, fd, name) == 0 else { throw SystemError("create symlink", path: full(name)) }
  }

  /// The target of the symlink `name`.
  public func readLink(_ name: String) throws -> String {
    var buffer = [CChar](repeating: 0, count: 4097)
    let n = readlinkat(fd, name, &buffer, 4096)
    guard n >= 0 else { throw SystemError("read link", path: full(name)) }
    return String(decoding: buffer[..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
  }

  /// Sets permission bits of `name` (not following links).
  public func setMode(_ name: String, _ mode: mode_t) throws {
    guard fchmodat(fd, name, mode, 0) == 0 else { throw SystemError("set the mode of", path: full(name)) }
  }

  /// Renames `name` here to `newName` in `destination`.
  public func rename(_ name: String, to newName: String, in destination: DirectoryHandle) throws {
    guard renameat(fd, name, destination.fd, newName) == 0 else {
      throw SystemError("rename to", path: destination.full(newName))
    }
  }

  /// Removes `name` and, for a folder, everything in it; links are removed, never followed.
  public func removeTree(_ name: String) throws {
    let info = try status(name)
    if info.st_mode & S_IFMT == S_IFDIR {
      let child = try openDirectory(name)
      for (entry, _) in try child.list() { try child.removeTree(entry) }
      guard unlinkat(fd, name, AT_REMOVEDIR) == 0 else { throw SystemError("remove", path: full(name)) }
    } else {
      guard unlinkat(fd, name, 0) == 0 else { throw SystemError("remove", path: full(name)) }
    }
  }

  /// Flushes the folder's entries (after renames) to stable storage; best effort.
  public func sync() { _ = fsync(fd) }
}

/// Path helpers.
public enum Paths {
  /// The folder part of `path` (`.` for a bare name).
  public static func parent(of path: String) -> String {
    var trimmed = Substring(path)
    while trimmed.count > 1 && trimmed.hasSuffix("/") { trimmed = trimmed.dropLast() }
    guard let slash = trimmed.lastIndex(of: "/") else { return "." }
    return slash == trimmed.startIndex ? "/" : String(trimmed[..<slash])
  }

  /// The last component of `path`.
  public static func name(of path: String) -> String {
    var trimmed = Substring(path)
    while trimmed.count > 1 && trimmed.hasSuffix("/") { trimmed = trimmed.dropLast() }
    guard let slash = trimmed.lastIndex(of: "/") else { return String(trimmed) }
    return String(trimmed[trimmed.index(after: slash)...])
  }

  /// `lstat` of a path; nil if nothing is there.
  public static func status(_ path: String) -> stat? {
    var info = stat()
    return lstat(path, &info) == 0 ? info : nil
  }

  /// True when `a` and `b` name the same existing file (links followed).
  public static func sameFile(_ a: String, _ b: String) -> Bool {
    var x = stat(), y = stat()
    return stat(a, &x) == 0 && stat(b, &y) == 0 && x.st_dev == y.st_dev && x.st_ino == y.st_ino
  }

  /// True if `mode` (from `stat`) is a folder's.
  public static func isDirectoryMode(_ mode: mode_t) -> Bool { mode & S_IFMT == S_IFDIR }

  /// True if `path` is a regular file; a symlink counts only with `followingLinks`.
  public static func isRegularFile(_ path: String, followingLinks: Bool = false) -> Bool {
    var info = stat()
    let found = followingLinks ? stat(path, &info) == 0 : lstat(path, &info) == 0
    return found && info.st_mode & S_IFMT == S_IFREG
  }

  /// True if `path` is a folder (following links).
  public static func isDirectory(_ path: String) -> Bool {
    var info = stat()
    return stat(path, &info) == 0 && info.st_mode & S_IFMT == S_IFDIR
  }

  /// `folder/inner` with `.` components and doubled or trailing slashes taken out, without
  /// touching the file system (`./src/` + `Contents/a` → `src/Contents/a`).
  public static func joinedLexically(_ folder: String, _ inner: String) -> String {
    normalized(folder + "/" + inner)
  }

  /// `path` without `.` components, empty components or a trailing slash; `..` kept as written.
  public static func normalized(_ path: String) -> String {
    let absolute = path.hasPrefix("/")
    let parts = path.split(separator: "/", omittingEmptySubsequences: true).filter { $0 != "." }
    let joined = parts.joined(separator: "/")
    if absolute { return "/" + joined }
    return joined.isEmpty ? "." : joined
  }

  /// `path` made absolute against the working directory, normalized (no link resolved).
  public static func absolute(_ path: String) -> String {
    if path.hasPrefix("/") { return normalizedDots(path) }
    var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
    guard getcwd(&buffer, buffer.count) != nil else { return normalizedDots(path) }
    let cwd = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    return normalizedDots(cwd + "/" + path)
  }

  /// An absolute path with `.` and `..` resolved lexically.
  private static func normalizedDots(_ path: String) -> String {
    var out: [Substring] = []
    for part in path.split(separator: "/") where part != "." {
      if part == ".." { _ = out.popLast() } else { out.append(part) }
    }
    return "/" + out.joined(separator: "/")
  }

  /// `path` relative to the folder `base` (`src/Contents/a` against `src` → `Contents/a`);
  /// nil when `path` is not under `base`.
  public static func relative(_ path: String, to base: String) -> String? {
    let full = absolute(path)
    let root = absolute(base)
    if full == root { return "." }
    let prefix = root == "/" ? "/" : root + "/"
    guard full.hasPrefix(prefix) else { return nil }
    return String(full.dropFirst(prefix.count))
  }
}
