import CDeflate
import Dispatch
import Zlib

// The one file of this module that calls libdeflate.

/// Compresses a buffer held whole into one zlib (RFC 1950) stream, with libdeflate.
///
/// For files the writer holds in memory: on text it takes about two thirds of zlib's time at the
/// same level, for output of about the same size (docs/performance.md). libdeflate cannot stream,
/// so larger files go through ``ZlibDeflater``; which one a file meets depends only on its size,
/// so the archive's bytes never depend on the number of threads.
package final class WholeDeflater: @unchecked Sendable {
  /// The level, 1 (fast) to 12 (best); libdeflate's 1 to 9 match zlib's in spirit.
  package let level: Int32
  private let compressor: OpaquePointer

  package init(level: Int32) {
    precondition((1...12).contains(level), "libdeflate levels are 1 to 12, not \(level)")
    guard let compressor = libdeflate_alloc_compressor(level) else {
      fatalError("libdeflate_alloc_compressor(\(level)) failed: out of memory")
    }
    self.level = level
    self.compressor = compressor
  }

  deinit { libdeflate_free_compressor(compressor) }

  /// `bytes` as one finished zlib stream, in an array of exactly its size (a file waits in
  /// memory for its turn to be written: room for the worst case would hold the input's size).
  package func compress(_ bytes: [UInt8]) -> [UInt8] {
    let bound = libdeflate_zlib_compress_bound(compressor, bytes.count)
    if bound <= WholeDeflater.scratchLimit {
      if scratch.count < bound { scratch = [UInt8](repeating: 0, count: max(bound, 16 << 10)) }
      let count = scratch.withUnsafeMutableBytes { out in
        bytes.withUnsafeBytes { libdeflate_zlib_compress(compressor, $0.baseAddress, $0.count, out.baseAddress, bound) }
      }
      precondition(count > 0, "libdeflate_zlib_compress into its own bound failed")
      return Array(scratch[..<count])
    }
    let out = [UInt8](unsafeUninitializedCapacity: bound) { out, count in
      count = bytes.withUnsafeBytes { input in
        libdeflate_zlib_compress(compressor, input.baseAddress, input.count, out.baseAddress, bound)
      }
      precondition(count > 0, "libdeflate_zlib_compress into its own bound failed")
    }
    return out.count + 64 << 10 < bound ? out.withUnsafeBufferPointer { Array($0) } : out
  }

  /// `bytes` as a raw DEFLATE (RFC 1951) stream, finished: its last block is marked final. For
  /// pieces of a longer stream, which ``DeflateJoin`` makes joinable.
  package func compressRaw(_ bytes: UnsafeRawBufferPointer) -> [UInt8] {
    let bound = libdeflate_deflate_compress_bound(compressor, bytes.count)
    return [UInt8](unsafeUninitializedCapacity: bound) { out, count in
      count = libdeflate_deflate_compress(compressor, bytes.baseAddress, bytes.count, out.baseAddress, bound)
      precondition(count > 0, "libdeflate_deflate_compress into its own bound failed")
    }
  }

  /// Output room kept between files, for inputs up to about this size.
  private static let scratchLimit = 256 << 10
  private var scratch: [UInt8] = []

  /// Compressors kept between files: allocating one costs more than compressing a small file.
  package static let pool = Pool()

  /// A few idle compressors, by level; take one per file, give it back after.
  package final class Pool: @unchecked Sendable {
    private let lock = DispatchSemaphore(value: 1)
    private var free: [WholeDeflater] = []

    package func take(level: Int32) -> WholeDeflater {
      lock.wait()
      defer { lock.signal() }
      if let i = free.lastIndex(where: { $0.level == level }) { return free.remove(at: i) }
      return WholeDeflater(level: level)
    }

    package func give(_ deflater: WholeDeflater) {
      lock.wait()
      if free.count < 4 { free.append(deflater) }
      lock.signal()
    }
  }
}
