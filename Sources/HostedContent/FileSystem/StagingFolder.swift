import XAR

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// A private folder beside a destination, where output is assembled before it is renamed into
/// place. Its name says what it is (`.NAME.pkgtool-<purpose>-<pid>-<random>`), so a later run
/// can remove what a killed run left behind.
public final class StagingFolder {
  public let parent: DirectoryHandle
  public let name: String
  public let handle: DirectoryHandle
  private var published = false

  /// Creates the staging folder for `destinationName` inside `parent`, first removing stale ones
  /// left by processes that no longer run.
  public init(in parent: DirectoryHandle, for destinationName: String, purpose: String) throws {
    self.parent = parent
    StagingFolder.removeStale(in: parent, for: destinationName)
    var made: String?
    for _ in 0..<8 {
      let candidate = ".\(destinationName).pkgtool-\(purpose)-\(getpid())-\(String(UInt32.random(in: 0...UInt32.max), radix: 16))"
      if mkdirat(parent.fd, candidate, 0o700) == 0 {
        made = candidate
        break
      }
      if errno != EEXIST { throw SystemError("create folder", path: parent.path + "/" + candidate) }
    }
    guard let made else { throw SystemError("create folder", path: parent.path, code: EEXIST) }
    name = made
    handle = try parent.openDirectory(made)
  }

  deinit { discard() }

  /// Removes the staging folder and everything in it (unless it was published).
  public func discard() {
    guard !published else { return }
    published = true
    try? parent.removeTree(name)
  }

  /// Renames the staging folder to `destination` in `parent`. With `replace`, an existing
  /// destination is swapped out and removed only after the new one is in place; if anything
  /// fails, the old one is put back.
  public func publish(as destination: String, replace: Bool) throws {
    _ = fchmodat(parent.fd, name, 0o755, 0)
    handle.sync()
    if !parent.exists(destination) {
      try renameNoReplace(parent.fd, name, parent.fd, destination, path: parent.path + "/" + destination)
      published = true
      parent.sync()
      return
    }
    guard replace else { throw SystemError("create", path: parent.path + "/" + destination, code: EEXIST) }
    // One swap: readers of the destination see the old folder or the new one, never neither.
    // The old one is left under the staging name and removed.
    try exchangeEntries(name, in: parent, with: destination, in: parent)
    published = true
    parent.sync()
    try? parent.removeTree(name)
  }

  /// Removes `.NAME.pkgtool-*-<pid>-*` folders and files whose process is gone.
  public static func removeStale(in parent: DirectoryHandle, for destinationName: String) {
    let prefix = ".\(destinationName).pkgtool-"
    guard let names = try? parent.list() else { return }
    for (entry, _) in names where entry.hasPrefix(prefix) {
      let parts = entry.dropFirst(prefix.count).split(separator: "-")
      guard parts.count >= 3, let pid = Int32(parts[parts.count - 2]) else { continue }
      if pid != getpid() && kill(pid, 0) != 0 && errno == ESRCH {
        try? parent.removeTree(entry)
      }
    }
  }
}

#if os(Linux)
  /// glibc's `renameat2`, looked up once (older glibc lacks it; Swift cannot import it).
  private let linuxRenameat2: (@convention(c) (Int32, UnsafePointer<CChar>, Int32, UnsafePointer<CChar>, UInt32) -> Int32)? =
    dlsym(UnsafeMutableRawPointer(bitPattern: 0), "renameat2").map {
      unsafeBitCast($0, to: (@convention(c) (Int32, UnsafePointer<CChar>, Int32, UnsafePointer<CChar>, UInt32) -> Int32).self)
    }
#endif

/// `renameat2(…, RENAME_NOREPLACE)` where the kernel has it, else a checked `renameat`.
func renameNoReplace(_ fromFD: Int32, _ from: String, _ toFD: Int32, _ to: String, path: String) throws {
  #if os(Linux)
    if let renameat2 = linuxRenameat2 {
      if renameat2(fromFD, from, toFD, to, 1) == 0 { return }
      if errno != ENOSYS && errno != EINVAL { throw SystemError("rename to", path: path) }
    }
  #endif
  var info = stat()
  if fstatat(toFD, to, &info, AT_SYMLINK_NOFOLLOW) == 0 { throw SystemError("rename to", path: path, code: EEXIST) }
  guard renameat(fromFD, from, toFD, to) == 0 else { throw SystemError("rename to", path: path) }
}

/// Swaps `a` in `aFolder` with `b` in `bFolder` in one step (`renameat2(RENAME_EXCHANGE)`), so
/// a reader of `b` sees the old or the new entry, never neither. Where the kernel or file system
/// cannot (not Linux, an old kernel, some file systems), falls back to two renames and returns
/// false.
@discardableResult
func exchangeEntries(_ a: String, in aFolder: DirectoryHandle, with b: String, in bFolder: DirectoryHandle) throws -> Bool {
  #if os(Linux)
    if let renameat2 = linuxRenameat2 {
      let renameExchange: UInt32 = 2
      if renameat2(aFolder.fd, a, bFolder.fd, b, renameExchange) == 0 { return true }
      if errno != ENOSYS && errno != EINVAL { throw SystemError("exchange", path: bFolder.path + "/" + b) }
    }
  #endif
  let aside = ".\(b).pkgtool-swap-\(getpid())-\(String(UInt32.random(in: 0...UInt32.max), radix: 16))"
  try bFolder.rename(b, to: aside, in: bFolder)
  do {
    try aFolder.rename(a, to: b, in: bFolder)
  } catch {
    try? bFolder.rename(aside, to: b, in: bFolder)
    throw error
  }
  try bFolder.rename(aside, to: a, in: aFolder)
  return false
}
