/// LZFSE, Apple's compression format, written for this project (no C library): a decoder for
/// every block kind a stream may hold, and an encoder. Used by Apple Archive's `pbze` framing.
package enum LZFSE {
  /// Why a stream was not decoded.
  package struct DecodeError: Error, CustomStringConvertible, Equatable {
    /// What was wrong, for people (no offsets a user cannot act on).
    package var description: String
    /// An error with this message.
    package init(_ description: String) { self.description = description }
  }

  /// Decodes one whole LZFSE stream (its blocks up to the end-of-stream marker). Throws when
  /// the stream is damaged, when it ends early, when bytes follow its end marker, or when it
  /// would decode to more than `limit` bytes (before decoding past it).
  package static func decode(_ input: [UInt8], limit: Int) throws(DecodeError) -> [UInt8] {
    try input.withUnsafeBufferPointer { (src) throws(DecodeError) -> [UInt8] in
      let total = try declaredSize(src, limit: limit)
      guard let base = src.baseAddress else { throw .empty }
      var failure: DecodeError?
      // Blocks that declare no output are decoded (checked) too: at least one byte of room.
      let output = [UInt8](unsafeUninitializedCapacity: max(total, 1)) { buffer, count in
        var decoder = StreamDecoder(src: base, dst: buffer.baseAddress!)
        do throws(DecodeError) {
          var position = 0
          while let block = try blockAt(base, count: src.count, position: position) {
            try decoder.decode(block)
            position += block.size
          }
          count = decoder.produced
        } catch {
          failure = error
          count = 0
        }
      }
      if let failure { throw failure }
      guard output.count == total else { throw .sizeMismatch }
      return output
    }
  }

  /// Encodes `input` as one LZFSE stream: `bvx2` blocks (`bvx-` where a block would not shrink),
  /// then `bvx$`. The same input always gives the same bytes.
  package static func encode(_ input: [UInt8]) -> [UInt8] {
    var output: [UInt8] = []
    // Room for the most it can take: each block at most 8 bytes over its input (else it is
    // stored), blocks of at least 32 KiB but the last, and the end marker. Pages never written
    // cost no memory.
    output.reserveCapacity(input.count + 8 * (input.count >> 15) + 32)
    if input.isEmpty {
      // As Apple's encoder writes it: an empty raw block, then the end marker.
      appendLE32(&output, BlockMagic.uncompressed)
      appendLE32(&output, 0)
    }
    input.withUnsafeBufferPointer { src in
      var encoder = StreamEncoder(src: src)
      encoder.run(into: &output)
    }
    appendLE32(&output, BlockMagic.endOfStream)
    return output
  }
}

/// Appends a little-endian 32-bit value.
func appendLE32(_ out: inout [UInt8], _ value: UInt32) {
  out.append(UInt8(truncatingIfNeeded: value))
  out.append(UInt8(truncatingIfNeeded: value >> 8))
  out.append(UInt8(truncatingIfNeeded: value >> 16))
  out.append(UInt8(truncatingIfNeeded: value >> 24))
}
