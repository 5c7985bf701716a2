import CZlib

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

// The one file of the project that calls zlib: XAR's data and TOC, Apple Archive's `pbzz` blocks.

/// A zlib (RFC 1950) compressor that streams: feed input, receive output in chunks.
package final class ZlibDeflater {
  private let stream: UnsafeMutablePointer<z_stream>
  private lazy var output = [UInt8](repeating: 0, count: 256 * 1024)
  /// The level the stream compresses at.
  package let level: Int32

  /// - Parameter level: 0 (store) to 9 (best); -1 is zlib's default (6).
  package init(level: Int32) {
    self.level = level
    stream = .allocate(capacity: 1)
    stream.initialize(to: z_stream())
    let status = pkgtool_deflateInit2(stream, level, 15)
    precondition(status == Z_OK, "deflateInit2 failed: \(status)")
  }

  /// Starts a new stream with the same settings (cheaper than a new deflater; same output).
  package func reset() {
    deflateReset(stream)
  }

  /// Compresses a whole buffer as one finished stream, into an array sized by `deflateBound`.
  package func compressWhole(_ bytes: [UInt8]) -> [UInt8] {
    let bound = Int(deflateBound(stream, uLong(bytes.count)))
    let out = [UInt8](unsafeUninitializedCapacity: bound) { buffer, count in
      bytes.withUnsafeBytes { input in
        stream.pointee.next_in = UnsafeMutablePointer(mutating: input.baseAddress?.assumingMemoryBound(to: Bytef.self))
        stream.pointee.avail_in = uInt(input.count)
        stream.pointee.next_out = buffer.baseAddress
        stream.pointee.avail_out = uInt(bound)
        let status = CZlib.deflate(stream, Z_FINISH)
        precondition(status == Z_STREAM_END, "deflate into deflateBound space failed: \(status)")
        count = bound - Int(stream.pointee.avail_out)
      }
    }
    reset()
    return out
  }

  deinit {
    deflateEnd(stream)
    stream.deinitialize(count: 1)
    stream.deallocate()
  }

  /// Compresses `input`; with `finish`, ends the stream. Output goes to `sink` as it is made.
  package func deflate(
    _ input: UnsafeRawBufferPointer, finish: Bool, sink: (UnsafeRawBufferPointer) throws -> Void
  ) throws {
    try deflate(input, flush: finish ? Z_FINISH : Z_NO_FLUSH, sink: sink)
  }

  private func deflate(
    _ input: UnsafeRawBufferPointer, flush: Int32, sink: (UnsafeRawBufferPointer) throws -> Void
  ) throws {
    let finish = flush == Z_FINISH
    stream.pointee.next_in = UnsafeMutablePointer(
      mutating: input.baseAddress?.assumingMemoryBound(to: Bytef.self))
    stream.pointee.avail_in = uInt(input.count)
    while true {
      let (status, produced) = output.withUnsafeMutableBytes { out -> (Int32, Int) in
        stream.pointee.next_out = out.baseAddress!.assumingMemoryBound(to: Bytef.self)
        stream.pointee.avail_out = uInt(out.count)
        let status = CZlib.deflate(stream, flush)
        return (status, out.count - Int(stream.pointee.avail_out))
      }
      if produced > 0 {
        try output.withUnsafeBytes { try sink(UnsafeRawBufferPointer(rebasing: $0[..<produced])) }
      }
      if status == Z_STREAM_END { return }
      guard status == Z_OK || status == Z_BUF_ERROR else {
        preconditionFailure("deflate failed: \(status)")
      }
      if !finish && stream.pointee.avail_in == 0 && stream.pointee.avail_out != 0 { return }
    }
  }

  /// The Adler-32 checksum zlib streams end with; pass the previous value to continue one.
  package static func adler32(_ bytes: UnsafeRawBufferPointer, continuing previous: UInt32? = nil) -> UInt32 {
    let start = previous.map { uLong($0) } ?? CZlib.adler32(0, nil, 0)
    return UInt32(CZlib.adler32_z(start, bytes.baseAddress?.assumingMemoryBound(to: Bytef.self), bytes.count))
  }

  /// The Adler-32 of two runs of bytes one after the other, from the Adler-32 of each and the
  /// length of the second.
  package static func adler32(combining first: UInt32, with second: UInt32, secondLength: Int) -> UInt32 {
    UInt32(CZlib.adler32_combine(uLong(first), uLong(second), off_t(secondLength)))
  }

  /// Compresses a whole buffer into a new array.
  package static func compress(_ bytes: [UInt8], level: Int32) -> [UInt8] {
    ZlibDeflater(level: level).compressWhole(bytes)
  }
}

/// A zlib or gzip decompressor that streams and stops at the end of the first stream.
package final class ZlibInflater {
  fileprivate let stream: UnsafeMutablePointer<z_stream>
  private lazy var output = [UInt8](repeating: 0, count: 256 * 1024)
  /// True once the compressed stream has ended.
  package fileprivate(set) var finished = false

  /// - Parameter acceptsGzip: take a gzip header as well as a zlib one (XAR's `x-gzip` data is
  /// either); false: a zlib (RFC 1950) stream only.
  package init(acceptsGzip: Bool = true) {
    stream = .allocate(capacity: 1)
    stream.initialize(to: z_stream())
    // 15 + 32: accept a zlib or a gzip header.
    let status = pkgtool_inflateInit2(stream, acceptsGzip ? 15 + 32 : 15)
    precondition(status == Z_OK, "inflateInit2 failed: \(status)")
  }

  deinit {
    inflateEnd(stream)
    stream.deinitialize(count: 1)
    stream.deallocate()
  }

  /// Decompresses `input`. Output goes to `sink`; returns how many input bytes were used (fewer
  /// than given only when the stream ended). Throws a message when the data is not valid.
  package func inflate(
    _ input: UnsafeRawBufferPointer, sink: (UnsafeRawBufferPointer) throws -> Void
  ) throws -> Int {
    guard !finished else { return 0 }
    stream.pointee.next_in = UnsafeMutablePointer(
      mutating: input.baseAddress?.assumingMemoryBound(to: Bytef.self))
    stream.pointee.avail_in = uInt(input.count)
    while true {
      let (status, produced) = output.withUnsafeMutableBytes { out -> (Int32, Int) in
        stream.pointee.next_out = out.baseAddress!.assumingMemoryBound(to: Bytef.self)
        stream.pointee.avail_out = uInt(out.count)
        let status = CZlib.inflate(stream, Z_NO_FLUSH)
        return (status, out.count - Int(stream.pointee.avail_out))
      }
      if produced > 0 {
        try output.withUnsafeBytes { try sink(UnsafeRawBufferPointer(rebasing: $0[..<produced])) }
      }
      switch status {
      case Z_STREAM_END:
        finished = true
        return input.count - Int(stream.pointee.avail_in)
      case Z_OK:
        if stream.pointee.avail_in == 0 && stream.pointee.avail_out != 0 { return input.count }
      case Z_BUF_ERROR:
        // No progress possible: all input used (or none given).
        return input.count - Int(stream.pointee.avail_in)
      default:
        let message = stream.pointee.msg.map { String(cString: $0) } ?? "zlib error \(status)"
        throw ZlibError(message: message)
      }
    }
  }
}

extension ZlibInflater {
  /// One step straight into `output`: returns input bytes used and output bytes made. After the
  /// stream ends, ``finished`` is true and nothing more is used or made.
  package func inflateStep(_ input: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer) throws -> (
    used: Int, made: Int
  ) {
    guard !finished, output.count > 0 else { return (0, 0) }
    stream.pointee.next_in = UnsafeMutablePointer(mutating: input.baseAddress?.assumingMemoryBound(to: Bytef.self))
    stream.pointee.avail_in = uInt(input.count)
    stream.pointee.next_out = output.baseAddress!.assumingMemoryBound(to: Bytef.self)
    stream.pointee.avail_out = uInt(output.count)
    let status = CZlib.inflate(stream, Z_NO_FLUSH)
    let used = input.count - Int(stream.pointee.avail_in)
    let made = output.count - Int(stream.pointee.avail_out)
    switch status {
    case Z_STREAM_END: finished = true
    case Z_OK, Z_BUF_ERROR: break
    default:
      throw ZlibError(message: stream.pointee.msg.map { String(cString: $0) } ?? "zlib error \(status)")
    }
    return (used, made)
  }
}

/// Joins DEFLATE streams made separately into one, the way parallel compressors do (pigz): each
/// piece is a whole raw stream of its own input, so none refers back into another, and each but
/// the last is rewritten to end as zlib's sync flush ends a stream that goes on.
package enum DeflateJoin {
  /// `raw`, a finished raw DEFLATE stream of `original`, rewritten to be followed by more
  /// blocks: its last block is no longer marked final, and an empty stored block after it ends
  /// the piece on a byte boundary.
  ///
  /// DEFLATE does not say where a block starts without decoding the blocks before it, so the
  /// piece is inflated block by block to find its last one; the bytes that gives are checked
  /// against `original`, and a mismatch throws (the piece would not decompress to its input).
  package static func unfinished(_ raw: [UInt8], of original: UnsafeRawBufferPointer) throws -> [UInt8] {
    let stream = UnsafeMutablePointer<z_stream>.allocate(capacity: 1)
    stream.initialize(to: z_stream())
    guard pkgtool_inflateInit2(stream, -15) == Z_OK else {
      stream.deallocate()
      throw ZlibError(message: "inflateInit2 failed")
    }
    // One byte more than the original: a piece that inflates to more stops there, not at the end.
    let check = UnsafeMutableRawBufferPointer.allocate(byteCount: original.count + 1, alignment: 1)
    defer {
      inflateEnd(stream)
      stream.deinitialize(count: 1)
      stream.deallocate()
      check.deallocate()
    }
    var lastBlock = 0  // the bit where the last block met so far starts
    var end: Int? = nil  // the bit after the final block's end-of-block code
    try raw.withUnsafeBytes { input in
      stream.pointee.next_in = UnsafeMutablePointer(mutating: input.baseAddress?.assumingMemoryBound(to: Bytef.self))
      stream.pointee.avail_in = uInt(input.count)
      stream.pointee.next_out = check.baseAddress!.assumingMemoryBound(to: Bytef.self)
      stream.pointee.avail_out = uInt(check.count)
      while true {
        // Z_BLOCK: return at the end of each block (data_type + 128; + 64 when it was the final
        // one), with the bits taken from the input but not used in data_type's low six.
        let status = CZlib.inflate(stream, Z_BLOCK)
        let type = Int(stream.pointee.data_type)
        let bit = (input.count - Int(stream.pointee.avail_in)) * 8 - type & 63
        if status == Z_STREAM_END { break }
        guard status == Z_OK, stream.pointee.avail_out > 0 else {
          throw ZlibError(message: "a compressed piece of the TOC does not decompress to its input")
        }
        if type & 128 != 0 {
          if type & 64 != 0 { end = bit } else { lastBlock = bit }
        }
      }
    }
    guard let end else { throw ZlibError(message: "a compressed piece of the TOC has no final block") }
    let made = check.count - Int(stream.pointee.avail_out)
    guard made == original.count, stream.pointee.avail_in == 0,
      original.isEmpty || memcmp(check.baseAddress!, original.baseAddress!, made) == 0
    else {
      throw ZlibError(message: "a compressed piece of the TOC does not decompress to its input")
    }
    var out = Array(raw[..<((end + 7) / 8)])
    out[lastBlock / 8] &= ~UInt8(1 << (lastBlock % 8))  // BFINAL off
    if end % 8 != 0 { out[end / 8] &= UInt8((1 << (end % 8)) - 1) }  // the padding after it, zero
    // An empty stored block: BFINAL 0 and BTYPE 00 (three zero bits at `end`), zeros to the byte
    // boundary, then LEN 0 and NLEN 0xFFFF.
    if out.count * 8 < end + 3 { out.append(0) }
    out += [0x00, 0x00, 0xFF, 0xFF]
    return out
  }
}

/// A zlib failure, with zlib's own message.
package struct ZlibError: Error, CustomStringConvertible {
  package var message: String
  package var description: String { message }
  package init(message: String) { self.message = message }
}
