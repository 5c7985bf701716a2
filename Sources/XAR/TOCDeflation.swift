import Dispatch

/// Compresses the TOC on a second thread while it is being written: the XML comes in small
/// pieces from libxml2, is gathered into chunks, and each chunk is deflated (and added to the
/// Adler-32 and the length) on a serial queue, a few chunks behind the writer.
///
/// zlib's output does not depend on how its input is split, so the bytes are those of deflating
/// the whole XML in one call. On 50,000 entries this takes 0.3–0.4 s off the building thread
/// (docs/performance.md).
final class TOCDeflation: @unchecked Sendable {
  // Touched only by the caller's thread.
  private var pending: [UInt8] = []
  // Touched only on `queue`.
  private let deflater: ZlibDeflater
  private var body = ByteChunks()
  private var adler: UInt32? = nil
  private var length = 0

  static let chunkSize = 256 * 1024
  private let queue = DispatchQueue(label: "pkgtool.toc-deflation")
  private let slots = DispatchSemaphore(value: 4)

  init(level: Int32) {
    deflater = ZlibDeflater(level: level)
    pending.reserveCapacity(TOCDeflation.chunkSize)
  }

  /// The next piece of XML.
  func append(_ bytes: UnsafeRawBufferPointer) {
    pending.append(contentsOf: bytes)
    if pending.count >= TOCDeflation.chunkSize { submit() }
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
      try! deflater.deflate(bytes, finish: false) { body.append($0) }
    }
  }

  /// Waits for the last chunk and returns the stream so far, ended by a sync flush (on a byte
  /// boundary, not finished: ``XARWriter/padTOC(_:xmlLength:xmlAdler:headerSize:checksumSize:)``
  /// ends it), with the XML's length and Adler-32.
  func finish() -> (body: ByteChunks, length: Int, adler: UInt32) {
    let last = pending
    pending = []
    return queue.sync {
      deflate(last)
      try! deflater.syncFlush { body.append($0) }
      defer { body = ByteChunks() }
      return (body, length, adler ?? 1)
    }
  }
}

/// Bytes kept as pieces of at most 256 KiB: growing never copies what is held, and never holds
/// a spare half (the compressed TOC of a large package is megabytes).
struct ByteChunks {
  private(set) var pieces: [[UInt8]] = []
  private(set) var count = 0
  private static let pieceSize = 256 * 1024

  mutating func append(_ bytes: UnsafeRawBufferPointer) {
    var rest = bytes
    while !rest.isEmpty {
      if pieces.isEmpty || pieces[pieces.count - 1].count == ByteChunks.pieceSize {
        pieces.append([])
        pieces[pieces.count - 1].reserveCapacity(ByteChunks.pieceSize)
      }
      let n = min(rest.count, ByteChunks.pieceSize - pieces[pieces.count - 1].count)
      pieces[pieces.count - 1].append(contentsOf: UnsafeRawBufferPointer(rebasing: rest[..<n]))
      rest = UnsafeRawBufferPointer(rebasing: rest[n...])
      count += n
    }
  }

  mutating func append(_ bytes: [UInt8]) {
    bytes.withUnsafeBytes { append($0) }
  }
}
