import Dispatch

/// Compresses the TOC on a second thread while it is being written: the XML comes in pieces
/// from ``XMLStreamWriter``, is gathered into chunks, and each chunk is deflated (and added to the
/// Adler-32 and the length) on a serial queue, a chunk or two behind the writer. The compressed
/// bytes go to `output` as zlib makes them (on that queue), so neither the XML nor the
/// compressed TOC is ever held whole.
///
/// zlib's output does not depend on how its input is split, so the bytes are those of deflating
/// the whole XML in one call. On 50,000 entries this takes 0.3–0.4 s off the building thread
/// (docs/performance.md).
final class TOCDeflation: @unchecked Sendable {
  // Touched only by the caller's thread.
  private var pending: [UInt8] = []
  // Touched only on `queue`.
  private let deflater: ZlibDeflater
  private let output: (UnsafeRawBufferPointer) throws -> Void
  private var failure: (any Error)? = nil
  private var adler: UInt32? = nil
  private var length = 0

  static let chunkSize = 256 * 1024
  private let queue = DispatchQueue(label: "pkgtool.toc-deflation")
  /// Chunks handed over and not yet deflated: two keep the queue busy (measured: four were no
  /// faster), each one 256 KiB of memory.
  private let slots = DispatchSemaphore(value: 2)

  init(level: Int32, output: @escaping (UnsafeRawBufferPointer) throws -> Void) {
    deflater = ZlibDeflater(level: level)
    self.output = output
    pending.reserveCapacity(TOCDeflation.chunkSize)
  }

  /// The next piece of XML.
  func append(_ bytes: UnsafeRawBufferPointer) {
    // Filled to exactly the chunk size: an append past the reserved capacity would double it.
    var rest = bytes
    while !rest.isEmpty {
      let n = min(rest.count, TOCDeflation.chunkSize - pending.count)
      pending.append(contentsOf: UnsafeRawBufferPointer(rebasing: rest[..<n]))
      rest = UnsafeRawBufferPointer(rebasing: rest[n...])
      if pending.count == TOCDeflation.chunkSize { submit() }
    }
  }

  private func submit() {
    let chunk = pending
    pending = []
    pending.reserveCapacity(TOCDeflation.chunkSize)
    slots.wait()
    queue.async { [self] in
      deflate(chunk)
      slots.signal()
    }
  }

  private func deflate(_ chunk: [UInt8]) {
    chunk.withUnsafeBytes { bytes in
      adler = ZlibDeflater.adler32(bytes, continuing: adler)
      length += bytes.count
      guard failure == nil else { return }
      do { try deflater.deflate(bytes, finish: false, sink: output) } catch { failure = error }
    }
  }

  /// Waits for the last chunk and ends the stream so far with a sync flush (on a byte boundary,
  /// not finished: the writer ends it with the padding, ``XARWriter/tocTrailer(compressedLength:xmlAdler:headerSize:checksumSize:)``).
  /// Returns the XML's length and Adler-32; throws what `output` threw.
  func finish() throws -> (length: Int, adler: UInt32) {
    let last = pending
    pending = []
    return try queue.sync {
      deflate(last)
      if failure == nil {
        do { try deflater.syncFlush(sink: output) } catch { failure = error }
      }
      if let failure { throw failure }
      return (length, adler ?? 1)
    }
  }
}
