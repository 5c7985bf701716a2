import Dispatch
import Zlib

/// Compresses a stream of bytes in pieces on worker threads, into one zlib stream: the input
/// comes in pieces of any size (the TOC's XML from ``XMLStreamWriter``, a large file's data), is
/// cut into chunks of `chunkSize` bytes, and each chunk is deflated on its own by libdeflate (and
/// its Adler-32 taken) while the caller goes on. The compressed chunks are joined into one zlib
/// stream in order (``DeflateJoin``) and go to `output` on the caller's thread, so neither the
/// input nor the compressed stream is ever held whole: at most one chunk more than there are
/// threads is in flight.
///
/// The bytes depend on the input, the level and the chunk size only: chunks are cut at fixed
/// offsets, whatever the number of threads. A chunk refers to no byte before it, which costs
/// under 1% of the size (256 KiB chunks against one stream). Against zlib's level 6 in one
/// stream, as before, a TOC of 50,000 entries is 8% smaller and takes 37% of the time to
/// compress (docs/performance.md). The stream is left open after the last chunk, on a byte
/// boundary: the caller ends it (the TOC with its padding,
/// ``XARWriter/tocTrailer(compressedLength:xmlAdler:headerSize:checksumSize:)``; a file with
/// ``finalBlock`` and the Adler-32).
final class PieceDeflation {
  /// One chunk: compressed on a worker, then waited for and written out in order.
  private final class Job: @unchecked Sendable {
    // Written by the worker before `done` is signalled, read by the caller after waiting on it.
    var input: [UInt8]
    var compressed: Result<[UInt8], any Error> = .success([])
    var adler: UInt32 = 1
    let length: Int
    let done = DispatchSemaphore(value: 0)

    init(input: [UInt8]) {
      self.input = input
      length = input.count
    }

    func run(level: Int32) {
      input.withUnsafeBytes { bytes in
        adler = ZlibDeflater.adler32(bytes)
        let deflater = WholeDeflater.pool.take(level: level)
        let raw = deflater.compressRaw(bytes)
        WholeDeflater.pool.give(deflater)
        compressed = Result { try DeflateJoin.unfinished(raw, of: bytes) }
      }
      input = []
    }
  }

  /// The TOC's chunks.
  static let tocChunkSize = 256 * 1024
  /// A large file's chunks: on text, 1 MiB chunks come out 0.2–0.3% larger than one stream
  /// (256 KiB: 0.8–0.9%; 4 MiB: 0.07–0.09%), and what is in flight stays small: a chunk's input,
  /// its output and the check of it, for one chunk more than there are threads.
  static let fileChunkSize = 1 << 20
  /// An empty final block with fixed codes (BFINAL 1, BTYPE 01, end of block): what ends a stream
  /// left open by ``finish()``, before its Adler-32.
  static let finalBlock: [UInt8] = [0x03, 0x00]

  let chunkSize: Int
  private let level: Int32
  private let threads: Int
  private let output: (UnsafeRawBufferPointer) throws -> Void
  private var pending: [UInt8] = []
  private var jobs: [Job] = []
  private var head = 0
  private var failure: (any Error)? = nil
  private var adler: UInt32 = 1
  private var length = 0

  /// - Parameters:
  ///   - level: libdeflate's level.
  ///   - chunkSize: how many bytes of input each chunk takes.
  ///   - threads: with 1, every chunk is compressed on the caller's thread; with more, up to
  ///     that many are compressed at once on worker threads.
  ///   - output: takes the zlib stream's bytes in order, starting with its header.
  init(
    level: Int32, chunkSize: Int = PieceDeflation.tocChunkSize, threads: Int,
    output: @escaping (UnsafeRawBufferPointer) throws -> Void
  ) {
    self.level = level
    self.chunkSize = chunkSize
    self.threads = max(1, threads)
    self.output = output
    pending.reserveCapacity(chunkSize)
    // The zlib header: deflate with a 32 KiB window, the level in FLEVEL (RFC 1950), no dictionary.
    let flevel: UInt16 = level < 2 ? 0 : level < 6 ? 1 : level == 6 ? 2 : 3
    var header: UInt16 = 0x7800 | flevel << 6
    header += (31 - header % 31) % 31
    write([UInt8(header >> 8), UInt8(header & 0xFF)])
  }

  /// The next bytes of input.
  func append(_ bytes: UnsafeRawBufferPointer) {
    // Filled to exactly the chunk size: an append past the reserved capacity would double it.
    var rest = bytes
    while !rest.isEmpty {
      let n = min(rest.count, chunkSize - pending.count)
      pending.append(contentsOf: UnsafeRawBufferPointer(rebasing: rest[..<n]))
      rest = UnsafeRawBufferPointer(rebasing: rest[n...])
      if pending.count == chunkSize { submit() }
    }
  }

  private func submit() {
    guard !pending.isEmpty else { return }
    let job = Job(input: pending)
    pending = []
    pending.reserveCapacity(chunkSize)
    jobs.append(job)
    if threads == 1 {
      job.run(level: level)
      job.done.signal()
    } else {
      let level = self.level
      DispatchQueue.global().async {
        job.run(level: level)
        job.done.signal()
      }
    }
    // One more than the workers: one is always ready for the next free thread.
    while jobs.count - head > threads { writeOldest() }
  }

  private func writeOldest() {
    let job = jobs[head]
    head += 1
    job.done.wait()
    // The chunks written go: while the input streams, the list never empties (the next chunks
    // are always in flight), and kept in it, a 1 GB file's compressed chunks were all held.
    if head == jobs.count {
      jobs.removeAll(keepingCapacity: true)
      head = 0
    } else if head >= 64 {
      jobs.removeFirst(head)
      head = 0
    }
    adler = ZlibDeflater.adler32(combining: adler, with: job.adler, secondLength: job.length)
    length += job.length
    switch job.compressed {
    case .success(let bytes): write(bytes)
    case .failure(let error): if failure == nil { failure = error }
    }
    job.compressed = .success([])
  }

  private func write(_ bytes: [UInt8]) {
    guard failure == nil else { return }
    do { try bytes.withUnsafeBytes { try output($0) } } catch { failure = error }
  }

  /// Compresses what is left, writes every chunk, and returns the input's length and Adler-32;
  /// throws the first error `output` or a chunk's compression threw.
  func finish() throws -> (length: Int, adler: UInt32) {
    submit()
    while head < jobs.count { writeOldest() }
    if let failure { throw failure }
    return (length, adler)
  }
}
