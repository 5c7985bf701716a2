#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

#if os(Linux)
  /// glibc's `renameat2`, looked up once (older glibc lacks it; Swift cannot import it).
  private let linuxRenameat2:
    (@convention(c) (Int32, UnsafePointer<CChar>, Int32, UnsafePointer<CChar>, UInt32) -> Int32)? =
      dlsym(UnsafeMutableRawPointer(bitPattern: 0), "renameat2").map {
        unsafeBitCast(
          $0, to: (@convention(c) (Int32, UnsafePointer<CChar>, Int32, UnsafePointer<CChar>, UInt32) -> Int32).self)
      }
#endif

/// `renameat2(…, RENAME_NOREPLACE)` where the kernel has it, else a checked `renameat`.
package func renameNoReplace(_ fromFD: Int32, _ from: String, _ toFD: Int32, _ to: String, path: String) throws {
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
package func exchangeEntries(_ a: String, in aFolder: DirectoryHandle, with b: String, in bFolder: DirectoryHandle)
  throws -> Bool
{
  #if os(Linux)
    if let renameat2 = linuxRenameat2 {
      let renameExchange: UInt32 = 2
      if renameat2(aFolder.fd, a, bFolder.fd, b, renameExchange) == 0 { return true }
      if errno != ENOSYS && errno != EINVAL { throw SystemError("exchange", path: bFolder.path + "/" + b) }
    }
  #endif
  let aside = TemporaryName.beside(b, purpose: "swap")
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
