#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// What the machine offers.
package enum Machine {
  /// The number of processors online (at least 1).
  package static var processorCount: Int { max(1, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN)))) }
}

/// How the C allocator gives memory back.
package enum Allocator {
  /// Makes glibc's malloc return freed memory to the system promptly: blocks of 128 KiB and more
  /// get their own mapping (unmapped when freed), and a heap's free top is trimmed past 128 KiB.
  ///
  /// By default glibc raises the mapping threshold each time such a block is freed, up to 32 MiB,
  /// and then serves the megabyte buffers a build passes between threads from per-thread heaps,
  /// which keep the memory after it is freed. Measured on the benchmark's builds: peak RSS 39.1–39.4
  /// → 31.0–31.3 MiB (512 MB of mixed files) and 36.5–37.1 → 33.1–34.1 MiB (50,000 small files),
  /// for about 0.2 s more system time on the mixed files (docs/performance.md). Costs time where
  /// buffers of 128 KiB and more come and go by the thousand (reading: each one is mapped and
  /// zeroed afresh), so only build asks for it. Does nothing where the allocator is not glibc's.
  package static func returnFreedMemoryPromptly() {
    #if os(Linux)
      typealias Mallopt = @convention(c) (Int32, Int32) -> Int32
      guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "mallopt") else { return }
      let mallopt = unsafeBitCast(symbol, to: Mallopt.self)
      // <malloc.h>: not exported by Glibc's module map.
      let trimThreshold: Int32 = -1
      let mmapThreshold: Int32 = -3
      _ = mallopt(mmapThreshold, 128 << 10)
      _ = mallopt(trimThreshold, 128 << 10)
    #endif
  }
}
