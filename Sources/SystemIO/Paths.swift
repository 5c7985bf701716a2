#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Path helpers.
package enum Paths {
  /// The folder part of `path` (`.` for a bare name).
  package static func parent(of path: String) -> String {
    var trimmed = Substring(path)
    while trimmed.count > 1 && trimmed.hasSuffix("/") { trimmed = trimmed.dropLast() }
    guard let slash = trimmed.lastIndex(of: "/") else { return "." }
    return slash == trimmed.startIndex ? "/" : String(trimmed[..<slash])
  }

  /// The last component of `path`.
  package static func name(of path: String) -> String {
    var trimmed = Substring(path)
    while trimmed.count > 1 && trimmed.hasSuffix("/") { trimmed = trimmed.dropLast() }
    guard let slash = trimmed.lastIndex(of: "/") else { return String(trimmed) }
    return String(trimmed[trimmed.index(after: slash)...])
  }

  /// `lstat` of a path; nil if nothing is there.
  package static func status(_ path: String) -> stat? {
    var info = stat()
    return lstat(path, &info) == 0 ? info : nil
  }

  /// The device and inode of the file at `path` (links followed); nil if nothing is there.
  package static func identity(of path: String) -> (device: UInt64, inode: UInt64)? {
    var info = stat()
    guard stat(path, &info) == 0 else { return nil }
    return (UInt64(info.st_dev), UInt64(info.st_ino))
  }

  /// What changes whenever the file at `path` (links followed) is replaced or written: its
  /// device, inode, size, modification and change times, and link count (in that order); nil if
  /// nothing is there.
  package static func changeStamp(of path: String) -> [Int64]? {
    var info = stat()
    guard stat(path, &info) == 0 else { return nil }
    return stampValues(info)
  }

  /// ``changeStamp(of:)-(String)`` of an open file: equal to the path's while the path still
  /// names this file and nothing wrote to it.
  package static func changeStamp(of file: FileDescriptor) throws -> [Int64] {
    var info = stat()
    guard fstat(file.rawValue, &info) == 0 else { throw SystemError("inspect", path: file.path) }
    return stampValues(info)
  }

  private static func stampValues(_ info: stat) -> [Int64] {
    #if canImport(Darwin)
      return [
        Int64(info.st_dev), Int64(bitPattern: UInt64(info.st_ino)), Int64(info.st_size),
        Int64(info.st_mtimespec.tv_sec), Int64(info.st_mtimespec.tv_nsec),
        Int64(info.st_ctimespec.tv_sec), Int64(info.st_ctimespec.tv_nsec), Int64(info.st_nlink),
      ]
    #else
      return [
        Int64(bitPattern: UInt64(info.st_dev)), Int64(bitPattern: UInt64(info.st_ino)), Int64(info.st_size),
        Int64(info.st_mtim.tv_sec), Int64(info.st_mtim.tv_nsec), Int64(info.st_ctim.tv_sec),
        Int64(info.st_ctim.tv_nsec), Int64(info.st_nlink),
      ]
    #endif
  }

  /// True when `a` and `b` name the same existing file (links followed).
  package static func sameFile(_ a: String, _ b: String) -> Bool {
    var x = stat()
    var y = stat()
    return stat(a, &x) == 0 && stat(b, &y) == 0 && x.st_dev == y.st_dev && x.st_ino == y.st_ino
  }

  /// True when the folder `inner` is `outer` or lies anywhere beneath it (links followed, by
  /// identity: whatever paths name them).
  package static func isWithin(_ inner: String, folder outer: String) -> Bool {
    guard let target = identity(of: outer) else { return false }
    var current = inner
    for _ in 0..<4096 {
      guard let here = identity(of: current) else { return false }
      if here == target { return true }
      guard let up = identity(of: current + "/.."), up != here else { return false }
      current += "/.."
    }
    return false
  }

  /// True if `mode` (from `stat`) is a folder's.
  package static func isDirectoryMode(_ mode: mode_t) -> Bool { mode & S_IFMT == S_IFDIR }

  /// True if `path` is a regular file; a symlink counts only with `followingLinks`.
  package static func isRegularFile(_ path: String, followingLinks: Bool = false) -> Bool {
    var info = stat()
    let found = followingLinks ? stat(path, &info) == 0 : lstat(path, &info) == 0
    return found && info.st_mode & S_IFMT == S_IFREG
  }

  /// True if `path` is a folder (following links).
  package static func isDirectory(_ path: String) -> Bool {
    var info = stat()
    return stat(path, &info) == 0 && info.st_mode & S_IFMT == S_IFDIR
  }

  /// `folder/inner` with `.` components and doubled or trailing slashes taken out, without
  /// touching the file system (`./src/` + `Contents/a` → `src/Contents/a`).
  package static func joinedLexically(_ folder: String, _ inner: String) -> String {
    normalized(folder + "/" + inner)
  }

  /// `path` without `.` components, empty components or a trailing slash; `..` kept as written.
  package static func normalized(_ path: String) -> String {
    let absolute = path.hasPrefix("/")
    let parts = path.split(separator: "/", omittingEmptySubsequences: true).filter { $0 != "." }
    let joined = parts.joined(separator: "/")
    if absolute { return "/" + joined }
    return joined.isEmpty ? "." : joined
  }

  /// `path` made absolute against the working directory, normalized (no link resolved).
  package static func absolute(_ path: String) -> String {
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
  package static func relative(_ path: String, to base: String) -> String? {
    let full = absolute(path)
    let root = absolute(base)
    if full == root { return "." }
    let prefix = root == "/" ? "/" : root + "/"
    guard full.hasPrefix(prefix) else { return nil }
    return String(full.dropFirst(prefix.count))
  }
}
