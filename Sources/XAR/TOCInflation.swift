import Dispatch
import SystemIO
import Zlib

/// Inflates a compressed TOC on a second thread, a few chunks ahead of the XML parser that
/// reads it (zlib's work, about a tenth of reading a large TOC, then overlaps the parse).
///
/// The compressed bytes are read from the archive file as they are needed (64 KiB at a time),
/// not held whole: a large TOC's compressed form would otherwise be the largest thing held while
/// it is parsed. They are hashed as they are read, for the TOC checksum (``digest``).
///
/// The same checks as inflating in line: the stream may not inflate past the declared length,
/// and a truncated or invalid stream is an error where the parser reaches it.
final class TOCInflation: Sendable {
  private struct State {
    var chunks: [[UInt8]] = []
    var head = 0
    var ended = false
    var failure: XARError?
    /// Compressed bytes used and inflated bytes made, final once `ended`.
    var used = 0
    var made: UInt64 = 0
    /// The hash of the compressed bytes read, once `ended`.
    var digest: XARChecksum?
    var cancelled = false
  }

  static let chunkSize = 128 * 1024
  static let chunksAhead = 4

  private let state = Locked(State())
  private let filled = DispatchSemaphore(value: 0)
  /// Room for chunks ahead. Made at 0 and signalled up to ``chunksAhead``: libdispatch stops
  /// the process (SIGILL, "semaphore object deallocated while in use") when a semaphore goes
  /// with a value below the one it was made with, which is where a TOC refused half way left
  /// it.
  private let free = DispatchSemaphore(value: 0)
  private let stopped = DispatchSemaphore(value: 0)

  /// Inflates the `length` bytes of `file` from `offset` on, which must inflate to no more than
  /// `declared` bytes, hashing them with `hashing`.
  init(file: FileDescriptor, offset: UInt64, length: Int, declared: UInt64, hashing: XARChecksumAlgorithm = .none) {
    for _ in 0..<TOCInflation.chunksAhead { free.signal() }
    // A thread of its own, not one of Dispatch's pool: while a TOC streams
    // (``XARStreamingReader``), pool workers wait for the parser, which waits for this.
    let run: @Sendable () -> Void = { [self] in
      work(file, offset: offset, length: length, declared: declared, hashing: hashing)
      stopped.signal()
    }
    if !startDetachedThread(run) { DispatchQueue.global().async(execute: run) }
  }

  private func work(
    _ file: FileDescriptor, offset: UInt64, length: Int, declared: UInt64, hashing: XARChecksumAlgorithm
  ) {
    var stream = TOCStream(file: file, offset: offset, length: length, declared: declared, hashing: hashing)
    func end(_ failure: XARError?) {
      state.withLock {
        $0.ended = true
        $0.failure = failure
        $0.used = stream.used
        $0.made = stream.made
        $0.digest = stream.digest
      }
      filled.signal()
    }
    while true {
      free.wait()
      if state.withLock({ $0.cancelled }) { return end(nil) }
      var chunk = [UInt8](repeating: 0, count: TOCInflation.chunkSize)
      var count = 0
      do {
        while count < chunk.count && !stream.finished {
          let made = try chunk.withUnsafeMutableBytes {
            try stream.inflate(into: UnsafeMutableRawBufferPointer(rebasing: $0[count...]))
          }
          count += made
          if made == 0 && !stream.finished {
            if count > 0 { break }
            return end(.tocNotDecodable("the stream is truncated"))
          }
        }
      } catch let error as XARError {
        return end(error)
      } catch let error as ZlibError {
        return end(.tocNotDecodable(error.message))
      } catch {
        return end(.tocNotDecodable("\(error)"))
      }
      if count > 0 {
        chunk.removeLast(chunk.count - count)
        state.withLock { $0.chunks.append(chunk) }
        filled.signal()
      } else {
        free.signal()
      }
      if stream.finished { return end(nil) }
    }
  }

  /// The next chunk of XML, nil at the end; throws where the stream failed.
  func next() throws -> [UInt8]? {
    while true {
      filled.wait()
      let taken: Result<[UInt8]?, XARError>? = state.withLock { s in
        if s.head < s.chunks.count {
          let chunk = s.chunks[s.head]
          s.chunks[s.head] = []
          s.head += 1
          if s.head > 64 {
            s.chunks.removeFirst(s.head)
            s.head = 0
          }
          return .success(chunk)
        }
        if let failure = s.failure { return .failure(failure) }
        if s.ended { return .success(nil) }
        return nil
      }
      switch taken {
      case .success(let chunk?):
        free.signal()
        return chunk
      case .success(nil):
        filled.signal()  // every later call ends at once too
        return nil
      case .failure(let failure):
        filled.signal()
        throw failure
      case nil:
        continue
      }
    }
  }

  /// Compressed bytes used and inflated bytes made; call after ``next()`` returned nil.
  var totals: (used: Int, made: UInt64) { state.withLock { ($0.used, $0.made) } }

  /// The hash of the compressed bytes read (all of them when ``totals`` shows `length` used);
  /// call after ``next()`` returned nil.
  var digest: XARChecksum? { state.withLock { $0.digest } }

  /// Stops the worker (if it is still going) and waits for it.
  func stop() {
    state.withLock { $0.cancelled = true }
    free.signal()
    stopped.wait()
  }
}

/// A TOC's compressed bytes, read from the archive file as they are needed (64 KiB at a time,
/// hashed as they are read) and inflated step by step. What ``TOCInflation`` feeds the parser,
/// and what ``XARStreamingReader/tocMayName(_:stopWhen:)`` reads a second time.
struct TOCStream {
  private let file: FileDescriptor
  private let offset: UInt64
  private let length: Int
  private let declared: UInt64
  private let inflater = ZlibInflater()
  private var hasher: XARHasher
  /// The compressed bytes read so far: `input[position..<inputEnd]` are not yet inflated.
  private var input: [UInt8]
  private var position = 0
  private var inputEnd = 0
  /// Compressed bytes used and inflated bytes made so far.
  private(set) var used = 0
  private(set) var made: UInt64 = 0

  /// The `length` bytes of `file` from `offset` on, which must inflate to no more than
  /// `declared` bytes, hashed with `hashing`.
  init(file: FileDescriptor, offset: UInt64, length: Int, declared: UInt64, hashing: XARChecksumAlgorithm = .none) {
    self.file = file
    self.offset = offset
    self.length = length
    self.declared = declared
    hasher = XARHasher(hashing)
    input = [UInt8](repeating: 0, count: min(length, 64 << 10))
  }

  /// True once the compressed stream has ended.
  var finished: Bool { inflater.finished }

  /// The hash of the compressed bytes read: all `length` of them once ``used`` is `length`
  /// (reads follow one another, each where the inflater has used every byte before it).
  var digest: XARChecksum { hasher.finalize() }

  /// Inflates into `output`; returns the bytes made, 0 when the stream has ended or nothing
  /// more can be made (its bytes are used up before its end: the caller says it is truncated).
  /// Throws ``XARError`` for bytes that cannot be read or more than declared, ``ZlibError``
  /// for a stream zlib refuses.
  mutating func inflate(into output: UnsafeMutableRawBufferPointer) throws -> Int {
    while true {
      if position == inputEnd && used < length {
        let want = min(input.count, length - used)
        let (file, at) = (self.file, offset + UInt64(used))
        let n = try input.withUnsafeMutableBytes {
          try file.read(into: UnsafeMutableRawBufferPointer(rebasing: $0[..<want]), at: at)
        }
        guard n > 0 else { throw XARError.tocNotDecodable("the TOC could not be read from the file") }
        input.withUnsafeBytes { hasher.update(UnsafeRawBufferPointer(rebasing: $0[..<n])) }
        position = 0
        inputEnd = n
      }
      let (inflater, from, to) = (self.inflater, position, inputEnd)
      let step = try input.withUnsafeBytes { raw in
        try inflater.inflateStep(UnsafeRawBufferPointer(rebasing: raw[from..<to]), into: output)
      }
      position += step.used
      used += step.used
      made += UInt64(step.made)
      if made > declared { throw XARError.tocLengthMismatch(declared: declared, actual: made) }
      if step.made > 0 || inflater.finished || step.used == 0 { return step.made }
    }
  }
}
