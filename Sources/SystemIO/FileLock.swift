#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// An exclusive `flock` on a file inside a folder, held until the value is released (or the
/// process ends, whatever kills it: the kernel drops the lock with the descriptor).
package final class FileLock {
  private let fd: Int32
  /// The lock file, for messages.
  package let path: String

  /// Why a lock could not be taken.
  package struct Busy: Error, CustomStringConvertible {
    package var path: String
    package var waited: Double
    package var description: String {
      "another pkgtool is working in '\(Paths.parent(of: path))' (it holds '\(Paths.name(of: path))'); waited \(Int(waited)) s"
    }
  }

  /// Takes the lock on `name` in `folder`, creating the file (never following a symlink).
  /// Waits up to `timeout` seconds for another holder, then throws ``Busy``.
  package init(_ name: String, in folder: DirectoryHandle, timeout: Double) throws {
    path = folder.path + "/" + name
    let fd = openat(folder.fd, name, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0o644)
    guard fd >= 0 else { throw SystemError("open lock file", path: path) }
    var info = stat()
    guard fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFREG else {
      close(fd)
      throw SystemError("open lock file", path: path, code: EINVAL)
    }
    try FileLock.acquire(fd, path: path, timeout: timeout)
    self.fd = fd
  }

  /// Takes the lock on `folder` itself (a `flock` on the folder, so no lock file is left
  /// beside what the command writes there). Waits up to `timeout` seconds, then throws ``Busy``.
  package init(folder: DirectoryHandle, timeout: Double) throws {
    path = folder.path + "/."
    let fd = dup(folder.fd)
    guard fd >= 0 else { throw SystemError("lock", path: folder.path) }
    _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
    try FileLock.acquire(fd, path: path, timeout: timeout)
    self.fd = fd
  }

  /// Takes an exclusive `flock` on `fd`, waiting up to `timeout` seconds; on failure closes
  /// `fd` and throws (``Busy`` when another holder kept it).
  private static func acquire(_ fd: Int32, path: String, timeout: Double) throws {
    let start = monotonicSeconds()
    while flock(fd, LOCK_EX | LOCK_NB) != 0 {
      let code = errno
      guard code == EWOULDBLOCK || code == EINTR else {
        close(fd)
        throw SystemError("lock", path: path, code: code)
      }
      let waited = monotonicSeconds() - start
      guard waited < timeout else {
        close(fd)
        throw Busy(path: path, waited: waited)
      }
      usleep(20_000)
    }
  }

  deinit {
    _ = flock(fd, LOCK_UN)
    close(fd)
  }

  private static func monotonicSeconds() -> Double {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
  }
}
