#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Calls `body` again while it fails with `EINTR`.
@inline(__always)
package func retryingOnInterrupt<T: BinaryInteger>(_ body: () -> T) -> T {
  while true {
    let result = body()
    if result < 0 && errno == EINTR { continue }
    return result
  }
}

#if canImport(Glibc)
  @inline(__always) func systemOpen(_ p: String, _ f: Int32, _ m: mode_t) -> Int32 { Glibc.open(p, f, m) }
  @inline(__always) func systemRead(_ fd: Int32, _ b: UnsafeMutableRawPointer, _ n: Int) -> Int {
    Glibc.read(fd, b, n)
  }
  @inline(__always) func systemWrite(_ fd: Int32, _ b: UnsafeRawPointer, _ n: Int) -> Int { Glibc.write(fd, b, n) }
#else
  @inline(__always) func systemOpen(_ p: String, _ f: Int32, _ m: mode_t) -> Int32 { Darwin.open(p, f, m) }
  @inline(__always) func systemRead(_ fd: Int32, _ b: UnsafeMutableRawPointer, _ n: Int) -> Int {
    Darwin.read(fd, b, n)
  }
  @inline(__always) func systemWrite(_ fd: Int32, _ b: UnsafeRawPointer, _ n: Int) -> Int { Darwin.write(fd, b, n) }
#endif
