#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// An open file that is closed exactly once, when the last reference goes away.
///
/// Every call that can fail throws a ``SystemError`` naming the file.
public final class FileDescriptor {
  /// The raw descriptor; valid while this object lives.
  public let rawValue: Int32
  /// The path the file was opened with, for messages.
  public let path: String

  /// Takes ownership of an open descriptor.
  public init(owning rawValue: Int32, path: String) {
    self.rawValue = rawValue
    self.path = path
  }

  deinit { _ = close(rawValue) }

  /// Opens an existing file for reading.
  public static func open(reading path: String) throws -> FileDescriptor {
    let fd = retryingOnInterrupt { system_open(path, O_RDONLY | O_CLOEXEC, 0) }
    guard fd >= 0 else { throw SystemError("open", path: path) }
    return FileDescriptor(owning: fd, path: path)
  }

  /// Opens `path` for reading only if it is a regular file: without blocking (a FIFO would wait
  /// for a writer forever) and, with `followSymlink` false, without following a symlink; the
  /// type is checked on the opened descriptor, so it cannot be swapped in between.
  public static func open(regularFile path: String, followSymlink: Bool = true) throws -> FileDescriptor {
    let flags = O_RDONLY | O_CLOEXEC | O_NONBLOCK | (followSymlink ? 0 : O_NOFOLLOW)
    let fd = retryingOnInterrupt { system_open(path, flags, 0) }
    guard fd >= 0 else { throw SystemError("open", path: path) }
    return try checkedRegular(FileDescriptor(owning: fd, path: path))
  }

  /// `file` if it is a regular file (its non-blocking flag cleared); else an error.
  public static func checkedRegular(_ file: FileDescriptor) throws -> FileDescriptor {
    var info = stat()
    guard fstat(file.rawValue, &info) == 0 else { throw SystemError("inspect", path: file.path) }
    guard info.st_mode & S_IFMT == S_IFREG else {
      throw SystemError("open", path: file.path, code: EINVAL, detail: "it is a \(FileDescriptor.kindName(info.st_mode)), not a regular file")
    }
    let flags = fcntl(file.rawValue, F_GETFL)
    if flags >= 0 { _ = fcntl(file.rawValue, F_SETFL, flags & ~O_NONBLOCK) }
    return file
  }

  static func kindName(_ mode: mode_t) -> String {
    switch mode & S_IFMT {
    case S_IFIFO: return "FIFO"
    case S_IFDIR: return "folder"
    case S_IFLNK: return "symlink"
    case S_IFCHR: return "character device"
    case S_IFBLK: return "block device"
    case S_IFSOCK: return "socket"
    default: return "special file"
    }
  }

  /// Creates a new file that must not exist yet, for writing.
  public static func create(_ path: String, mode: mode_t = 0o644) throws -> FileDescriptor {
    let fd = retryingOnInterrupt {
      system_open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, mode)
    }
    guard fd >= 0 else { throw SystemError("create", path: path) }
    return FileDescriptor(owning: fd, path: path)
  }

  /// The size of the file in bytes.
  public func size() throws -> UInt64 {
    var info = stat()
    guard fstat(rawValue, &info) == 0 else { throw SystemError("inspect", path: path) }
    return UInt64(info.st_size)
  }

  /// Reads up to `buffer.count` bytes at `offset`; returns how many were read (0 at the end).
  public func read(into buffer: UnsafeMutableRawBufferPointer, at offset: UInt64) throws -> Int {
    guard let base = buffer.baseAddress, buffer.count > 0 else { return 0 }
    let n = retryingOnInterrupt { pread(rawValue, base, buffer.count, off_t(offset)) }
    guard n >= 0 else { throw SystemError("read", path: path) }
    return n
  }

  /// Reads exactly `count` bytes at `offset`, or fewer only if the file ends first.
  public func read(count: Int, at offset: UInt64) throws -> [UInt8] {
    var bytes = [UInt8](repeating: 0, count: count)
    var filled = 0
    try bytes.withUnsafeMutableBytes { raw in
      while filled < count {
        let n = try read(
          into: UnsafeMutableRawBufferPointer(rebasing: raw[filled...]), at: offset + UInt64(filled))
        if n == 0 { break }
        filled += n
      }
    }
    bytes.removeSubrange(filled...)
    return bytes
  }

  /// Reads from the current position; returns 0 at the end.
  public func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
    guard let base = buffer.baseAddress, buffer.count > 0 else { return 0 }
    let n = retryingOnInterrupt { system_read(rawValue, base, buffer.count) }
    guard n >= 0 else { throw SystemError("read", path: path) }
    return n
  }

  /// Writes every byte of `buffer` at the current position.
  public func write(_ buffer: UnsafeRawBufferPointer) throws {
    guard var base = buffer.baseAddress else { return }
    var remaining = buffer.count
    while remaining > 0 {
      let n = retryingOnInterrupt { system_write(rawValue, base, remaining) }
      guard n > 0 else { throw SystemError("write", path: path) }
      base += n
      remaining -= n
    }
  }

  /// Writes every byte of `bytes` at `offset` (the position does not move).
  public func write(_ bytes: [UInt8], at offset: UInt64) throws {
    try bytes.withUnsafeBytes { raw in
      var done = 0
      while done < raw.count {
        let n = retryingOnInterrupt { pwrite(rawValue, raw.baseAddress! + done, raw.count - done, off_t(offset) + off_t(done)) }
        guard n > 0 else { throw SystemError("write", path: path) }
        done += n
      }
    }
  }

  /// Shifts the file's bytes from `offset` on by `length` bytes, leaving room in front, without
  /// copying them (`fallocate(FALLOC_FL_INSERT_RANGE)`; ext4 and XFS). Both must be multiples
  /// of the file system's block size. Returns false where that is not possible.
  public func insertRange(at offset: UInt64, length: UInt64) -> Bool {
    #if os(Linux)
      guard let fallocate = linuxFallocate else { return false }
      return fallocate(rawValue, 0x20, off_t(offset), off_t(length)) == 0
    #else
      return false
    #endif
  }

  /// Sets the permission bits.
  public func setMode(_ mode: mode_t) throws {
    guard fchmod(rawValue, mode) == 0 else { throw SystemError("set the mode of", path: path) }
  }

  /// Writes every byte of `bytes` at the current position.
  public func write(_ bytes: [UInt8]) throws {
    try bytes.withUnsafeBytes { try write($0) }
  }

  /// Appends `length` bytes of `source`, starting at `offset`, at this file's current position,
  /// showing each chunk to `observe` on the way.
  public func append(
    from source: FileDescriptor, offset: UInt64, length: UInt64,
    observe: (UnsafeRawBufferPointer) -> Void
  ) throws {
    var buffer = [UInt8](repeating: 0, count: 4 << 20)
    var copied: UInt64 = 0
    while copied < length {
      let n = try buffer.withUnsafeMutableBytes { raw in
        try source.read(
          into: UnsafeMutableRawBufferPointer(rebasing: raw[..<Int(min(UInt64(raw.count), length - copied))]),
          at: offset + copied)
      }
      if n == 0 { throw SystemError("read", path: source.path, code: EIO) }
      try buffer.withUnsafeBytes { raw in
        let chunk = UnsafeRawBufferPointer(rebasing: raw[..<n])
        observe(chunk)
        try write(chunk)
      }
      copied += UInt64(n)
    }
  }

  /// Flushes the file's data to stable storage.
  public func sync() throws {
    guard fsync(rawValue) == 0 else { throw SystemError("flush", path: path) }
  }
}

/// File-system calls on paths, each turning failure into a ``SystemError``.
public enum FileSystem {
  /// Renames `source` to `destination`, replacing a file at `destination`.
  public static func rename(_ source: String, to destination: String) throws {
    guard system_rename(source, destination) == 0 else {
      throw SystemError("rename to", path: destination)
    }
  }

  /// Removes a file; a missing file is not an error.
  public static func removeFile(_ path: String) {
    _ = unlink(path)
  }

  /// A path beside `target` (same folder) that does not exist yet, named so a later run can
  /// recognize it: `.<name>.pkgtool-<purpose>-<pid>-<random>`.
  public static func temporarySibling(of target: String, purpose: String) -> String {
    let slash = target.lastIndex(of: "/")
    let folder = slash.map { String(target[...$0]) } ?? ""
    let name = slash.map { String(target[target.index(after: $0)...]) } ?? target
    let random = UInt32.random(in: 0...UInt32.max)
    return "\(folder).\(name).pkgtool-\(purpose)-\(getpid())-\(String(random, radix: 16))"
  }
}

@inline(__always)
func retryingOnInterrupt<T: BinaryInteger>(_ body: () -> T) -> T {
  while true {
    let result = body()
    if result < 0 && errno == EINTR { continue }
    return result
  }
}

#if canImport(Glibc)
  @inline(__always) func system_open(_ p: String, _ f: Int32, _ m: mode_t) -> Int32 { Glibc.open(p, f, m) }
  @inline(__always) func system_read(_ fd: Int32, _ b: UnsafeMutableRawPointer, _ n: Int) -> Int { Glibc.read(fd, b, n) }
  @inline(__always) func system_write(_ fd: Int32, _ b: UnsafeRawPointer, _ n: Int) -> Int { Glibc.write(fd, b, n) }
  @inline(__always) func system_rename(_ a: String, _ b: String) -> Int32 { Glibc.rename(a, b) }
#else
  @inline(__always) func system_open(_ p: String, _ f: Int32, _ m: mode_t) -> Int32 { Darwin.open(p, f, m) }
  @inline(__always) func system_read(_ fd: Int32, _ b: UnsafeMutableRawPointer, _ n: Int) -> Int { Darwin.read(fd, b, n) }
  @inline(__always) func system_write(_ fd: Int32, _ b: UnsafeRawPointer, _ n: Int) -> Int { Darwin.write(fd, b, n) }
  @inline(__always) func system_rename(_ a: String, _ b: String) -> Int32 { Darwin.rename(a, b) }
#endif

extension FileSystem {
  /// Makes `destination` a second name of `source`; fails with `EEXIST` if it exists. Used to
  /// publish a finished file without replacing anything.
  public static func link(_ source: String, to destination: String) throws {
    guard system_link(source, destination) == 0 else {
      throw SystemError("create", path: destination)
    }
  }

  /// Writes `bytes` to a temporary file beside `path`, flushes it, then renames it over `path`
  /// (`replace`) or links it into place, failing with `EEXIST` if `path` exists. The file
  /// appears whole or not at all; the temporary never stays.
  public static func writeAtomically(_ bytes: [UInt8], to path: String, mode: mode_t = 0o644, replace: Bool = true) throws {
    let temporary = temporarySibling(of: path, purpose: "tmp")
    defer { removeFile(temporary) }
    let file = try FileDescriptor.create(temporary, mode: mode)
    try file.write(bytes)
    try file.sync()
    if replace { try rename(temporary, to: path) } else { try link(temporary, to: path) }
  }

  /// Copies the regular file at `source` (links followed) to a temporary file beside
  /// `destination` and renames it over `destination`.
  public static func copyFile(_ source: String, over destination: String, mode: mode_t = 0o644) throws {
    let input = try FileDescriptor.open(regularFile: source)
    let temporary = temporarySibling(of: destination, purpose: "copy")
    defer { removeFile(temporary) }
    let output = try FileDescriptor.create(temporary, mode: mode)
    var buffer = [UInt8](repeating: 0, count: 1 << 20)
    var offset: UInt64 = 0
    while true {
      let n = try buffer.withUnsafeMutableBytes { try input.read(into: $0, at: offset) }
      if n == 0 { break }
      try buffer.withUnsafeBytes { try output.write(UnsafeRawBufferPointer(rebasing: $0[..<n])) }
      offset += UInt64(n)
    }
    try rename(temporary, to: destination)
  }
}

#if canImport(Glibc)
  @inline(__always) func system_link(_ a: String, _ b: String) -> Int32 { Glibc.link(a, b) }
#else
  @inline(__always) func system_link(_ a: String, _ b: String) -> Int32 { Darwin.link(a, b) }
#endif

#if os(Linux)
  /// `fallocate(2)`, looked up at run time: Glibc's module map does not export it.
  private typealias Fallocate = @convention(c) (Int32, Int32, off_t, off_t) -> Int32
  private let linuxFallocate: Fallocate? = {
    guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "fallocate") else { return nil }
    return unsafeBitCast(symbol, to: Fallocate.self)
  }()
#endif
