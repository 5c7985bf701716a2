import Crypto
import Dispatch
import SystemIO
import TextCoding

/// The digest that names a package file: SHA-256 of its bytes, in hex (what `build` prints,
/// what catalogs and install records hold).
package enum PackageDigest {
  /// SHA-256 of the whole file, hex.
  package static func sha256(of file: FileDescriptor) throws -> String {
    var hasher = SHA256()
    try file.observe(offset: 0, length: try file.size()) { hasher.update(bufferPointer: $0) }
    return hexString(hasher.finalize())
  }

  /// Starts ``sha256(of:)`` on a thread of its own, so that it runs beside the caller's own pass
  /// over the same file (both read by offset: the descriptor's position is not shared). Where no
  /// thread can be made, the digest is computed when ``Running/value()`` is asked for.
  package static func start(of file: FileDescriptor) -> Running {
    let running = Running(file)
    if startDetachedThread({ running.compute() }) { running.started = true }
    return running
  }

  /// A digest being computed on its own thread.
  package final class Running: @unchecked Sendable {
    private let file: FileDescriptor
    private let done = DispatchSemaphore(value: 0)
    /// Written by the hashing thread before it signals `done`, read after the wait.
    private var result: Result<String, any Error>?
    /// Set by the starting thread only, before anyone waits.
    fileprivate var started = false

    fileprivate init(_ file: FileDescriptor) { self.file = file }

    fileprivate func compute() {
      result = Result { try PackageDigest.sha256(of: file) }
      done.signal()
    }

    /// The digest (hex), once the thread has finished; the error it met, if any.
    package func value() throws -> String {
      if !started {
        started = true
        compute()
      }
      done.wait()
      done.signal()  // a second ask returns at once
      return try result!.get()
    }
  }
}
