import CZlib

// The one file of this module that calls zlib.

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

  /// Ends the output so far on a byte boundary without ending the stream (a sync flush).
  package func syncFlush(sink: (UnsafeRawBufferPointer) throws -> Void) throws {
    try deflate(UnsafeRawBufferPointer(start: nil, count: 0), flush: Z_SYNC_FLUSH, sink: sink)
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
      if flush == Z_SYNC_FLUSH && stream.pointee.avail_in == 0 && stream.pointee.avail_out != 0 { return }
    }
  }

  /// The Adler-32 checksum zlib streams end with; pass the previous value to continue one.
  package static func adler32(_ bytes: UnsafeRawBufferPointer, continuing previous: UInt32? = nil) -> UInt32 {
    let start = previous.map { uLong($0) } ?? CZlib.adler32(0, nil, 0)
    return UInt32(CZlib.adler32_z(start, bytes.baseAddress?.assumingMemoryBound(to: Bytef.self), bytes.count))
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

  package init() {
    stream = .allocate(capacity: 1)
    stream.initialize(to: z_stream())
    // 15 + 32: accept a zlib or a gzip header.
    let status = pkgtool_inflateInit2(stream, 15 + 32)
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

/// A zlib failure, with zlib's own message.
package struct ZlibError: Error, CustomStringConvertible {
  package var message: String
  package var description: String { message }
}
