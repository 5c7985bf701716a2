#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// A value shared between threads that threads can wait on: ``wait(until:then:)`` waits, under the
/// lock, until the value is as the caller needs it, changes it, and wakes every waiter to look
/// again. Like ``Locked``, a place where thread safety is vouched for by hand.
package final class Watched<Value: Sendable>: @unchecked Sendable {
  private var value: Value
  private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
  private let condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)

  package init(_ value: Value) {
    self.value = value
    pthread_mutex_init(mutex, nil)
    pthread_cond_init(condition, nil)
  }

  deinit {
    pthread_cond_destroy(condition)
    pthread_mutex_destroy(mutex)
    condition.deallocate()
    mutex.deallocate()
  }

  /// Waits until `ready` holds for the value, then runs `body` with it, holding the lock; the
  /// other waiters then look again.
  package func wait<Result>(until ready: (Value) -> Bool, then body: (inout Value) throws -> Result) rethrows
    -> Result
  {
    pthread_mutex_lock(mutex)
    defer {
      pthread_cond_broadcast(condition)
      pthread_mutex_unlock(mutex)
    }
    while !ready(value) { pthread_cond_wait(condition, mutex) }
    return try body(&value)
  }

  /// Runs `body` with the value, holding the lock; waiters then look again.
  package func update<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
    try wait(until: { _ in true }, then: body)
  }
}
