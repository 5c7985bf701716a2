#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// A name beside an output, under a ``TemporaryName``: the one way pkgtool makes a temporary
/// that becomes an output (``PendingFile``, ``PendingFolder``, a symlink switched into place).
///
/// The temporary is made through ``Interruption/creating(_:_:)``, so an interruption removes it;
/// it becomes the output by a rename (or a link) inside ``Interruption/whilePublishing(_:_:)``,
/// which forgets it in the same step.
struct PendingName {
  /// The folder both names are in (`AT_FDCWD`: relative to the working folder).
  let folderFD: Int32
  /// Keeps ``folderFD`` open when it is a handle's.
  let folder: DirectoryHandle?
  /// The temporary's name relative to ``folderFD``.
  let temporary: String
  /// The output's name relative to ``folderFD``.
  let target: String
  /// The temporary's path as registered with ``Interruption`` (and for messages, which name
  /// the output: see ``SystemError``).
  let temporaryPath: String
  /// The output's path, for messages.
  let targetPath: String

  /// Makes a new temporary beside `target` with `make` (given its name relative to
  /// `folderFD`); a name that is taken (`EEXIST`) is tried again with another.
  static func make<T>(
    beside name: String, in folder: DirectoryHandle?, purpose: String,
    _ make: (_ fd: Int32, _ temporary: String, _ path: String) throws -> T
  ) throws -> (PendingName, T) {
    let folderFD = folder?.fd ?? AT_FDCWD
    // By path: the folder part stays in both names, so the calls are the plain path ones.
    let slash = name.lastIndex(of: "/")
    let prefix = folder == nil ? slash.map { String(name[...$0]) } ?? "" : ""
    let base = folder == nil ? slash.map { String(name[name.index(after: $0)...]) } ?? name : name
    let shown = { (relative: String) in
      guard let folder else { return relative }
      return folder.path.hasSuffix("/") ? folder.path + relative : folder.path + "/" + relative
    }
    for attempt in 0..<8 {
      let temporary = prefix + TemporaryName.beside(base, purpose: purpose)
      let path = shown(temporary)
      do {
        let made = try Interruption.creating(path) { try make(folderFD, temporary, path) }
        let pending = PendingName(
          folderFD: folderFD, folder: folder, temporary: temporary, target: prefix + base, temporaryPath: path,
          targetPath: shown(prefix + base))
        return (pending, made)
      } catch let error as SystemError where error.code == EEXIST && attempt < 7 {
        continue
      }
    }
    // Not reached: the last attempt's error is thrown above.
    throw SystemError("create", path: shown(prefix + base), code: EEXIST)
  }

  /// Renames the temporary over the output (`replace`), or links it into place and removes the
  /// temporary name, failing with `EEXIST` if the output exists.
  func publish(replace: Bool, superseding: String? = nil) throws {
    try Interruption.whilePublishing(temporaryPath, superseding: superseding) {
      if replace {
        guard renameat(folderFD, temporary, folderFD, target) == 0 else {
          throw SystemError("rename to", path: targetPath)
        }
      } else {
        guard linkat(folderFD, temporary, folderFD, target, 0) == 0 else {
          throw SystemError("create", path: targetPath)
        }
        _ = unlinkat(folderFD, temporary, 0)
      }
    }
  }

  /// Removes the temporary (a file or a link), if it is still there.
  func remove() { _ = unlinkat(folderFD, temporary, 0) }
}

/// An output file in the making: a new file beside its target, under a ``TemporaryName``,
/// filled through ``descriptor``, that becomes the target whole (``commit(replace:)``) or
/// disappears (``discard()``). Nobody sees it half-written under the target's name.
///
/// - The temporary is made new (`O_EXCL | O_NOFOLLOW`, never a name that was there, never
///   through a link) through ``Interruption/creating(_:_:)``, so an interruption removes it.
/// - Its name says which process made it, so a later run recognizes one that a killed run left
///   (``PendingFolder/removeStale(in:for:)``).
/// - Errors name the target, never the temporary (``SystemError``).
/// - If neither ``commit(replace:)`` nor ``discard()`` was called, `deinit` discards it.
///
/// ```swift
/// let pending = try PendingFile(beside: "out/report.json")
/// try pending.descriptor.write(bytes)
/// try pending.commit(replace: true)
/// ```
package final class PendingFile {
  /// The new file, open for reading and writing.
  package let descriptor: FileDescriptor
  /// The target's path, as the caller named it.
  package var target: String { name.targetPath }
  private let name: PendingName
  private var settled = false

  /// Creates the temporary for the file at `target` (a path), in the same folder.
  package convenience init(beside target: String, purpose: String = "tmp", mode: mode_t = 0o600) throws {
    try self.init(name: target, in: nil, purpose: purpose, mode: mode)
  }

  /// Creates the temporary for the file `name` in `folder`, through the folder's handle.
  package convenience init(in folder: DirectoryHandle, for name: String, purpose: String = "tmp", mode: mode_t = 0o600)
    throws
  {
    try self.init(name: name, in: folder, purpose: purpose, mode: mode)
  }

  private init(name target: String, in folder: DirectoryHandle?, purpose: String, mode: mode_t) throws {
    (name, descriptor) = try PendingName.make(beside: target, in: folder, purpose: purpose) { fd, temporary, path in
      let made = retryingOnInterrupt {
        openat(fd, temporary, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, mode)
      }
      guard made >= 0 else { throw SystemError("create", path: path) }
      return FileDescriptor(owning: made, path: path)
    }
  }

  deinit { discard() }

  /// Flushes the file to stable storage and makes it the target: renamed over it (`replace`),
  /// or linked into place without replacing anything, failing with `EEXIST` if the target
  /// exists. On a failure the temporary stays, for ``discard()``.
  /// `superseding` is a pending file of the same target kept for an interruption
  /// (``publishOnInterruption()``): from the moment this one is in place, an interruption no
  /// longer publishes that one.
  package func commit(replace: Bool, superseding: PendingFile? = nil) throws {
    precondition(!settled, "a pending file is committed or discarded once")
    try descriptor.sync()
    try name.publish(replace: replace, superseding: superseding?.name.temporaryPath)
    settled = true
  }

  /// Makes this file the target if the run is interrupted (Ctrl-C, SIGTERM) before another
  /// commit supersedes it or it is discarded: what an interrupted run leaves in place of the
  /// previous output, such as a report that says the run did not finish. A kill that cannot be
  /// caught (SIGKILL) still leaves what was there.
  package func publishOnInterruption() {
    Interruption.publishOnInterruption(name.temporaryPath, as: name.targetPath)
  }

  /// Removes the temporary; nothing appears at the target. Does nothing once committed.
  package func discard() {
    guard !settled else { return }
    settled = true
    Interruption.forgetFallback(name.temporaryPath)
    name.remove()
  }
}

extension PendingFile {
  /// Writes `bytes` to a new file beside `path`, then commits it (``commit(replace:)``): the
  /// file appears whole or not at all, and the temporary never stays.
  package static func write(_ bytes: [UInt8], to path: String, mode: mode_t = 0o644, replace: Bool = true) throws {
    let pending = try PendingFile(beside: path, mode: mode)
    try pending.descriptor.write(bytes)
    try pending.commit(replace: replace)
  }

  /// Writes `bytes` to a new file in `folder`, then renames it over `name` there.
  package static func write(_ bytes: [UInt8], to name: String, in folder: DirectoryHandle, mode: mode_t = 0o644)
    throws
  {
    let pending = try PendingFile(in: folder, for: name, mode: mode)
    try pending.descriptor.write(bytes)
    try pending.commit(replace: true)
  }

  /// Copies the regular file at `source` (links followed) to a new file beside `destination`,
  /// then renames it over `destination`.
  package static func copy(_ source: String, over destination: String, mode: mode_t = 0o644) throws {
    let input = try FileDescriptor.open(regularFile: source)
    let pending = try PendingFile(beside: destination, purpose: "copy", mode: mode)
    var buffer = [UInt8](repeating: 0, count: 1 << 20)
    var offset: UInt64 = 0
    while true {
      let n = try buffer.withUnsafeMutableBytes { try input.read(into: $0, at: offset) }
      if n == 0 { break }
      try buffer.withUnsafeBytes { try pending.descriptor.write(UnsafeRawBufferPointer(rebasing: $0[..<n])) }
      offset += UInt64(n)
    }
    try pending.commit(replace: true)
  }

  /// Makes `name` in `folder` a symlink to `target` in one step: a new link made beside it,
  /// then renamed over it. Readers of `name` see the old link or the new one, never neither;
  /// an interruption removes the new link or lets the switch finish, never one without the other.
  package static func switchSymlink(_ name: String, to target: String, in folder: DirectoryHandle) throws {
    let (pending, _) = try PendingName.make(beside: name, in: folder, purpose: "link") { fd, temporary, path in
      guard symlinkat(target, fd, temporary) == 0 else { throw SystemError("create symlink", path: path) }
    }
    do { try pending.publish(replace: true) } catch {
      pending.remove()
      throw error
    }
  }
}
