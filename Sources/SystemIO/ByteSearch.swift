/// Finding a short byte string in a buffer, 32 bytes at a time: the positions whose first and
/// last bytes match are compared whole.
package enum ByteSearch {
  /// The first position at or after `from` where `needle` starts in `haystack`.
  package static func first(_ needle: [UInt8], in haystack: UnsafeRawBufferPointer, from: Int = 0) -> Int? {
    let n = needle.count
    guard n > 0, haystack.count - from >= n, let base = haystack.baseAddress else { return nil }
    let firstByte = SIMD32<UInt8>(repeating: needle[0])
    let lastByte = SIMD32<UInt8>(repeating: needle[n - 1])
    var i = from
    let end = haystack.count - n  // the last start
    func matches(at p: Int) -> Bool {
      for k in 0..<n where base.load(fromByteOffset: p + k, as: UInt8.self) != needle[k] { return false }
      return true
    }
    while i + 32 - 1 <= end {
      let a = base.loadUnaligned(fromByteOffset: i, as: SIMD32<UInt8>.self)
      let b = base.loadUnaligned(fromByteOffset: i + n - 1, as: SIMD32<UInt8>.self)
      let candidates = (a .== firstByte) .& (b .== lastByte)
      if any(candidates) {
        for lane in 0..<32 where candidates[lane] && matches(at: i + lane) { return i + lane }
      }
      i += 32
    }
    while i <= end {
      if matches(at: i) { return i }
      i += 1
    }
    return nil
  }

  /// As ``first(_:in:from:)``, over a slice of bytes; the position is the slice's own index.
  package static func first(_ needle: [UInt8], in bytes: ArraySlice<UInt8>) -> Int? {
    bytes.withUnsafeBytes { raw in first(needle, in: raw).map { bytes.startIndex + $0 } }
  }
}
