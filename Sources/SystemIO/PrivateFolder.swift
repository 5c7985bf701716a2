#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// A new folder only this user can enter, in the system temporary folder (`TMPDIR`), for work
/// that has no place beside an output (`build -o -`, a download). It is registered with
/// ``Interruption`` as it is made, so Ctrl-C or SIGTERM removes it with what it holds.
package enum PrivateFolder {
  /// Makes `TMPDIR/PREFIX-XXXXXX` (mode 0700); nil, with `errno` set, when it cannot.
  package static func make(prefix: String) -> String? {
    var template = Array((StandardInput.temporaryFolder + "/" + prefix + "-XXXXXX").utf8CString)
    // The name is known only once made: the lock is held over mkdtemp, and the path registered.
    return Interruption.creatingUnnamed { () -> String? in
      template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }.map { String(cString: $0) }
    }
  }

  /// Removes a folder ``make(prefix:)`` made, with what it holds; best effort.
  package static func remove(_ folder: String) {
    if let parent = try? DirectoryHandle(path: Paths.parent(of: folder)) {
      try? parent.removeTree(Paths.name(of: folder))
    }
  }

  /// Makes `TMPDIR/PREFIX-PID-XXXXXX` (mode 0700) and takes an exclusive `flock` on it, held
  /// until the lock is released or the process ends, however it ends (the kernel drops it with
  /// the descriptor): the name says whose the folder is, the lock that it is still in use.
  /// nil, with `errno` set, when it cannot be made.
  package static func makeOwned(prefix: String) -> (path: String, lock: FileLock)? {
    guard let made = make(prefix: "\(prefix)-\(getpid())") else { return nil }
    guard let folder = try? DirectoryHandle(path: made), let lock = try? FileLock(folder: folder, timeout: 0) else {
      let code = errno
      remove(made)
      Interruption.forget(made)
      errno = code
      return nil
    }
    return (made, lock)
  }

  /// Removes the folders ``makeOwned(prefix:)`` made in `TMPDIR` that processes killed before
  /// they could remove them left (SIGKILL, a crash, a power cut): those of this user whose lock
  /// can be taken, so no running process holds them, and whose process no longer runs, or that
  /// are older than ten minutes (their process id now belongs to another process). A folder
  /// younger than two seconds is left alone: its maker may be between `mkdtemp` and `flock`, in
  /// a PID namespace that this one cannot see. Best effort; returns how many were removed.
  @discardableResult
  package static func removeLeftovers(prefix: String, now: Double = Double(time(nil))) -> Int {
    let parentPath = StandardInput.temporaryFolder
    guard let parent = try? DirectoryHandle(path: parentPath), let entries = try? parent.list() else { return 0 }
    var removed = 0
    for (entry, _) in entries {
      guard let pid = ownerProcess(entry, prefix: prefix), pid != getpid(),
        let info = try? parent.status(entry), info.st_mode & S_IFMT == S_IFDIR, info.st_uid == getuid()
      else { continue }
      #if canImport(Darwin)
        let age = now - Double(info.st_mtimespec.tv_sec)
      #else
        let age = now - Double(info.st_mtim.tv_sec)
      #endif
      let gone = kill(pid, 0) != 0 && errno == ESRCH
      guard age >= 2, gone || age >= 600,
        let folder = try? parent.openDirectory(entry), let lock = try? FileLock(folder: folder, timeout: 0)
      else { continue }
      // Removed while the lock is held: a second run sweeping at the same time skips it.
      if (try? parent.removeTree(entry)) != nil { removed += 1 }
      withExtendedLifetime(lock) {}
    }
    return removed
  }

  /// The process id in `PREFIX-PID-XXXXXX`, or nil when `entry` is not such a name.
  static func ownerProcess(_ entry: String, prefix: String) -> pid_t? {
    guard entry.hasPrefix(prefix + "-") else { return nil }
    let parts = entry.dropFirst(prefix.count + 1).split(separator: "-", omittingEmptySubsequences: false)
    guard parts.count == 2, parts[1].count == 6, !parts[0].isEmpty, parts[0].allSatisfy(\.isASCII),
      let pid = pid_t(parts[0]), pid > 0
    else { return nil }
    return pid
  }
}
