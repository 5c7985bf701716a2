import CDeflate
import CZlib

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

// The one file of the project that calls zlib: XAR's data and TOC, Apple Archive's `pbzz` blocks
// (and libdeflate's Adler-32, for the streams inflated raw).

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
///
/// A stream with a zlib header that zlib itself would take (deflate, a window of at most 32 KiB,
/// no preset dictionary) is inflated raw, its Adler-32 computed by libdeflate (vectorized: zlib's
/// own was 2.7% of validating 50,000 small files, 0.3% now) and compared with the stream's last
/// four bytes here, as zlib compares them: the same bytes in, the same bytes out and the same
/// verdicts, `incorrect data check` included. Anything else (gzip, a header zlib refuses, fewer
/// than two bytes in the first input) is left to zlib whole.
package final class ZlibInflater {
  fileprivate let stream: UnsafeMutablePointer<z_stream>
  private lazy var output = [UInt8](repeating: 0, count: 256 * 1024)
  /// True once the compressed stream has ended.
  package fileprivate(set) var finished = false

  /// Who reads the zlib wrapper: not decided before the first input, zlib, or this class.
  private enum Wrapper {
    case undecided
    case zlib
    /// The body is inflated raw; `adler` covers the bytes made so far.
    case raw(adler: UInt32)
    /// The body has ended; `have` of the four trailer bytes (big-endian Adler-32) are read.
    case trailer(adler: UInt32, expected: UInt32, have: Int)
  }
  private var wrapper = Wrapper.undecided

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

  /// True for the two bytes of a zlib header that zlib accepts and that leave nothing else to
  /// it: method 8 (deflate), a window of at most 32 KiB, the check bits right, no dictionary.
  package static func isPlainZlibHeader(_ first: UInt8, _ second: UInt8) -> Bool {
    first & 0x0F == 8 && first >> 4 <= 7 && (UInt16(first) << 8 | UInt16(second)) % 31 == 0 && second & 0x20 == 0
  }

  /// One call of zlib's inflate over `input` into `output`: the status, input bytes used and
  /// output bytes made, with the zlib wrapper read here when the stream is inflated raw. A
  /// status of `Z_STREAM_END` comes only once the whole stream (its check included) is read.
  private func step(_ input: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer) -> (
    status: Int32, used: Int, made: Int
  ) {
    var input = input
    var skipped = 0
    if case .undecided = wrapper {
      if input.count >= 2, ZlibInflater.isPlainZlibHeader(input[0], input[1]), inflateReset2(stream, -15) == Z_OK {
        wrapper = .raw(adler: 1)
        input = UnsafeRawBufferPointer(rebasing: input[2...])
        skipped = 2
      } else {
        wrapper = .zlib
      }
    }
    if case .trailer = wrapper {
      let (status, used) = readTrailer(input)
      return (status, skipped + used, 0)
    }
    stream.pointee.next_in = UnsafeMutablePointer(mutating: input.baseAddress?.assumingMemoryBound(to: Bytef.self))
    stream.pointee.avail_in = uInt(input.count)
    stream.pointee.next_out = output.baseAddress?.assumingMemoryBound(to: Bytef.self)
    stream.pointee.avail_out = uInt(output.count)
    var status = CZlib.inflate(stream, Z_NO_FLUSH)
    var used = input.count - Int(stream.pointee.avail_in)
    let made = output.count - Int(stream.pointee.avail_out)
    guard case .raw(var adler) = wrapper else { return (status, skipped + used, made) }
    if made > 0 { adler = UInt32(libdeflate_adler32(UInt32(adler), output.baseAddress, made)) }
    wrapper = .raw(adler: adler)
    if status == Z_STREAM_END {
      wrapper = .trailer(adler: adler, expected: 0, have: 0)
      let (trailerStatus, trailerUsed) = readTrailer(UnsafeRawBufferPointer(rebasing: input[used...]))
      status = trailerStatus
      used += trailerUsed
    }
    return (status, skipped + used, made)
  }

  /// Reads trailer bytes from `input`: `Z_STREAM_END` once all four are read and match,
  /// `Z_DATA_ERROR` (zlib's `incorrect data check`) when they do not, `Z_OK` while some are to
  /// come. Returns the bytes used.
  private func readTrailer(_ input: UnsafeRawBufferPointer) -> (status: Int32, used: Int) {
    guard case .trailer(let adler, var expected, var have) = wrapper else { return (Z_STREAM_ERROR, 0) }
    var used = 0
    while have < 4 && used < input.count {
      expected = expected << 8 | UInt32(input[used])
      have += 1
      used += 1
    }
    wrapper = .trailer(adler: adler, expected: expected, have: have)
    guard have == 4 else { return (input.isEmpty ? Z_BUF_ERROR : Z_OK, used) }
    return (expected == adler ? Z_STREAM_END : Z_DATA_ERROR, used)
  }

  /// zlib's message for a failed step (this class's own for a check it made).
  private func failure(_ status: Int32) -> ZlibError {
    if case .trailer = wrapper, status == Z_DATA_ERROR { return ZlibError(message: "incorrect data check") }
    return ZlibError(message: stream.pointee.msg.map { String(cString: $0) } ?? "zlib error \(status)")
  }

  /// Decompresses `input`. Output goes to `sink`; returns how many input bytes were used (fewer
  /// than given only when the stream ended). Throws a message when the data is not valid.
  package func inflate(
    _ input: UnsafeRawBufferPointer, sink: (UnsafeRawBufferPointer) throws -> Void
  ) throws -> Int {
    guard !finished else { return 0 }
    var position = 0
    while true {
      let (status, used, produced) = output.withUnsafeMutableBytes { out in
        step(UnsafeRawBufferPointer(rebasing: input[position...]), into: out)
      }
      position += used
      if produced > 0 {
        try output.withUnsafeBytes { try sink(UnsafeRawBufferPointer(rebasing: $0[..<produced])) }
      }
      switch status {
      case Z_STREAM_END:
        finished = true
        return position
      case Z_OK:
        if position == input.count && produced < output.count { return input.count }
      case Z_BUF_ERROR:
        // No progress possible: all input used (or none given).
        return position
      default:
        throw failure(status)
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
    let (status, used, made) = step(input, into: output)
    switch status {
    case Z_STREAM_END: finished = true
    case Z_OK, Z_BUF_ERROR: break
    default: throw failure(status)
    }
    return (used, made)
  }
}

/// A raw DEFLATE (RFC 1951) inflater that stops at block boundaries, for a stream inflated in
/// pieces (``ZlibInflater`` reads a whole stream): it starts fresh, or where another stopped,
/// given the 32 KiB of output before that point, and says after each step whether it stands at a
/// block boundary on a byte boundary and whether the stream's final block has ended.
///
/// A fresh inflater refuses a back-reference to bytes before its start ("invalid distance too
/// far back"): so a piece that inflates fresh, from a block boundary, to a block boundary, makes
/// exactly the bytes the whole stream's inflater makes there (block bounds and codes do not
/// depend on earlier output; only the copies do, and those it has refused).
package final class RawInflater {
  private let stream: UnsafeMutablePointer<z_stream>

  package init() {
    stream = .allocate(capacity: 1)
    stream.initialize(to: z_stream())
    let status = pkgtool_inflateInit2(stream, -15)
    precondition(status == Z_OK, "inflateInit2 failed: \(status)")
  }

  deinit {
    inflateEnd(stream)
    stream.deinitialize(count: 1)
    stream.deallocate()
  }

  /// Starts again at a block boundary, with `history` (at most the last 32 KiB of what the
  /// stream made before it; empty for a fresh start) for back-references to reach.
  package func reset(history: UnsafeRawBufferPointer) {
    inflateReset(stream)
    if history.count > 0 {
      let status = inflateSetDictionary(
        stream, history.baseAddress!.assumingMemoryBound(to: Bytef.self), uInt(history.count))
      precondition(status == Z_OK, "inflateSetDictionary on a raw stream failed: \(status)")
    }
  }

  /// The last output the inflater holds (at most 32 KiB): what a back-reference may reach, and
  /// so the history another inflater needs to go on where this one stands.
  package func window() -> [UInt8] {
    var length: uInt = 0
    guard inflateGetDictionary(stream, nil, &length) == Z_OK, length > 0 else { return [] }
    return [UInt8](unsafeUninitializedCapacity: Int(length)) { buffer, count in
      var got: uInt = 0
      _ = inflateGetDictionary(stream, buffer.baseAddress, &got)
      count = Int(got)
    }
  }

  /// Where a step left the stream.
  package struct Step {
    /// Input bytes used and output bytes made.
    package var used: Int
    package var made: Int
    /// The final block has ended: the stream is over.
    package var ended: Bool
    /// The inflater stands between two blocks, no bits of the input held back (so the next
    /// block starts at the next input byte), and the final block has not been met.
    package var atByteBoundary: Bool
  }

  /// Inflates from `input` into `output`, returning at the end of a block, when the output is
  /// full, or when the input is used up. Throws zlib's message for invalid data.
  package func step(_ input: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer) throws -> Step {
    stream.pointee.next_in = UnsafeMutablePointer(mutating: input.baseAddress?.assumingMemoryBound(to: Bytef.self))
    stream.pointee.avail_in = uInt(input.count)
    stream.pointee.next_out = output.baseAddress?.assumingMemoryBound(to: Bytef.self)
    stream.pointee.avail_out = uInt(output.count)
    // Z_BLOCK: stop at the end of each block, where data_type has 128 set (64 too once the final
    // block was met), with the count of input bits taken but not used in its low six.
    var status = CZlib.inflate(stream, Z_BLOCK)
    if status == Z_OK && stream.pointee.data_type & 128 != 0 && stream.pointee.data_type & 64 != 0 {
      // The final block's end: one more call ends the stream in this same step (as zlib does
      // when it is not asked to stop at blocks), using no more output.
      status = CZlib.inflate(stream, Z_BLOCK)
    }
    let used = input.count - Int(stream.pointee.avail_in)
    let made = output.count - Int(stream.pointee.avail_out)
    switch status {
    case Z_OK, Z_BUF_ERROR, Z_STREAM_END: break
    default:
      throw ZlibError(message: stream.pointee.msg.map { String(cString: $0) } ?? "zlib error \(status)")
    }
    let type = Int(stream.pointee.data_type)
    return Step(
      used: used, made: made, ended: status == Z_STREAM_END,
      atByteBoundary: status != Z_STREAM_END && type & 128 != 0 && type & 64 == 0 && type & 63 == 0)
  }

  /// The Adler-32 of `bytes` after `previous` (1 to start), vectorized by libdeflate.
  package static func adler32(_ bytes: UnsafeRawBufferPointer, continuing previous: UInt32 = 1) -> UInt32 {
    guard bytes.count > 0 else { return previous }
    return UInt32(libdeflate_adler32(previous, bytes.baseAddress, bytes.count))
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
    // The piece is inflated through a small window, each window's bytes compared with the
    // original's as they come: a buffer of the original's size was 1 MiB per piece in flight.
    let window = UnsafeMutableRawBufferPointer.allocate(byteCount: 64 << 10, alignment: 1)
    defer {
      inflateEnd(stream)
      stream.deinitialize(count: 1)
      stream.deallocate()
      window.deallocate()
    }
    let mismatch = ZlibError(message: "a compressed piece of a stream does not decompress to its input")
    var lastBlock = 0  // the bit where the last block met so far starts
    var end: Int? = nil  // the bit after the final block's end-of-block code
    var made = 0  // bytes inflated and found equal to the original's
    try raw.withUnsafeBytes { input in
      stream.pointee.next_in = UnsafeMutablePointer(mutating: input.baseAddress?.assumingMemoryBound(to: Bytef.self))
      stream.pointee.avail_in = uInt(input.count)
      while true {
        stream.pointee.next_out = window.baseAddress!.assumingMemoryBound(to: Bytef.self)
        stream.pointee.avail_out = uInt(window.count)
        // Z_BLOCK: return at the end of each block (data_type + 128; + 64 when it was the final
        // one), with the bits taken from the input but not used in data_type's low six.
        let status = CZlib.inflate(stream, Z_BLOCK)
        let produced = window.count - Int(stream.pointee.avail_out)
        guard produced <= original.count - made,
          produced == 0 || memcmp(window.baseAddress!, original.baseAddress! + made, produced) == 0
        else { throw mismatch }
        made += produced
        let type = Int(stream.pointee.data_type)
        let bit = (input.count - Int(stream.pointee.avail_in)) * 8 - type & 63
        if status == Z_STREAM_END { break }
        guard status == Z_OK else { throw mismatch }
        if type & 128 != 0 {
          if type & 64 != 0 { end = bit } else { lastBlock = bit }
        }
      }
    }
    guard let end else { throw ZlibError(message: "a compressed piece of a stream has no final block") }
    guard made == original.count, stream.pointee.avail_in == 0 else { throw mismatch }
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
