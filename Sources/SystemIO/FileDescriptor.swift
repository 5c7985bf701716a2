import Dispatch

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// An open file that is closed exactly once, when the last reference goes away.
///
/// Every call that can fail throws a ``SystemError`` naming the file.
package final class FileDescriptor: Sendable {
  /// The raw descriptor; valid while this object lives.
  package let rawValue: Int32
  /// The path the file was opened with, for messages.
  package let path: String

  /// Takes ownership of an open descriptor.
  package init(owning rawValue: Int32, path: String) {
    self.rawValue = rawValue
    self.path = path
  }

  deinit { _ = close(rawValue) }

  /// Opens an existing file for reading.
  package static func open(reading path: String) throws -> FileDescriptor {
    let fd = retryingOnInterrupt { systemOpen(path, O_RDONLY | O_CLOEXEC, 0) }
    guard fd >= 0 else { throw SystemError("open", path: path) }
    return FileDescriptor(owning: fd, path: path)
  }

  /// Opens `path` for reading only if it is a regular file: without blocking (a FIFO would wait
  /// for a writer forever) and, with `followSymlink` false, without following a symlink; the
  /// type is checked on the opened descriptor, so it cannot be swapped in between.
  package static func open(regularFile path: String, followSymlink: Bool = true) throws -> FileDescriptor {
    let flags = O_RDONLY | O_CLOEXEC | O_NONBLOCK | (followSymlink ? 0 : O_NOFOLLOW)
    let fd = retryingOnInterrupt { systemOpen(path, flags, 0) }
    guard fd >= 0 else { throw SystemError("open", path: path) }
    return try checkedRegular(FileDescriptor(owning: fd, path: path))
  }

  /// `file` if it is a regular file; else an error.
  package static func checkedRegular(_ file: FileDescriptor) throws -> FileDescriptor {
    _ = try regularSize(of: file)
    return file
  }

  /// The size of `file` if it is a regular file; else an error.
  ///
  /// A file opened without blocking keeps its O_NONBLOCK flag: the flag has no effect on a
  /// regular file (open(2)), and clearing it cost two system calls per file, a quarter of those
  /// a build of small files makes.
  package static func regularSize(of file: FileDescriptor) throws -> UInt64 {
    var info = stat()
    guard fstat(file.rawValue, &info) == 0 else { throw SystemError("inspect", path: file.path) }
    guard info.st_mode & S_IFMT == S_IFREG else {
      throw SystemError(
        "open", path: file.path, code: EINVAL,
        detail: "it is a \(FileDescriptor.kindName(info.st_mode)), not a regular file")
    }
    return UInt64(info.st_size)
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
  package static func create(_ path: String, mode: mode_t = 0o644) throws -> FileDescriptor {
    let fd = retryingOnInterrupt {
      systemOpen(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, mode)
    }
    guard fd >= 0 else { throw SystemError("create", path: path) }
    return FileDescriptor(owning: fd, path: path)
  }

  /// The size of the file in bytes.
  package func size() throws -> UInt64 {
    var info = stat()
    guard fstat(rawValue, &info) == 0 else { throw SystemError("inspect", path: path) }
    return UInt64(info.st_size)
  }

  /// What changes whenever the file's bytes do: its size and its modification and change
  /// times. Equal stamps taken before and after a read mean nothing wrote to the file between.
  package func changeStamp() throws -> [Int64] {
    var info = stat()
    guard fstat(rawValue, &info) == 0 else { throw SystemError("inspect", path: path) }
    #if canImport(Darwin)
      return [
        Int64(info.st_size), Int64(info.st_mtimespec.tv_sec), Int64(info.st_mtimespec.tv_nsec),
        Int64(info.st_ctimespec.tv_sec), Int64(info.st_ctimespec.tv_nsec),
      ]
    #else
      return [
        Int64(info.st_size), Int64(info.st_mtim.tv_sec), Int64(info.st_mtim.tv_nsec), Int64(info.st_ctim.tv_sec),
        Int64(info.st_ctim.tv_nsec),
      ]
    #endif
  }

  /// Reads up to `buffer.count` bytes at `offset`; returns how many were read (0 at the end).
  package func read(into buffer: UnsafeMutableRawBufferPointer, at offset: UInt64) throws -> Int {
    guard let base = buffer.baseAddress, buffer.count > 0 else { return 0 }
    let n = retryingOnInterrupt { pread(rawValue, base, buffer.count, off_t(offset)) }
    guard n >= 0 else { throw SystemError("read", path: path) }
    return n
  }

  /// Reads up to `buffer.count` bytes at `offset` only as far as they are in the page cache,
  /// without waiting for the disk (Linux's `preadv2` with `RWF_NOWAIT`): how many were read, 0
  /// at the end of the file, or nil when none is cached (or the system cannot tell), so that the
  /// caller reads them where blocking is allowed.
  package func readIfCached(into buffer: UnsafeMutableRawBufferPointer, at offset: UInt64) -> Int? {
    #if os(Linux)
      guard let base = buffer.baseAddress, buffer.count > 0 else { return 0 }
      guard let preadv2 = FileDescriptor.preadv2 else { return nil }
      var vector = iovec(iov_base: base, iov_len: buffer.count)
      let n = retryingOnInterrupt { preadv2(rawValue, &vector, 1, off_t(offset), 0x0000_0008) }  // RWF_NOWAIT
      return n >= 0 ? n : nil
    #else
      return nil
    #endif
  }

  #if os(Linux)
    /// glibc's `preadv2` (2.26 and later), found at run time: Swift's Glibc module declares it
    /// only with `_GNU_SOURCE`.
    private typealias PReadV2 = @convention(c) (Int32, UnsafePointer<iovec>?, Int32, off_t, Int32) -> Int
    private static let preadv2: PReadV2? = {
      guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "preadv2") else { return nil }
      return unsafeBitCast(symbol, to: PReadV2.self)
    }()
  #endif

  /// Reads exactly `count` bytes at `offset`, or fewer only if the file ends first.
  package func read(count: Int, at offset: UInt64) throws -> [UInt8] {
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
    // Callers ask for a bound (a plist's largest size): what was read is kept at its own size,
    // not in a buffer of the bound's (1 MiB held through a whole build, for a 300-byte plist).
    return filled == count ? bytes : Array(bytes[..<filled])
  }

  /// Reads from the current position; returns 0 at the end.
  package func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
    guard let base = buffer.baseAddress, buffer.count > 0 else { return 0 }
    let n = retryingOnInterrupt { systemRead(rawValue, base, buffer.count) }
    guard n >= 0 else { throw SystemError("read", path: path) }
    return n
  }

  /// Writes every byte of `buffer` at the current position.
  package func write(_ buffer: UnsafeRawBufferPointer) throws {
    guard var base = buffer.baseAddress else { return }
    var remaining = buffer.count
    while remaining > 0 {
      let n = retryingOnInterrupt { systemWrite(rawValue, base, remaining) }
      guard n > 0 else { throw SystemError("write", path: path) }
      base += n
      remaining -= n
    }
  }

  /// Writes every byte of `bytes` at `offset` (the position does not move).
  package func write(_ bytes: [UInt8], at offset: UInt64) throws {
    try bytes.withUnsafeBytes { try write($0, at: offset) }
  }

  /// Writes every byte of `buffer` at `offset` (the position does not move).
  package func write(_ buffer: UnsafeRawBufferPointer, at offset: UInt64) throws {
    var done = 0
    while done < buffer.count {
      let n = retryingOnInterrupt {
        pwrite(rawValue, buffer.baseAddress! + done, buffer.count - done, off_t(offset) + off_t(done))
      }
      guard n > 0 else { throw SystemError("write", path: path) }
      done += n
    }
  }

  /// Copies `length` bytes of this file from `source` to `destination` (the ranges must not
  /// overlap), through a buffer of at most 256 KiB.
  package func copy(from source: UInt64, length: UInt64, to destination: UInt64) throws {
    var done: UInt64 = 0
    try readChunks(offset: source, length: length, bufferSize: 256 << 10) { chunk in
      try write(chunk, at: destination + done)
      done += UInt64(chunk.count)
    }
  }

  /// Cuts the file (or extends it with zeros) to `size` bytes.
  package func truncate(to size: UInt64) throws {
    guard ftruncate(rawValue, off_t(size)) == 0 else { throw SystemError("truncate", path: path) }
  }

  /// Shifts the file's bytes from `offset` on by `length` bytes, leaving room in front, without
  /// copying them (`fallocate(FALLOC_FL_INSERT_RANGE)`; ext4 and XFS). Both must be multiples
  /// of the file system's block size. Returns false where that is not possible.
  package func insertRange(at offset: UInt64, length: UInt64) -> Bool {
    #if os(Linux)
      guard let fallocate = linuxFallocate else { return false }
      return fallocate(rawValue, 0x20, off_t(offset), off_t(length)) == 0
    #else
      return false
    #endif
  }

  /// Asks the kernel to start writing `length` bytes from `offset` on back to the disk, and
  /// returns without waiting (`sync_file_range(SYNC_FILE_RANGE_WRITE)`; Linux). A later
  /// ``sync()`` then has less to wait for. Does nothing where that is not possible.
  package func startWriteback(offset: UInt64, length: UInt64) {
    #if os(Linux)
      guard let syncFileRange = linuxSyncFileRange else { return }
      _ = syncFileRange(rawValue, off_t(offset), off_t(length), 2)  // SYNC_FILE_RANGE_WRITE
    #endif
  }

  /// Sets the permission bits.
  package func setMode(_ mode: mode_t) throws {
    guard fchmod(rawValue, mode) == 0 else { throw SystemError("set the mode of", path: path) }
  }

  /// Writes every byte of `bytes` at the current position.
  package func write(_ bytes: [UInt8]) throws {
    try bytes.withUnsafeBytes { try write($0) }
  }

  /// Appends `length` bytes of `source`, starting at `offset`, at this file's current position,
  /// showing each chunk to `observe` on the way.
  package func append(
    from source: FileDescriptor, offset: UInt64, length: UInt64,
    observe: (UnsafeRawBufferPointer) -> Void
  ) throws {
    try source.readChunks(offset: offset, length: length, bufferSize: 1 << 20) { chunk in
      observe(chunk)
      try write(chunk)
    }
  }

  /// Reads `length` bytes from `offset` on through one buffer of at most `bufferSize` bytes,
  /// handing each chunk read to `body`. Throws if the file ends first.
  private func readChunks(
    offset: UInt64, length: UInt64, bufferSize: Int, _ body: (UnsafeRawBufferPointer) throws -> Void
  ) throws {
    var buffer = [UInt8](repeating: 0, count: Int(min(length, UInt64(bufferSize))))
    var done: UInt64 = 0
    while done < length {
      let n = try buffer.withUnsafeMutableBytes {
        try read(
          into: UnsafeMutableRawBufferPointer(rebasing: $0[..<Int(min(UInt64($0.count), length - done))]),
          at: offset + done)
      }
      guard n > 0 else { throw SystemError("read", path: path, code: EIO) }
      try buffer.withUnsafeBytes { try body(UnsafeRawBufferPointer(rebasing: $0[..<n])) }
      done += UInt64(n)
    }
  }

  /// Shows `length` bytes from `offset` on to `observe`, in pieces, straight from the page
  /// cache: each piece of at most `window` bytes is mapped, shown and unmapped (nothing is copied,
  /// and at most one window is resident at a time). Returns false, having shown nothing, where the
  /// file cannot be mapped; the caller then reads instead.
  package func observeMapped(
    offset: UInt64, length: UInt64, window: Int = 2 << 20, _ observe: (UnsafeRawBufferPointer) -> Void
  ) -> Bool {
    let page = UInt64(max(4096, sysconf(Int32(_SC_PAGESIZE))))
    var position = offset
    let end = offset + length
    while position < end {
      let mapStart = position / page * page
      let mapLength = Int(min(UInt64(window), end - mapStart))
      guard let base = mmap(nil, mapLength, PROT_READ, MAP_SHARED, rawValue, off_t(mapStart)),
        base != MAP_FAILED
      else {
        // Only the first window may fail over to reading: later ones were already shown.
        precondition(position == offset, "mmap of \(path) failed after its first window")
        return false
      }
      #if os(Linux)
        _ = madvise(base, mapLength, MADV_SEQUENTIAL)
      #endif
      let skip = Int(position - mapStart)
      observe(UnsafeRawBufferPointer(start: base + skip, count: mapLength - skip))
      munmap(base, mapLength)
      position = mapStart + UInt64(mapLength)
    }
    return true
  }

  /// Shows `length` bytes from `offset` on to `observe`: mapped (``observeMapped(offset:length:window:_:)``)
  /// where the file can be mapped, read where not. Throws if the file ends first.
  package func observe(offset: UInt64, length: UInt64, _ observe: (UnsafeRawBufferPointer) -> Void) throws {
    if observeMapped(offset: offset, length: length, observe) { return }
    try readChunks(offset: offset, length: length, bufferSize: 1 << 20) { observe($0) }
  }

  /// Flushes the file's data to stable storage.
  package func sync() throws {
    guard fsync(rawValue) == 0 else { throw SystemError("flush", path: path) }
  }

  /// Starts flushing the data written so far to stable storage on a thread of its own
  /// (`fdatasync`), and returns at once; ``BackgroundFlush/wait()`` waits for it and reports a
  /// failure. Meanwhile the file may be read and written: what is written after the call is
  /// left to a later ``sync()``, which then has little left to wait for. Writing hundreds of
  /// MB, most of that wait is the disk's own cache flush, which the caller's work then overlaps.
  package func startFlush() -> BackgroundFlush {
    let flush = BackgroundFlush(path: path)
    // The thread holds the descriptor (not only its number), so it stays open while it runs.
    let started = startDetachedThread { [self] in
      #if canImport(Glibc)
        let result = fdatasync(rawValue)
      #else
        let result = fsync(rawValue)
      #endif
      flush.finish(failure: result == 0 ? nil : errno)
    }
    if !started { flush.finish(failure: nil) }  // nothing ran: the later sync() does it all
    return flush
  }
}

/// A flush running on a thread of its own (``FileDescriptor/startFlush()``), waited for by the
/// one thread that started it.
package final class BackgroundFlush: @unchecked Sendable {
  private let path: String
  private let done = DispatchSemaphore(value: 0)
  /// Written once by the flushing thread before it signals `done`; read after `done`.
  private var failure: Int32?
  private var waited = false

  fileprivate init(path: String) { self.path = path }

  fileprivate func finish(failure: Int32?) {
    self.failure = failure
    done.signal()
  }

  /// Waits for the flush; throws what it failed with (the kernel reports a write-back error to
  /// one flush only, so it must not be dropped). Waits once; later calls return at once.
  package func wait() throws {
    guard !waited else { return }
    waited = true
    done.wait()
    if let failure { throw SystemError("flush", path: path, code: failure) }
  }
}

#if os(Linux)
  /// `fallocate(2)`, looked up at run time: Glibc's module map does not export it.
  private typealias Fallocate = @convention(c) (Int32, Int32, off_t, off_t) -> Int32
  private let linuxFallocate: Fallocate? = {
    guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "fallocate") else { return nil }
    return unsafeBitCast(symbol, to: Fallocate.self)
  }()

  /// `sync_file_range(2)`, looked up at run time for the same reason.
  private typealias SyncFileRange = @convention(c) (Int32, off_t, off_t, UInt32) -> Int32
  private let linuxSyncFileRange: SyncFileRange? = {
    guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "sync_file_range") else { return nil }
    return unsafeBitCast(symbol, to: SyncFileRange.self)
  }()
#endif
