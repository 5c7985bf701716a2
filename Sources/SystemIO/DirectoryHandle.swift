#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// An open folder. Every operation is relative to it and never follows a symlink in the last
/// component, so nothing can be redirected outside it by a link planted in the way.
package final class DirectoryHandle: Sendable {
  package let fd: Int32
  /// The path it was opened with, for messages.
  package let path: String

  /// Opens a folder by path (not following a symlink at the last component).
  package init(path: String) throws {
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
  package func openDirectory(_ name: String) throws -> DirectoryHandle {
    let fd = openat(self.fd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW)
    guard fd >= 0 else { throw SystemError("open folder", path: full(name)) }
    return DirectoryHandle(fd: fd, path: full(name))
  }

  /// Names in this folder (not `.` or `..`), each with its raw bytes, sorted by bytes.
  package func list() throws -> [(name: String, validUTF8: Bool)] {
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
  package func status(_ name: String) throws -> stat {
    var info = stat()
    guard fstatat(fd, name, &info, AT_SYMLINK_NOFOLLOW) == 0 else { throw SystemError("inspect", path: full(name)) }
    return info
  }

  /// True if `name` exists (as anything, links not followed).
  package func exists(_ name: String) -> Bool {
    var info = stat()
    return fstatat(fd, name, &info, AT_SYMLINK_NOFOLLOW) == 0
  }

  /// Opens the regular file `name` for reading, refusing a symlink, and anything that is not a
  /// regular file (checked on the opened descriptor; opened without blocking, so a FIFO put in
  /// its place cannot hang the caller).
  package func openFile(_ name: String) throws -> FileDescriptor {
    try openFileAndSize(name).file
  }

  /// Like ``openFile(_:)``, with the size the file had once opened.
  package func openFileAndSize(_ name: String) throws -> (file: FileDescriptor, size: UInt64) {
    let fd = openat(self.fd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)
    guard fd >= 0 else { throw SystemError("open", path: full(name)) }
    let file = FileDescriptor(owning: fd, path: full(name))
    return (file, try FileDescriptor.regularSize(of: file))
  }

  /// Creates the file `name`, which must not exist.
  package func createFile(_ name: String, mode: mode_t = 0o644) throws -> FileDescriptor {
    Interruption.pauseIfInterrupted()
    let fd = openat(self.fd, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, mode)
    guard fd >= 0 else { throw SystemError("create", path: full(name)) }
    return FileDescriptor(owning: fd, path: full(name))
  }

  /// Creates the folder `name`, which must not exist.
  package func createDirectory(_ name: String, mode: mode_t = 0o755) throws {
    Interruption.pauseIfInterrupted()
    guard mkdirat(fd, name, mode) == 0 else { throw SystemError("create folder", path: full(name)) }
  }

  /// Creates a symlink `name` → `target`.
  package func createSymlink(_ name: String, target: String) throws {
    Interruption.pauseIfInterrupted()
    guard symlinkat(target, fd, name) == 0 else { throw SystemError("create symlink", path: full(name)) }
  }

  /// The target of the symlink `name`.
  package func readLink(_ name: String) throws -> String {
    var buffer = [CChar](repeating: 0, count: 4097)
    let n = readlinkat(fd, name, &buffer, 4096)
    guard n >= 0 else { throw SystemError("read link", path: full(name)) }
    return String(decoding: buffer[..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
  }

  /// Sets permission bits of `name` (not following links).
  package func setMode(_ name: String, _ mode: mode_t) throws {
    guard fchmodat(fd, name, mode, 0) == 0 else { throw SystemError("set the mode of", path: full(name)) }
  }

  /// Renames `name` here to `newName` in `destination`.
  package func rename(_ name: String, to newName: String, in destination: DirectoryHandle) throws {
    guard renameat(fd, name, destination.fd, newName) == 0 else {
      throw SystemError("rename to", path: destination.full(newName))
    }
  }

  /// Removes `name` and, for a folder, everything in it; links are removed, never followed.
  /// Something already gone counts as removed, and a part that cannot be removed does not stop
  /// the rest: the first error is thrown at the end.
  package func removeTree(_ name: String) throws {
    var info = stat()
    guard fstatat(fd, name, &info, AT_SYMLINK_NOFOLLOW) == 0 else {
      if errno == ENOENT { return }
      throw SystemError("inspect", path: full(name))
    }
    if info.st_mode & S_IFMT == S_IFDIR {
      let child = try openDirectory(name)
      var firstError: Error?
      for (entry, _) in try child.list() {
        do { try child.removeTree(entry) } catch { firstError = firstError ?? error }
      }
      if let firstError { throw firstError }
      guard unlinkat(fd, name, AT_REMOVEDIR) == 0 || errno == ENOENT else {
        throw SystemError("remove", path: full(name))
      }
    } else {
      guard unlinkat(fd, name, 0) == 0 || errno == ENOENT else { throw SystemError("remove", path: full(name)) }
    }
  }

  /// Makes `name` here a second name of the file `targetName` in `targetFolder` (never
  /// following a symlink at either end); fails with `EEXIST` if `name` exists.
  package func createHardLink(_ name: String, to targetName: String, in targetFolder: DirectoryHandle) throws {
    Interruption.pauseIfInterrupted()
    guard linkat(targetFolder.fd, targetName, fd, name, 0) == 0 else {
      throw SystemError("create hard link", path: full(name))
    }
  }

  /// Removes the file (or link) `name`, if it is there; best effort, for cleaning up.
  package func removeFileIfPresent(_ name: String) { _ = unlinkat(fd, name, 0) }

  /// Flushes the folder's entries (after renames) to stable storage; best effort.
  package func sync() { _ = fsync(fd) }
}
