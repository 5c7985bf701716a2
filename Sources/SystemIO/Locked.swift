import Dispatch

/// A value shared between threads, reached only while holding its lock. It vouches for thread
/// safety by hand (`@unchecked Sendable`), as ``Watched`` and a few types of the XAR and
/// AppleArchive codecs do, so that everything built on it is checked by the compiler.
package final class Locked<Value: Sendable>: @unchecked Sendable {
  private var value: Value
  private let lock = DispatchSemaphore(value: 1)

  package init(_ value: Value) { self.value = value }

  /// Runs `body` with the value, holding the lock.
  package func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
    lock.wait()
    defer { lock.signal() }
    return try body(&value)
  }
}
