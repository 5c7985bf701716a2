import Dispatch
import SystemIO

/// Decodes and verifies the data of a package's files on worker threads (two where there are two
/// processors), ahead of the reader, and hands them over in file order, so reading the heap
/// (inflating, hashing) overlaps with the work done on each entry (rules, writing files).
///
/// Files up to ``wholeLimit`` bytes (declared and stored) are decoded whole, in batches of up to
/// ``batchBytes`` bytes or ``batchCount`` files. A larger file is decoded in parts of
/// ``partSize`` bytes, a batch each (``Item/continues``), up to the size the reader asks for
/// (every size when it has work of its own per file: unpack writes them); a file past that is
/// left to the reader (``Item/isStreamed``), which then decodes it while the workers go on with
/// the files after it. Workers claim batches in turn and decode at most ``ahead`` batches
/// (``partsAhead`` parts) beyond the one the reader takes next, so read-ahead memory stays
/// bounded whatever the package.
package final class XARPrefetcher: Sendable {
  /// One file's data, as ``XARDataReader`` produced it.
  package struct Item: Sendable {
    /// The decoded bytes delivered before the end or the failure.
    package var bytes: [UInt8]
    /// What the data reader threw (a checksum or size mismatch at the end, corrupt data in the
    /// middle), after `bytes`.
    package var error: (any Error)?
    /// True when more of the same file follows, in the next item (a file larger than
    /// ``wholeLimit`` comes in parts of ``partSize`` bytes).
    package var continues = false
    /// True for a large file left to the caller, who streams it itself (when the prefetcher
    /// was not asked for parts).
    package var isStreamed = false
  }

  static let wholeLimit: UInt64 = 256 << 10
  static let partSize = 256 << 10
  static let batchBytes = 256 << 10
  static let batchCount = 128
  /// Batches decoded (or being decoded) beyond the one the reader takes next, at most.
  static let ahead = 3
  /// The bound for the parts of a large file (a part is a batch of its own) beyond the one the
  /// reader takes next. Past it a worker may still decode parts (of the next files) while fewer
  /// than ``spareParts`` batches wait to be taken (see ``waitForRoom(_:ahead:spare:)``).
  static let partsAhead = 8
  /// The most workers, whatever is asked (`--jobs`): memory ahead grows with them.
  static let maximumWorkers = 64

  private struct State: Sendable {
    /// The first entry no batch has claimed yet.
    var cursor = 0
    var nextBatch = 0
    /// The batch the reader takes next.
    var taken = 0
    var done: [Int: [Item]] = [:]
    var cancelled = false
    var running: Int
  }

  private let file: FileDescriptor
  private let heapStart: UInt64
  /// The entries: all of them, or as they are parsed (``XARStreamingReader``).
  private let feed: TOCFeed
  private let state: Watched<State>
  /// Large files up to this declared size are decoded in parts; larger ones are left to the
  /// reader.
  private let partsUpTo: UInt64
  /// Part buffers the reader is done with, for the next parts: a fresh one was a fresh mapping
  /// of 256 KiB, zeroed page by page (most of an unpack's page faults on large files).
  private let recycledParts = BufferShelf(limit: XARPrefetcher.partsAhead + 2, minimumCapacity: XARPrefetcher.partSize)
  /// Batches of small files decoded beyond the one the reader takes next: ``ahead``, or one
  /// more than the workers where there are more, so that every worker has one to decode.
  private let batchesAhead: Int
  /// Batches that may wait to be taken while workers decode parts past ``partsAhead``: six per
  /// worker, at most 48 (12 MiB of parts, whatever the number of cores). So a worker decodes
  /// the next large file at once instead of waiting until the reader is nearly through the
  /// current one (with the window alone the workers took turns on a package of 300 kB – 4 MB
  /// files, and validate used one core), and what is held stays below ``partsAhead`` + 48 +
  /// workers parts of ``partSize`` bytes. (A window counted from each file's own first part did
  /// as well, at 3–5 MB more.)
  private let spareParts: Int
  /// Threads a large compressed file is inflated on (``PieceInflation``).
  private let inflateThreads: Int

  init(
    file: FileDescriptor, heapStart: UInt64, feed: TOCFeed, workers: Int, largeFilesInPartsUpTo: UInt64,
    startingAt first: Int = 0, inflateThreads: Int = 1
  ) {
    self.inflateThreads = inflateThreads
    partsUpTo = largeFilesInPartsUpTo
    self.file = file
    self.heapStart = heapStart
    self.feed = feed
    let workers = min(max(1, workers), XARPrefetcher.maximumWorkers)
    batchesAhead = max(XARPrefetcher.ahead, workers + 1)
    spareParts = min(6 * workers, 48)
    state = Watched(State(cursor: first, running: workers))
    // Threads of their own, not Dispatch's pool: the workers block (waiting for room) for as
    // long as the reader takes, and the pool, as wide as the processors, is also where the
    // background file writers run; it grows by about one thread a second, and at some 255 stops.
    for _ in 0..<workers {
      let run: @Sendable () -> Void = { [self] in
        work()
        state.update { $0.running -= 1 }
      }
      if !startDetachedThread(run) { DispatchQueue.global().async(execute: run) }
    }
  }

  /// Whether a file is decoded in parts, each its own batch.
  private static func isLarge(_ i: Int, in entries: XAREntryTable) -> Bool {
    let (size, stored) = entries.sizes(at: i)
    return size > XARPrefetcher.wholeLimit || stored > XARPrefetcher.wholeLimit
  }

  /// Whether a large file is decoded in parts (else the reader decodes it).
  private func inParts(_ i: Int, in entries: XAREntryTable) -> Bool {
    entries.sizes(at: i).size <= partsUpTo
  }

  private enum Claim {
    case batch(first: Int, range: Range<Int>, parts: Int?)
    /// Wait until the entry at this index is whole, then try again.
    case wait(for: Int)
    case none
  }

  /// Claims the next batch numbers: one for a run of small files (ended by size or count, or by
  /// the entries parsed so far), or one per part of a large file (as many as its declared size
  /// needs); nil when every file is claimed or the prefetcher is cancelled. Returns the table
  /// that holds the batch's entries.
  private func claim() -> (first: Int, range: Range<Int>, parts: Int?, entries: XAREntryTable)? {
    var wanted = state.update { $0.cursor }
    while true {
      let (entries, ready) = feed.view(beyond: wanted)
      let claimed: Claim = state.update { s in
        var i = s.cursor
        while i < ready && entries.kind(at: i) != .file { i += 1 }
        guard !s.cancelled else { return .none }
        // All files whole so far are claimed: wait for more, unless none came since last time.
        guard i < ready else { return ready > wanted ? .wait(for: i) : .none }
        let start = i
        let first = s.nextBatch
        if XARPrefetcher.isLarge(i, in: entries) && inParts(i, in: entries) {
          let size = entries.sizes(at: i).size
          let parts = max(1, Int((size + UInt64(XARPrefetcher.partSize) - 1) / UInt64(XARPrefetcher.partSize)))
          s.cursor = i + 1
          s.nextBatch += parts
          return .batch(first: first, range: start..<(i + 1), parts: parts)
        }
        var count = 0
        var bytes: UInt64 = 0
        while i < ready && count < XARPrefetcher.batchCount && bytes < UInt64(XARPrefetcher.batchBytes) {
          if entries.kind(at: i) == .file {
            if XARPrefetcher.isLarge(i, in: entries) {
              if inParts(i, in: entries) { break }
            } else {
              bytes += entries.sizes(at: i).size
            }
            count += 1
          }
          i += 1
        }
        s.cursor = i
        s.nextBatch += 1
        return .batch(first: first, range: start..<i, parts: nil)
      }
      switch claimed {
      case .batch(let first, let range, let parts): return (first, range, parts, entries)
      case .wait(let index): wanted = index
      case .none: return nil
      }
    }
  }

  /// Waits until batch `number` may be decoded (at most `ahead` beyond the one the reader takes
  /// next, or, past that, while fewer than `spare` batches wait to be taken); false once
  /// cancelled. The batch the reader takes next is always allowed: this never blocks it.
  private func waitForRoom(_ number: Int, ahead: Int = XARPrefetcher.ahead, spare: Int = 0) -> Bool {
    state.wait(
      until: { $0.cancelled || number < $0.taken + ahead || $0.done.count < spare },
      then: { !$0.cancelled })
  }

  private func deposit(_ number: Int, _ items: [Item]) {
    state.update { $0.done[number] = items }
  }

  private func work() {
    let window = ReadWindow()
    var chunk = [UInt8](repeating: 0, count: XARDataReader.deliveryLimit)
    while let (first, range, parts, entries) = claim() {
      if let parts {
        decodeInParts(range.lowerBound, of: entries, first: first, parts: parts, window: window)
        continue
      }
      guard waitForRoom(first, ahead: batchesAhead) else { return }
      var batch: [Item] = []
      for i in range where entries.kind(at: i) == .file {
        if XARPrefetcher.isLarge(i, in: entries) {
          batch.append(Item(bytes: [], error: nil, isStreamed: true))
          continue
        }
        let reader = XARDataReader(
          file: file, heapStart: heapStart, path: entries.path(at: i), data: entries.data(at: i), window: window)
        var item = Item(bytes: [], error: nil)
        item.bytes.reserveCapacity(Int(entries.sizes(at: i).size))
        do {
          while true {
            let n = try chunk.withUnsafeMutableBytes { try reader.read(into: $0) }
            if n == 0 { break }
            item.bytes.append(contentsOf: chunk[..<n])
          }
        } catch {
          item.error = error
        }
        batch.append(item)
      }
      deposit(first, batch)
    }
  }

  /// A buffer of ``partSize`` bytes: one the reader gave back, or a new one.
  private func partBuffer() -> [UInt8] {
    guard var buffer = recycledParts.take() else {
      return [UInt8](repeating: 0, count: XARPrefetcher.partSize)
    }
    // Its bytes are those of an earlier part, all of which the reads overwrite (the rest is cut
    // off where they end): only what it lacks is zeroed. Zeroing the whole part again each time
    // was 2.5% of a validate's CPU (bsdtar's mixed package).
    if buffer.count < XARPrefetcher.partSize {
      buffer.append(contentsOf: repeatElement(0, count: XARPrefetcher.partSize - buffer.count))
    } else if buffer.count > XARPrefetcher.partSize {
      buffer.removeSubrange(XARPrefetcher.partSize...)
    }
    return buffer
  }

  /// Takes back a part's buffer once its bytes are used (a few are kept; others are freed).
  func recycle(_ bytes: inout [UInt8]) { recycledParts.put(&bytes) }

  /// Decodes a large file into `parts` batches of one part each: ``partSize`` bytes, the last
  /// one read to the end of the data (where the reader checks size and checksums). After a
  /// failure the remaining parts are empty: the reader throws at the failure and skips them.
  private func decodeInParts(_ i: Int, of entries: XAREntryTable, first: Int, parts: Int, window: ReadWindow) {
    let reader = XARDataReader(
      file: file, heapStart: heapStart, path: entries.path(at: i), data: entries.data(at: i), window: window,
      threads: inflateThreads)
    var ended = false
    for j in 0..<parts {
      guard waitForRoom(first + j, ahead: XARPrefetcher.partsAhead, spare: spareParts) else { return }
      let last = j == parts - 1
      var part = Item(bytes: [], error: nil, continues: !last)
      if !ended {
        part.bytes = partBuffer()
        var filled = 0
        do {
          while filled < part.bytes.count || last {
            if filled == part.bytes.count { part.bytes += [UInt8](repeating: 0, count: 64 * 1024) }
            let n = try part.bytes.withUnsafeMutableBytes {
              try reader.read(into: UnsafeMutableRawBufferPointer(rebasing: $0[filled...]))
            }
            if n == 0 {
              ended = true
              break
            }
            filled += n
          }
        } catch {
          part.error = error
          ended = true
        }
        part.bytes.removeSubrange(filled...)
      }
      deposit(first + j, [part])
    }
  }
}

/// The consumer's side, used from one thread: the items in file order.
package final class XARPrefetchedItems {
  private let prefetcher: XARPrefetcher
  private var current: [XARPrefetcher.Item] = []
  private var position = 0
  private var batch = 0
  /// True while parts of the file handed out last are still to come.
  private var inFile = false

  init(_ prefetcher: XARPrefetcher) { self.prefetcher = prefetcher }

  private func take() -> XARPrefetcher.Item {
    if position == current.count {
      current = prefetcher.take(batch)
      batch += 1
      position = 0
    }
    defer { position += 1 }
    let item = current[position]
    current[position].bytes = []
    inFile = item.continues
    return item
  }

  /// The next file's first item (blocking until a worker has it). The parts of the file before
  /// that nobody asked for are skipped.
  package func next() -> XARPrefetcher.Item {
    while inFile { _ = take() }
    return take()
  }

  /// The next part of the file whose item had ``XARPrefetcher/Item/continues`` set.
  package func nextPart() -> XARPrefetcher.Item {
    precondition(inFile, "no part follows")
    return take()
  }

  /// Gives back the buffer of an item whose bytes are used, for a later part to reuse.
  package func recycle(_ bytes: inout [UInt8]) { prefetcher.recycle(&bytes) }

  /// Batches decoded and not yet taken: how far the workers are ahead of this reader.
  package var batchesReady: Int { prefetcher.batchesReady }

  /// Stops the worker and waits for it (the items not taken are dropped).
  package func stop() { prefetcher.stop() }

  deinit { prefetcher.stop() }
}

extension XARPrefetcher {
  /// Batch number `number` (blocking until a worker has it); batches are taken in order.
  fileprivate func take(_ number: Int) -> [Item] {
    state.wait(
      until: { $0.done[number] != nil || $0.running == 0 },
      then: { s in
        guard let batch = s.done.removeValue(forKey: number) else {
          preconditionFailure("batch \(number) was never made")
        }
        s.taken = number + 1
        return batch
      })
  }

  /// Batches decoded and not yet taken.
  fileprivate var batchesReady: Int { state.update { $0.done.count } }

  /// Cancels the workers and waits until they have stopped; safe to call more than once.
  fileprivate func stop() {
    state.update { $0.cancelled = true }
    state.wait(until: { $0.running == 0 }, then: { $0.done = [:] })
  }
}

extension XARReader {
  /// Starts decoding the data of every file entry on `workers` threads (see ``XARPrefetcher``);
  /// large files too, those up to `largeFilesInPartsUpTo` bytes (the others are left to the reader).
  /// The files before the entry at `first` are left out (they were read another way).
  package func prefetchedItems(workers: Int = 2, largeFilesInPartsUpTo: UInt64 = .max, startingAt first: Int = 0)
    -> XARPrefetchedItems
  {
    XARPrefetchedItems(
      XARPrefetcher(
        file: file, heapStart: header.heapStart, feed: TOCFeed(complete: entries), workers: workers,
        largeFilesInPartsUpTo: largeFilesInPartsUpTo, startingAt: first, inflateThreads: inflateThreads))
  }
}
