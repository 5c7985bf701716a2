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

/// Whether deflating a file is worth it, judged on a sample of its bytes: its first
/// ``leadSize`` bytes and ``middleSize`` bytes from its middle, each deflated on its own at
/// level 1. A file whose estimate from the sample (``shrinks(lead:middle:size:)``) does not
/// shrink by ``threshold`` is stored as it is.
///
/// The sample is taken at fixed offsets of the file's size, so the decision depends on the
/// file's bytes only (not on threads, nor on how its bytes were read). Measured with zlib and
/// libdeflate (docs/performance.md): random bytes and compressed data (zip, gzip) sample at
/// 0.997–1.0004 of their size, and the least compressible data that still pays, 16-bit audio,
/// at 0.94–0.96 (the whole file deflates the same); 0.98 lies between with room on both sides.
package enum DeflateSample {
  /// Bytes taken from the start: headers and the first records.
  package static let leadSize = 16 << 10
  /// Bytes taken at each of the ``bodySpots`` spots of the rest of the file.
  package static let spotSize = 4 << 10
  /// How many spots of the body are sampled, spread evenly over it. One spot in the middle was
  /// not enough: a file whose head and middle are noise but whose other 99% is text was stored
  /// whole (found by review). Any one compressible spot now has the file deflated, the safe way
  /// round: a file deflated for nothing is still stored when it comes out no smaller.
  package static let bodySpots = 8
  /// Files smaller than this are not sampled: the sample would be most of the file, and
  /// deflating it costs as much as deflating the file (which is stored anyway when it comes
  /// out no smaller).
  package static let minimumSize: UInt64 = 256 << 10
  /// A sample that deflates to more than this part of its size does not shrink enough.
  package static let threshold = 0.98

  /// Where the body's spots lie in a file of `size` bytes (after the lead, in order, apart):
  /// each centred in one of ``bodySpots`` equal parts of the rest of the file. Empty for a file
  /// too small to be sampled.
  package static func bodyRanges(size: UInt64) -> [Range<UInt64>] {
    guard size >= minimumSize else { return [] }
    let lead = UInt64(leadSize)
    let spot = UInt64(spotSize)
    let parts = UInt64(bodySpots)
    let body = size - lead
    return (0..<parts).map { i in
      let start = lead + body * (2 * i + 1) / (2 * parts) - spot / 2
      return start..<min(size, start + spot)
    }
  }

  /// True when a file of `size` bytes is worth deflating, judged on `lead` (its first bytes, of
  /// which the first ``leadSize`` are used) and `body` (the bytes at ``bodyRanges(size:)``, one
  /// after another; empty when there are none): the lead stands for itself, the body's spots for
  /// the rest of the file, and the file is worth it when that estimate comes to at most
  /// ``threshold`` of its size. So a file whose head is text but whose body is noise is stored:
  /// its few KiB of text would save under 2%. A file under ``minimumSize`` is not judged: true.
  package static func shrinks(lead: UnsafeRawBufferPointer, middle body: UnsafeRawBufferPointer, size: UInt64) -> Bool {
    guard size >= minimumSize else { return true }
    let lead = UnsafeRawBufferPointer(rebasing: lead.prefix(leadSize))
    let deflater = WholeDeflater.pool.take(level: 1)
    defer { WholeDeflater.pool.give(deflater) }
    let leadRatio = Double(deflater.compressRaw(lead).count) / Double(max(1, lead.count))
    // Each spot deflated on its own: spots of noise between text would otherwise share the
    // text's matches across their boundaries and look better than they are.
    var bodyRatio = leadRatio
    if !body.isEmpty {
      var deflated = 0
      var start = 0
      while start < body.count {
        let end = min(body.count, start + spotSize)
        deflated += deflater.compressRaw(UnsafeRawBufferPointer(rebasing: body[start..<end])).count
        start = end
      }
      bodyRatio = Double(deflated) / Double(body.count)
    }
    let rest = Double(size) - Double(lead.count)
    let estimate = leadRatio * Double(lead.count) + bodyRatio * max(0, rest)
    return estimate <= threshold * Double(size)
  }

  /// ``shrinks(lead:middle:size:)`` for a file held whole.
  package static func shrinks(_ bytes: UnsafeRawBufferPointer) -> Bool {
    let ranges = bodyRanges(size: UInt64(bytes.count))
    guard !ranges.isEmpty else { return true }
    var body: [UInt8] = []
    body.reserveCapacity(ranges.count * spotSize)
    for range in ranges { body.append(contentsOf: bytes[Int(range.lowerBound)..<Int(range.upperBound)]) }
    return body.withUnsafeBytes { shrinks(lead: bytes, middle: $0, size: UInt64(bytes.count)) }
  }
}
