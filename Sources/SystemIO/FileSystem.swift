#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// File-system calls on paths, each turning failure into a ``SystemError``. Outputs are made
/// through ``PendingFile`` and ``PendingFolder``.
package enum FileSystem {
  /// Removes a file; a missing file is not an error.
  package static func removeFile(_ path: String) {
    _ = unlink(path)
  }
}
