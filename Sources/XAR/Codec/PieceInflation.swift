import Dispatch
import SystemIO
import Zlib

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Inflates one large zlib stream on several threads, for a file's data: the read side of
/// ``PieceDeflation``, and of any stream made of pieces that refer to nothing before them.
///
/// The compressed bytes are read in order (and handed to `hashing`, for the archived checksum)
/// and cut into segments, each ending just after an empty stored block (`00 00 FF FF` on a byte
/// boundary: how pieces are joined, and how zlib's sync and full flushes end). Each segment is
/// inflated on a worker, fresh (``RawInflater``), while the reader takes the bytes of the ones
/// before. A fresh inflater refuses a back-reference to bytes before its start, so a segment
/// that inflates fresh to a block boundary at its end made exactly what one inflater reading the
/// whole stream makes there, provided that inflater stands at a block boundary where the segment
/// starts. That holds for the first segment (the stream's start) and, one by one, for each that
/// follows a segment found whole.
///
/// Anything else (a cut that was not a block boundary, a piece that refers back, a segment that
/// would make more than ``outputCap`` bytes, a stream without such blocks) is inflated in order
/// on the reader's thread by one inflater given the 32 KiB of output before it, as far as the
/// next cut where it stands at a block boundary; then the workers' segments are taken again. So
/// the bytes and the verdict are those of one inflater reading the stream from its start,
/// zlib's messages included, and the cuts depend on the bytes only: the same for any number of
/// threads (with one, the reader inflates every segment itself).
final class PieceInflation {
  /// Where the stream failed.
  enum Failure: Error {
    /// zlib's message for invalid data, or "incorrect data check" for a wrong Adler-32.
    case corrupt(String)
    /// The data ends before the stream does.
    case truncated
    /// The stream (its Adler-32 included) ends at this offset of the data, before its end.
    case endsEarly(at: UInt64)
  }

  /// Streams shorter than this are inflated the ordinary way.
  static let minimumLength: UInt64 = 1 << 20
  /// The least compressed bytes in a segment: cuts closer together are skipped, so a stream
  /// of empty blocks cannot make a segment (a job) of every few bytes.
  static let minimumSegment = 8 << 10
  /// Past this many compressed bytes without a cut, a segment that starts at a cut is cut
  /// anyway (a piece of ``PieceDeflation`` is at most 1 MiB and a few bytes); the next is then
  /// inflated in order, from the output before it.
  static let maximumSegment = (1 << 20) + (64 << 10)
  /// The most bytes a segment may inflate to on a worker (one piece of ``PieceDeflation`` makes
  /// 1 MiB); a segment that makes more is inflated in order instead, streamed.
  static let outputCap = 4 << 20
  /// A segment's output buffer to start with: one piece of ``PieceDeflation``.
  static let pieceOutput = PieceDeflation.fileChunkSize
  private static let readSize = 256 << 10
  /// Segments cut and started beyond one per thread: with two, both cores stayed busy on a 1 GB
  /// file (CPU/wall 1.80–1.90 against 1.72–1.78 with one, 1.80–1.89 with three), for one more
  /// piece held (docs/performance.md).
  static let extra = 2
  private static let historySize = 32 << 10

  /// One segment of compressed bytes and, when it starts at a cut, its fresh inflation.
  private final class Segment: @unchecked Sendable {
    enum Outcome {
      /// Inflated fresh to a block boundary at its end.
      case whole
      /// The final block ended `used` bytes into the segment.
      case ended(used: Int)
      /// Not inflated fresh (not started at a cut, or refused): the reader inflates it in order.
      case inOrder
    }
    /// The offset of its first byte in the data.
    let start: UInt64
    /// Its compressed bytes; given back (``PieceInflation/finishSegment()``) once resolved.
    var input: [UInt8]
    let startsAtCut: Bool
    /// Inflated fresh (on a worker when there are threads): it starts at a cut and ends at one,
    /// or at the end of the data. One cut off at ``PieceInflation/maximumSegment`` ends
    /// mid-block and could only be refused.
    let speculative: Bool
    // Set by whoever claims the segment, before `done` is signalled (or, when the reader runs
    // it itself, before it reads them).
    var output: [UInt8] = []
    var made = 0
    var adler: UInt32 = 1
    var outcome = Outcome.inOrder
    /// The reader's own mark: the outcome is known (run here, or waited for).
    var resolved = false
    /// The inflater lent to the worker that may run it, taken back with the segment.
    var inflater: RawInflater?
    /// Whether it holds one of the process's tokens (``PieceInflation/tokens``).
    var holdsToken = false
    private let claimed = Locked(false)
    let done = DispatchSemaphore(value: 0)

    init(start: UInt64, input: [UInt8], startsAtCut: Bool, endsAtCut: Bool) {
      self.start = start
      self.input = input
      self.startsAtCut = startsAtCut
      speculative = startsAtCut && endsAtCut
    }

    /// True for the first caller only: the one that runs it (or, for the reader, drops it).
    func claim() -> Bool {
      claimed.withLock { taken in
        defer { taken = true }
        return !taken
      }
    }

    /// Inflates the segment fresh into ``output`` (given ``PieceInflation/pieceOutput`` bytes,
    /// grown up to ``PieceInflation/outputCap`` as needed), with ``inflater``. Both were set by
    /// the reader; nothing else holds the buffer, so it is written in place (not copied).
    func run() {
      guard let inflater else { return }
      inflater.reset(history: UnsafeRawBufferPointer(start: nil, count: 0))
      var used = 0
      outcome = .inOrder
      do {
        while true {
          // With the output full, a step still reads what makes no bytes (a block's end, the
          // empty stored block after a piece), so a piece of exactly 1 MiB fits its buffer.
          let step = try input.withUnsafeBytes { input in
            try output.withUnsafeMutableBytes { out in
              try inflater.step(
                UnsafeRawBufferPointer(rebasing: input[used...]),
                into: UnsafeMutableRawBufferPointer(rebasing: out[made...]))
            }
          }
          used += step.used
          made += step.made
          if step.ended {
            outcome = .ended(used: used)
            break
          }
          if used == input.count && step.atByteBoundary {
            outcome = .whole
            break
          }
          if step.used == 0 && step.made == 0 {
            guard used < input.count, made == output.count, output.count < PieceInflation.outputCap else { return }
            output += repeatElement(0, count: min(output.count, PieceInflation.outputCap - output.count))
          }
        }
      } catch {
        return
      }
      adler = output.withUnsafeBytes { RawInflater.adler32(UnsafeRawBufferPointer(rebasing: $0[..<made])) }
    }
  }

  private let length: UInt64
  private let threads: Int
  private let read: (UInt64, UnsafeMutableRawBufferPointer) throws -> Int

  // The scan: bytes read and not yet cut, from `pendingStart` on.
  private var scanned: UInt64 = 0
  private var pending: [UInt8] = []
  private var pendingStart: UInt64 = 2
  private var searched = 0
  private var nextStartsAtCut = true
  /// Where the bytes that could be read end: `length`, or where a read failed.
  private var readable: UInt64
  /// The failed read's error, thrown when the inflater needs the bytes it did not read (as the
  /// reader in order threw it), not before: what it reads ahead does not change the verdict.
  private var readFailure: (any Error)?

  /// Segments cut, oldest first: the one being read, then those in flight.
  private var segments: [Segment] = []
  /// Where the reader is in `segments[0]`: output delivered (a whole segment), or input used
  /// (in order).
  private var position = 0
  private var inOrder: RawInflater?
  /// The last output, at least 32 KiB of it once there is that much (at most 64 KiB).
  private var history: [UInt8] = []
  private var adler: UInt32 = 1
  private var ended: UInt64?
  private var recycled: [[UInt8]] = []
  /// Segments' input buffers given back, reused by ``take(_:atCut:)``: a new one for each
  /// segment was memory the kernel had to fault in and zero, 256 KiB at a time, for every byte
  /// of a stream read (a third of validate's CPU time on bsdtar's packages, in the kernel).
  private var recycledInputs: [[UInt8]] = []
  private var inflaters: [RawInflater] = []

  /// Segments started ahead of their readers in the whole process, beyond each reader's own
  /// (every large file read at once has one): so memory does not grow with the number of files
  /// read at once times the number of threads.
  private static let tokens = Locked(0)
  private static let tokenLimit = 2 * Machine.processorCount + 2

  private static func takeToken() -> Bool {
    tokens.withLock {
      guard $0 < tokenLimit else { return false }
      $0 += 1
      return true
    }
  }

  private static func giveToken() { tokens.withLock { $0 -= 1 } }

  /// Buffers of streams read to the end, kept for the next streams (the compressed bytes' and
  /// the segments' output): each stream's made new, and grown as it was read, was memory the
  /// kernel had to fault in and zero for every byte read (on bsdtar's packages, with a large
  /// file every few MiB, a third of validate's CPU time went to the kernel). As many are kept
  /// as one stream uses at once.
  private static let spareCompressed = BufferShelf(
    limit: Machine.processorCount + extra + 1, minimumCapacity: compressedCapacity)
  private static let spareOutput = BufferShelf(
    limit: Machine.processorCount + extra + 1, minimumCapacity: pieceOutput)
  /// The most compressed bytes held at once, in `pending` (a segment and the chunk read past
  /// it) or in a segment: reserved once, so no buffer is grown as the stream is read.
  private static let compressedCapacity = maximumSegment + readSize

  /// An empty buffer for compressed bytes, ``compressedCapacity`` reserved.
  private static func compressedBuffer() -> [UInt8] {
    var buffer = spareCompressed.take() ?? []
    buffer.removeAll(keepingCapacity: true)
    buffer.reserveCapacity(compressedCapacity)
    return buffer
  }

  /// - Parameters:
  ///   - length: the compressed bytes, its zlib header (read by the caller: deflate, no
  ///     dictionary) and Adler-32 included.
  ///   - threads: segments inflated at once beside the reader (1: the reader inflates them),
  ///     at most one per processor.
  ///   - read: reads the data's bytes at an offset into a buffer, returning how many; throws
  ///     when the file ends first.
  init(length: UInt64, threads: Int, read: @escaping (UInt64, UnsafeMutableRawBufferPointer) throws -> Int) {
    self.length = length
    readable = length
    self.threads = min(max(1, threads), Machine.processorCount)
    self.read = read
    pending = PieceInflation.compressedBuffer()
  }

  deinit {
    // Segments still in flight are claimed, so a worker that has not started skips them.
    for segment in segments {
      _ = segment.claim()
      if segment.holdsToken { PieceInflation.giveToken() }
    }
    // The buffers no worker holds go to the next streams.
    PieceInflation.spareCompressed.put(&pending)
    for i in recycledInputs.indices { PieceInflation.spareCompressed.put(&recycledInputs[i]) }
    for i in recycled.indices { PieceInflation.spareOutput.put(&recycled[i]) }
  }

  /// The next decoded bytes into `buffer` (0 once the stream and its Adler-32 are read, and the
  /// data ends there). Every compressed byte read goes to `hashing` once, in order.
  func read(into buffer: UnsafeMutableRawBufferPointer, hashing: (UnsafeRawBufferPointer) -> Void) throws -> Int {
    do {
      return try readOrThrow(into: buffer, hashing: hashing)
    } catch {
      // Nothing more is read after a failure: the segments ahead go, with their tokens.
      abandon()
      throw error
    }
  }

  private func abandon() {
    for segment in segments {
      _ = segment.claim()
      if segment.holdsToken { PieceInflation.giveToken() }
    }
    segments = []
  }

  private func readOrThrow(into buffer: UnsafeMutableRawBufferPointer, hashing: (UnsafeRawBufferPointer) -> Void)
    throws -> Int
  {
    if scanned == 0 {
      // The zlib header: hashed, not inflated.
      var header = [UInt8](repeating: 0, count: 2)
      try header.withUnsafeMutableBytes { try fill($0, at: 0) }
      header.withUnsafeBytes { hashing($0) }
      scanned = 2
    }
    while true {
      if let ended {
        try trailer(at: ended, hashing: hashing)
        return 0
      }
      topUp(hashing: hashing)
      guard let segment = segments.first else { throw readFailure ?? Failure.truncated }
      if let inOrder {
        let n = try inflateInOrder(inflater: inOrder, into: buffer, hashing: hashing)
        if n > 0 { return n }
        continue
      }
      if !segment.resolved {
        // Run it here if no worker has taken it; else wait for the worker.
        if segment.claim() {
          if segment.speculative {
            if segment.inflater == nil {
              segment.inflater = takeInflater()
              segment.output = takeBuffer()
            }
            segment.run()
          }
        } else {
          segment.done.wait()
        }
        segment.resolved = true
      }
      switch segment.outcome {
      case .inOrder:
        startInOrder()
        continue
      case .whole, .ended:
        let n = min(buffer.count, segment.made - position)
        if case .ended(let used) = segment.outcome, position + n == segment.made {
          // The bytes that reach the stream's end go out only once its Adler-32 is checked,
          // as the reader in order checks it in the read that ends the stream.
          try checkAdler(
            adler32(combining: adler, with: segment.adler, length: segment.made), at: segment.start + UInt64(used),
            hashing: hashing)
        }
        if n > 0 {
          segment.output.withUnsafeBytes {
            buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: $0[position..<(position + n)]))
          }
          position += n
          return n
        }
        adler = adler32(combining: adler, with: segment.adler, length: segment.made)
        segment.output.withUnsafeBytes { remember(UnsafeRawBufferPointer(rebasing: $0[..<segment.made])) }
        if case .ended(let used) = segment.outcome { ended = segment.start + UInt64(used) }
        finishSegment()
      }
    }
  }

  /// Done with the oldest segment: its buffer goes back for a later one.
  private func finishSegment() {
    let segment = segments.removeFirst()
    position = 0
    if segment.holdsToken { PieceInflation.giveToken() }
    // A segment read in order may still be running on a worker (wasted): its buffer and
    // inflater stay with it.
    guard segment.resolved else { return }
    if recycledInputs.count < threads + PieceInflation.extra {
      recycledInputs.append(segment.input)
      segment.input = []
    }
    if let inflater = segment.inflater { inflaters.append(inflater) }
    if segment.output.count > 0 {
      let buffer = segment.output
      segment.output = []
      // One that grew past a piece is let go: it would hold its size for every later one.
      if buffer.count == PieceInflation.pieceOutput && recycled.count < threads + 1 { recycled.append(buffer) }
    }
  }

  /// Inflaters for segments, kept: each one's window and tables are made once.
  private func takeInflater() -> RawInflater { inflaters.popLast() ?? RawInflater() }

  /// A buffer for a segment's output: one given back, or a new one, made on the reader's thread
  /// (in its arena, where it is given back, not in a worker's).
  private func takeBuffer() -> [UInt8] {
    // `recycled`, and so the shelf, holds only buffers of exactly one piece.
    recycled.popLast() ?? PieceInflation.spareOutput.take() ?? [UInt8](repeating: 0, count: PieceInflation.pieceOutput)
  }

  /// Keeps the last 32 KiB of output (or more, up to 64 KiB: trimmed once per 32 KiB, not per
  /// call), for an inflater started in order after it.
  private func remember(_ bytes: UnsafeRawBufferPointer) {
    let size = PieceInflation.historySize
    if bytes.count >= size {
      history.removeAll(keepingCapacity: true)
      history += UnsafeRawBufferPointer(rebasing: bytes[(bytes.count - size)...])
      return
    }
    if history.count + bytes.count > 2 * size { history.removeFirst(history.count + bytes.count - size) }
    history += bytes
  }

  private func startInOrder() {
    let inflater = takeInflater()
    history.withUnsafeBytes {
      inflater.reset(history: UnsafeRawBufferPointer(rebasing: $0[max(0, $0.count - PieceInflation.historySize)...]))
    }
    inOrder = inflater
    position = 0
  }

  /// Inflates in order into `buffer`, from `position` in the oldest segment on, until the
  /// buffer is full, the stream ends, or order is left: at the end of a segment that ends on a
  /// block boundary when the next starts at a cut. Returns the bytes made (0 when none were).
  private func inflateInOrder(
    inflater: RawInflater, into buffer: UnsafeMutableRawBufferPointer, hashing: (UnsafeRawBufferPointer) -> Void
  ) throws -> Int {
    var filled = 0
    // The history is the inflater's own window while it reads in order; taken from it only
    // when order is left.
    defer {
      if filled > 0 {
        adler = RawInflater.adler32(
          UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(buffer)[..<filled]), continuing: adler)
      }
    }
    while filled < buffer.count, let segment = segments.first {
      // A worker that has not started it skips it; its buffer and inflater come back.
      if position == 0 && !segment.resolved && segment.claim() { segment.resolved = true }
      let step: RawInflater.Step
      do {
        step = try segment.input.withUnsafeBytes {
          try inflater.step(
            UnsafeRawBufferPointer(rebasing: $0[position...]),
            into: UnsafeMutableRawBufferPointer(rebasing: buffer[filled...]))
        }
      } catch let error as ZlibError {
        throw Failure.corrupt(error.message)
      }
      position += step.used
      filled += step.made
      if step.ended {
        // Checked before this read's bytes go out, as the reader in order did.
        let made = UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(buffer)[..<filled])
        try checkAdler(
          RawInflater.adler32(made, continuing: adler), at: segment.start + UInt64(position), hashing: hashing)
        ended = segment.start + UInt64(position)
        inOrder = nil
        finishSegment()
        return filled
      }
      if position == segment.input.count {
        let boundary = step.atByteBoundary
        finishSegment()
        topUp(hashing: hashing)
        if boundary, let next = segments.first, next.speculative {
          history = inflater.window()
          inOrder = nil
          return filled
        }
      } else if step.made == 0 && step.used == 0 {
        throw Failure.corrupt("the compressed stream makes no progress")
      }
    }
    return filled
  }

  /// Cuts and starts segments until one per thread and ``extra`` more are in flight (one, with
  /// one thread), as far as the process's tokens allow, or the data is all read.
  private func topUp(hashing: (UnsafeRawBufferPointer) -> Void) {
    let limit = threads == 1 ? 1 : threads + PieceInflation.extra
    while segments.count < limit {
      // Behind a segment read in order nothing is started: it would only hold memory.
      if let last = segments.last, !last.speculative { return }
      let token = !segments.isEmpty
      if token && !PieceInflation.takeToken() { return }
      guard let segment = cut(hashing: hashing) else {
        if token { PieceInflation.giveToken() }
        return
      }
      segment.holdsToken = token
      segments.append(segment)
      if threads > 1 && segment.speculative {
        segment.output = takeBuffer()
        segment.inflater = takeInflater()
        DispatchQueue.global().async {
          guard segment.claim() else { return }
          segment.run()
          segment.done.signal()
        }
      }
    }
  }

  /// The next segment, reading more of the data as needed; nil once every byte is in one.
  private func cut(hashing: (UnsafeRawBufferPointer) -> Void) -> Segment? {
    while true {
      // A segment that starts at a cut may be a whole piece long; one that does not is read in
      // order anyway, so it is cut in the reader's chunks (a stream without cuts is held 256 KiB
      // at a time, as before) until a cut starts the next.
      let largest = nextStartsAtCut ? PieceInflation.maximumSegment : PieceInflation.readSize
      let from = max(searched, PieceInflation.minimumSegment - 4)
      if pending.count >= from + 4 {
        let found = pending.withUnsafeBytes { PieceInflation.endOfEmptyStoredBlock(in: $0, from: from) }
        if let end = found, end <= largest {
          return take(end, atCut: true)
        }
        searched = pending.count - 3
      }
      if pending.count >= largest {
        return take(largest, atCut: false)
      }
      if scanned == readable {
        guard !pending.isEmpty else { return nil }
        // The data's end ends the last segment as a cut does, unless it is the only one (a
        // stream without cuts: inflated in order, nothing to share) or a read failed.
        return take(pending.count, atCut: pendingStart > 2 && readFailure == nil)
      }
      scanChunk(hashing: hashing)
    }
  }

  /// Reads the next chunk of the data into `pending`, hashed, in the chunks the reader in order
  /// reads (256 KiB from the data's start), so a read that fails leaves the same bytes before
  /// it; a failure is kept (``readFailure``) and the readable bytes end there.
  private func scanChunk(hashing: (UnsafeRawBufferPointer) -> Void) {
    guard scanned < readable else { return }
    let chunk = UInt64(PieceInflation.readSize)
    let count = Int(min(chunk - scanned % chunk, length - scanned))
    let old = pending.count
    pending += repeatElement(0, count: count)
    do {
      try pending.withUnsafeMutableBytes { try fill(UnsafeMutableRawBufferPointer(rebasing: $0[old...]), at: scanned) }
    } catch {
      pending.removeSubrange(old...)
      readFailure = error
      readable = scanned
      return
    }
    pending.withUnsafeBytes { hashing(UnsafeRawBufferPointer(rebasing: $0[old...])) }
    scanned += UInt64(count)
  }

  /// Reads on (as ``scanChunk(hashing:)`` does) until the data is read through `offset`, its
  /// end, or a failed read.
  private func scan(through offset: UInt64, hashing: (UnsafeRawBufferPointer) -> Void) {
    while scanned < min(offset, readable) { scanChunk(hashing: hashing) }
  }

  /// The offset just after the first `00 00 FF FF` (the length and its complement of an empty
  /// stored block) that starts at or after `from`, or nil.
  static func endOfEmptyStoredBlock(in bytes: UnsafeRawBufferPointer, from: Int) -> Int? {
    guard let base = bytes.baseAddress else { return nil }
    var i = from + 2  // where the first 0xFF may be
    while i + 1 < bytes.count {
      // memchr for the rarer byte: compressed data has about one 0xFF in 256.
      guard let hit = memchr(base + i, 0xFF, bytes.count - 1 - i) else { return nil }
      let j = base.distance(to: UnsafeRawPointer(hit))
      if bytes[j + 1] == 0xFF && bytes[j - 1] == 0 && bytes[j - 2] == 0 { return j + 2 }
      i = j + 1
    }
    return nil
  }

  /// The first `count` pending bytes as a segment, which ends at a cut (or the data's end) when
  /// `atCut`; the next starts at a cut if this one ended at one.
  private func take(_ count: Int, atCut: Bool) -> Segment {
    // Copied into a buffer of its own (`Array(pending[..<count])` of all of `pending` would
    // share its storage, and `pending` would then grow again from nothing), and `pending`
    // keeps its capacity.
    var input = recycledInputs.popLast() ?? PieceInflation.compressedBuffer()
    input.removeAll(keepingCapacity: true)
    pending.withUnsafeBytes { input.append(contentsOf: UnsafeRawBufferPointer(rebasing: $0[..<count])) }
    let segment = Segment(start: pendingStart, input: input, startsAtCut: nextStartsAtCut, endsAtCut: atCut)
    if count == pending.count {
      pending.removeAll(keepingCapacity: true)
    } else {
      pending.removeFirst(count)
    }
    pendingStart += UInt64(count)
    searched = 0
    nextStartsAtCut = atCut
    return segment
  }

  /// Fills `buffer` with the data's bytes at `offset`, or throws when the file ends first.
  private func fill(_ buffer: UnsafeMutableRawBufferPointer, at offset: UInt64) throws {
    var filled = 0
    while filled < buffer.count {
      let n = try read(offset + UInt64(filled), UnsafeMutableRawBufferPointer(rebasing: buffer[filled...]))
      guard n > 0 else { throw Failure.truncated }
      filled += n
    }
  }

  /// Throws when the stream, ended at `end` with output whose Adler-32 is `actual`, is followed
  /// by four bytes that hold another. The data is read through them first, in the reader's
  /// chunks: when that read fails (or fewer than four bytes are left), ``trailer(at:hashing:)``
  /// says so once the last bytes are out, as the reader in order did.
  private func checkAdler(_ actual: UInt32, at end: UInt64, hashing: (UnsafeRawBufferPointer) -> Void) throws {
    scan(through: min(end + 4, length), hashing: hashing)
    guard end + 4 <= readable else { return }
    var bytes = [UInt8](repeating: 0, count: 4)
    try bytes.withUnsafeMutableBytes { try fill($0, at: end) }
    let expected = bytes.reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
    guard expected == actual else { throw Failure.corrupt("incorrect data check") }
  }

  /// The stream and its last bytes went out: its Adler-32 (checked) must be whole, and the data
  /// must end just after it.
  private func trailer(at end: UInt64, hashing: (UnsafeRawBufferPointer) -> Void) throws {
    scan(through: min(end + 4, length), hashing: hashing)
    if let readFailure, readable < min(end + 4, length) { throw readFailure }
    guard end + 4 <= length else { throw Failure.truncated }
    guard end + 4 == length else { throw Failure.endsEarly(at: end + 4) }
    // The last bytes not read yet are read and hashed, as a reader in order would have.
    scan(through: length, hashing: hashing)
    if let readFailure { throw readFailure }
  }

  private func adler32(combining first: UInt32, with second: UInt32, length: Int) -> UInt32 {
    ZlibDeflater.adler32(combining: first, with: second, secondLength: length)
  }
}
