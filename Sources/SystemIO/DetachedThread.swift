#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Runs `body` on a new thread of its own, not one of Dispatch's pool: for work that others wait
/// on while they hold pool threads (a producer whose consumers are pool workers), which must not
/// wait for a pool thread to come free. Returns false, having run nothing, if no thread could be
/// made.
@discardableResult
package func startDetachedThread(_ body: @escaping @Sendable () -> Void) -> Bool {
  final class Box {
    let body: @Sendable () -> Void
    init(_ body: @escaping @Sendable () -> Void) { self.body = body }
  }
  let box = Unmanaged.passRetained(Box(body)).toOpaque()
  var attributes = pthread_attr_t()
  pthread_attr_init(&attributes)
  defer { pthread_attr_destroy(&attributes) }
  pthread_attr_setdetachstate(&attributes, Int32(PTHREAD_CREATE_DETACHED))
  #if canImport(Glibc)
    var thread = pthread_t()
  #else
    var thread: pthread_t?
  #endif
  let started = pthread_create(
    &thread, &attributes,
    { raw in
      #if canImport(Glibc)
        let box = Unmanaged<Box>.fromOpaque(raw!).takeRetainedValue()
      #else
        let box = Unmanaged<Box>.fromOpaque(raw).takeRetainedValue()
      #endif
      box.body()
      return nil
    }, box)
  if started != 0 {
    Unmanaged<Box>.fromOpaque(box).release()
    return false
  }
  return true
}
