#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// `-` as an input: standard input as a regular file that can be read at any offset, so the
/// one-descriptor design holds for it too (every later read goes through the descriptor this
/// returns).
package enum StandardInput {
  /// The argument that names standard input.
  package static let argument = "-"
  /// How every message, report and JSON names standard input (never a temporary path).
  package static let displayName = "(standard input)"

  /// True when `path` is `-`.
  package static func isNamed(_ path: String) -> Bool { path == argument }

  /// Standard input held more than `limit` bytes: spooling stopped there.
  package struct TooLarge: Error, CustomStringConvertible {
    /// The limit (`--max-size`).
    package var limit: UInt64
    package var description: String {
      "\(StandardInput.displayName) is more than \(limit) bytes (reading stopped there), over the limit of \(limit) bytes"
    }
  }

  /// Standard input is a terminal: a package is never typed.
  package struct IsTerminal: Error, CustomStringConvertible {
    package var description: String {
      "\(StandardInput.displayName) is a terminal; '-' reads a package piped or redirected into pkgtool"
    }
  }

  /// Standard input as a file named ``displayName``: itself when it already is a regular file
  /// read from its start (`< x.pkg`); otherwise (a pipe, a socket, or a regular file already
  /// partly read, as in `{ dd bs=100 count=1 of=/dev/null; pkgtool validate -; } < x.pkg`, which
  /// is read from where it stands, as `cat` would read it) its bytes copied into an unnamed
  /// temporary file in `folder` (`$TMPDIR`, else `/tmp`): `O_TMPFILE` where the file system
  /// has it, else created and unlinked at once, so nothing is left behind whatever happens.
  /// More than `limit` bytes stop the copy and throw ``TooLarge`` (the temporary goes with it).
  /// A terminal is refused (``IsTerminal``): the command would wait for typed bytes.
  package static func file(limit: UInt64, folder: String? = nil) throws -> FileDescriptor {
    var info = stat()
    guard fstat(0, &info) == 0 else { throw SystemError("read", path: displayName) }
    if isatty(0) == 1 { throw IsTerminal() }
    if info.st_mode & S_IFMT == S_IFREG && lseek(0, 0, SEEK_CUR) == 0 {
      let fd = dup(0)
      guard fd >= 0 else { throw SystemError("read", path: displayName) }
      _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
      return FileDescriptor(owning: fd, path: displayName)
    }
    let spool = try unnamedFile(in: folder ?? temporaryFolder)
    var buffer = [UInt8](repeating: 0, count: 1 << 20)
    var total: UInt64 = 0
    while true {
      let n = buffer.withUnsafeMutableBytes { read(0, $0.baseAddress, $0.count) }
      if n < 0 {
        if errno == EINTR { continue }
        throw SystemError("read", path: displayName)
      }
      if n == 0 { break }
      total += UInt64(n)
      if total > limit { throw TooLarge(limit: limit) }
      try buffer.withUnsafeBytes { try spool.write(UnsafeRawBufferPointer(rebasing: $0[..<n])) }
    }
    return spool
  }

  /// `$TMPDIR` when set, else `/tmp`.
  package static var temporaryFolder: String {
    if let value = getenv("TMPDIR"), value.pointee != 0 { return String(cString: value) }
    return "/tmp"
  }

  /// A new file in `folder` with no name: nothing to remove, ever.
  static func unnamedFile(in folder: String) throws -> FileDescriptor {
    #if os(Linux)
      // O_TMPFILE is __O_TMPFILE | O_DIRECTORY; Glibc's macro does not reach Swift.
      let tmpfile: Int32 = 0o20000000 | O_DIRECTORY
      let fd = folder.withCString { open($0, tmpfile | O_RDWR | O_CLOEXEC, 0o600) }
      if fd >= 0 { return FileDescriptor(owning: fd, path: displayName) }
    #endif
    // No O_TMPFILE here: a private name, unlinked as soon as it is made.
    for _ in 0..<16 {
      let path = folder + "/" + TemporaryName.beside("stdin", purpose: "spool")
      let fd = path.withCString { open($0, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o600) }
      if fd >= 0 {
        _ = unlink(path)
        return FileDescriptor(owning: fd, path: displayName)
      }
      if errno != EEXIST { break }
    }
    throw SystemError(
      "create a temporary file for", path: displayName, code: errno,
      detail: "in the temporary folder '\(folder)' (set TMPDIR to a folder you can write)")
  }
}
