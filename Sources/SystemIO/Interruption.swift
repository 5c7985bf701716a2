#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// The temporaries this process made beside its outputs, so that an interrupted run (Ctrl-C,
/// SIGTERM) removes them before it exits.
///
/// Every temporary is made through ``creating(_:_:)``, which registers it by path as it is
/// made (``PendingFile`` and ``PendingFolder`` do). None of them is ever an output: an output
/// appears by a rename of its temporary, after which the temporary's name no longer exists, so
/// removing every registered name on an interruption removes only unfinished work. (A folder
/// published over an existing one swaps with it: its temporary name then holds what was there
/// before, which is removed at once; it stays registered until it is gone, so an interruption
/// during that removal finishes it.)
package enum Interruption {
  private nonisolated(unsafe) static var registered: Set<String> = []
  private nonisolated(unsafe) static let lock: UnsafeMutablePointer<pthread_mutex_t> = {
    let lock = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    pthread_mutex_init(lock, nil)
    return lock
  }()

  private static func locked<T>(_ body: () -> T) -> T {
    pthread_mutex_lock(lock)
    defer { pthread_mutex_unlock(lock) }
    return body()
  }

  private nonisolated(unsafe) static var interrupted = false
  /// Temporaries that become their target when the run is interrupted (temporary path → target
  /// path), until superseded: see ``publishOnInterruption(_:as:)``.
  private nonisolated(unsafe) static var fallbacks: [String: String] = [:]

  /// Makes the registered temporary at `temporary` the output at `target` if the run is
  /// interrupted before ``whilePublishing(_:superseding:_:)`` supersedes it: a report that says
  /// the run did not finish, put where an interrupted run would otherwise leave the previous
  /// run's report.
  package static func publishOnInterruption(_ temporary: String, as target: String) {
    locked { fallbacks[temporary] = target }
  }

  /// Drops what ``publishOnInterruption(_:as:)`` registered for `temporary`.
  package static func forgetFallback(_ temporary: String) { locked { _ = fallbacks.removeValue(forKey: temporary) } }

  /// Renames every registered fallback over its target (the first step of an interruption's
  /// clean-up); returns the targets written and those that could not be.
  package static func publishFallbacks() -> (written: [String], failed: [String]) {
    let pending = locked { () -> [String: String] in
      let all = fallbacks
      fallbacks = [:]
      return all
    }
    var written: [String] = []
    var failed: [String] = []
    for (temporary, target) in pending.sorted(by: { $0.value < $1.value }) {
      if rename(temporary, target) == 0 { written.append(target) } else { failed.append(target) }
    }
    return (written, failed)
  }

  /// Marks the process as interrupted: from now on it ends only through the interruption's
  /// own exit (see ``endUnlessInterrupted(_:)``).
  package static func begin() { locked { interrupted = true } }

  /// True once an interruption is being handled.
  package static var isInterrupted: Bool { locked { interrupted } }

  /// Exits with `status`, unless an interruption is being handled: then the thread removing
  /// the temporaries ends the process (an error the interruption caused, such as a staging
  /// folder that vanished, must not end it first with another status).
  package static func endUnlessInterrupted(_ status: Int32) -> Never {
    pauseIfInterrupted()
    exit(status)
  }

  /// Runs `body`, which moves a temporary folder (or what it holds) into place, so that it and
  /// the removal of temporaries on an interruption exclude each other: a folder half removed is
  /// never published, and a folder being published is never removed. Once an interruption has
  /// begun, `body` does not run: the thread waits for the interruption to end the process.
  /// `published` (the folder's own temporary name, renamed away by `body`) is forgotten in the
  /// same step. After a swap the name still exists, holding what was there before: the caller
  /// then passes no `published`, removes it, and calls ``forget(_:)``.
  /// `superseding` is a fallback (``publishOnInterruption(_:as:)``) this output replaces: it is
  /// dropped in the same step, so an interruption either publishes the fallback and `body` never
  /// runs, or finds the output in place and the fallback gone.
  package static func whilePublishing<T>(
    _ published: String? = nil, superseding: String? = nil, _ body: () throws -> T
  ) rethrows -> T {
    try uninterrupted {
      let result = try body()
      if let published { registered.remove(published) }
      if let superseding { fallbacks.removeValue(forKey: superseding) }
      return result
    }
  }

  /// Runs `body`, which creates a temporary file or folder at `path` (as the process names it)
  /// or throws, and records `path` once it is made, so that making a temporary and the removal
  /// of temporaries on an interruption exclude each other: a temporary made is always seen by
  /// the removal, and once an interruption has begun no new one is made (the thread waits for
  /// the interruption to end the process). Registering first and creating afterwards left a
  /// window in which the removal found nothing at the name and the file then appeared.
  package static func creating<T>(_ path: String, _ body: () throws -> T) rethrows -> T {
    try uninterrupted {
      // Registered only once made: a name that was already there (EEXIST) is somebody else's.
      let made = try body()
      registered.insert(path)
      return made
    }
  }

  /// ``creating(_:_:)`` for a temporary whose name is known only once it is made (`mkdtemp`):
  /// `body` returns the path it made, or nil.
  package static func creatingUnnamed(_ body: () -> String?) -> String? {
    uninterrupted {
      guard let made = body() else { return nil }
      registered.insert(made)
      return made
    }
  }

  /// Runs `body` under the lock, unless an interruption has begun: then the thread waits for
  /// the interruption to end the process, and `body` never runs.
  private static func uninterrupted<T>(_ body: () throws -> T) rethrows -> T {
    pthread_mutex_lock(lock)
    defer { pthread_mutex_unlock(lock) }
    if interrupted {
      pthread_mutex_unlock(lock)
      while true { pause() }
    }
    return try body()
  }

  /// Waits for the interruption to end the process if one has begun; returns at once
  /// otherwise. Whatever creates files or folders calls it first (``DirectoryHandle``), so that
  /// once an interruption begins, threads still writing into a temporary folder stop adding to
  /// it and its removal can finish.
  package static func pauseIfInterrupted() {
    if locked({ interrupted }) {
      while true { pause() }
    }
  }

  /// Forgets `path`: a temporary that is gone (removed by its maker).
  package static func forget(_ path: String) { locked { _ = registered.remove(path) } }

  /// True while `path` is registered: made by ``creating(_:_:)`` and not yet forgotten by
  /// ``whilePublishing(_:_:)``.
  package static func isRegistered(_ path: String) -> Bool { locked { registered.contains(path) } }

  /// Removes every registered temporary that still exists (a folder with all it holds, never
  /// following a symlink); returns how many it removed, and the paths of those it could not.
  @discardableResult
  package static func removeRegistered() -> (removed: Int, left: [String]) {
    let paths = locked { registered }
    var removed = 0
    var left: [String] = []
    for path in paths.sorted() where Paths.status(path) != nil {
      // A thread may still be adding to a folder being removed until it next creates something
      // (it then waits, see pauseIfInterrupted): the removal is tried again until it is gone.
      for _ in 0..<100 where Paths.status(path) != nil {
        if let parent = try? DirectoryHandle(path: Paths.parent(of: path)) {
          try? parent.removeTree(Paths.name(of: path))
        } else {
          _ = unlink(path)
        }
      }
      if Paths.status(path) == nil { removed += 1 } else { left.append(path) }
    }
    return (removed, left)
  }
}
