import Dispatch
import SystemIO

/// Decodes and verifies the data of a package's files on worker threads (two where there are two
/// processors), ahead of the reader, and hands them over in file order, so reading the heap
/// (inflating, hashing) overlaps with the work done on each entry (rules, writing files).
///
/// Files up to ``wholeLimit`` bytes (declared and stored) are decoded whole; larger ones are
/// left to the caller, who streams them as before (``Item/isStreamed``). Workers claim batches
/// of up to ``batchBytes`` bytes or ``batchCount`` files in turn; at most ``queuedBatches`` plus
/// one per worker exist at any time, so read-ahead memory stays bounded whatever the package.
package final class XARPrefetcher: Sendable {
  /// One file's data, as ``XARDataReader`` produced it.
  package struct Item: Sendable {
    /// The decoded bytes delivered before the end or the failure.
    package var bytes: [UInt8]
    /// What the data reader threw (a checksum or size mismatch at the end, corrupt data in the
    /// middle), after `bytes`.
    package var error: (any Error)?
    /// True for a file too large to decode whole: the caller streams it itself.
    package var isStreamed: Bool
  }

  static let wholeLimit: UInt64 = 256 << 10
  static let batchBytes = 256 << 10
  static let batchCount = 128
  static let queuedBatches = 1

  /// A place for one batch: batch number n goes to slot n % slots.count. `vacant` lets one
  /// worker in; `ready` tells the consumer the batch is there. Batches are taken in order, so a
  /// slot is never wanted by two batches at once.
  private final class Slot: @unchecked Sendable {
    let vacant = DispatchSemaphore(value: 1)
    let ready = DispatchSemaphore(value: 0)
    var items: [Item] = []  // written by the worker holding `vacant`, read after `ready`
  }

  private struct State: Sendable {
    /// The first file entry no batch has claimed yet.
    var cursor = 0
    var nextBatch = 0
    var cancelled = false
  }

  private let file: FileDescriptor
  private let heapStart: UInt64
  private let entries: XAREntryTable
  private let state = Locked(State())
  private let slots: [Slot]
  private let workers: Int
  private let stopped = DispatchSemaphore(value: 0)
  /// Held while a worker takes a slot and claims a batch.
  private let claimTurn = DispatchSemaphore(value: 1)

  init(file: FileDescriptor, heapStart: UInt64, entries: XAREntryTable, workers: Int) {
    self.file = file
    self.heapStart = heapStart
    self.entries = entries  // the reader's table, shared, not copied
    self.workers = max(1, workers)
    slots = (0..<(XARPrefetcher.queuedBatches + self.workers)).map { _ in Slot() }
    for _ in 0..<self.workers {
      DispatchQueue.global().async { [self] in
        work()
        stopped.signal()
      }
    }
  }

  /// Claims the next batch: its number and its range of entries, ended by size or count; nil
  /// when every file is claimed or the prefetcher is cancelled.
  private func claim() -> (number: Int, range: Range<Int>)? {
    state.withLock { s in
      var i = s.cursor
      while i < entries.count && entries.kind(at: i) != .file { i += 1 }
      guard !s.cancelled, i < entries.count else { return nil }
      let start = i
      var count = 0
      var bytes: UInt64 = 0
      while i < entries.count && count < XARPrefetcher.batchCount && bytes < UInt64(XARPrefetcher.batchBytes) {
        if entries.kind(at: i) == .file {
          let (size, stored) = entries.sizes(at: i)
          if size <= XARPrefetcher.wholeLimit && stored <= XARPrefetcher.wholeLimit { bytes += size }
          count += 1
        }
        i += 1
      }
      s.cursor = i
      defer { s.nextBatch += 1 }
      return (s.nextBatch, start..<i)
    }
  }

  /// Takes the slot of the next batch, then claims the batch: one worker at a time, so slots
  /// are taken in batch order (a later batch can never take the slot an earlier one waits for).
  private func claimWithSlot() -> (slot: Slot, range: Range<Int>)? {
    claimTurn.wait()
    defer { claimTurn.signal() }
    let number = state.withLock { $0.nextBatch }
    let slot = slots[number % slots.count]
    slot.vacant.wait()
    guard let (claimed, range) = claim() else {
      slot.vacant.signal()
      return nil
    }
    assert(claimed == number)
    return (slot, range)
  }

  private func work() {
    let window = ReadWindow()
    var chunk = [UInt8](repeating: 0, count: 64 * 1024)
    while let (slot, range) = claimWithSlot() {
      var batch: [Item] = []
      for i in range where entries.kind(at: i) == .file {
        let (size, stored) = entries.sizes(at: i)
        if size > XARPrefetcher.wholeLimit || stored > XARPrefetcher.wholeLimit {
          batch.append(Item(bytes: [], error: nil, isStreamed: true))
          continue
        }
        let reader = XARDataReader(
          file: file, heapStart: heapStart, path: entries.path(at: i), data: entries.data(at: i), window: window)
        var item = Item(bytes: [], error: nil, isStreamed: false)
        item.bytes.reserveCapacity(Int(size))
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
      slot.items = batch
      slot.ready.signal()
    }
  }
}

/// The consumer's side, used from one thread: the items in file order.
package final class XARPrefetchedItems {
  private let prefetcher: XARPrefetcher
  private var current: [XARPrefetcher.Item] = []
  private var position = 0
  private var batch = 0

  init(_ prefetcher: XARPrefetcher) { self.prefetcher = prefetcher }

  /// The next file's item (blocking until the worker has it).
  package func next() -> XARPrefetcher.Item {
    if position == current.count {
      current = prefetcher.take(batch)
      batch += 1
      position = 0
    }
    defer { position += 1 }
    return current[position]
  }

  /// Stops the worker and waits for it (the items not taken are dropped).
  package func stop() { prefetcher.stop() }

  deinit { prefetcher.stop() }
}

extension XARPrefetcher {
  /// Batch number `number` (blocking until a worker has it); batches are taken in order.
  fileprivate func take(_ number: Int) -> [Item] {
    let slot = slots[number % slots.count]
    slot.ready.wait()
    let batch = slot.items
    slot.items = []
    slot.vacant.signal()
    return batch
  }

  /// Cancels the workers and waits until they have stopped; safe to call more than once.
  fileprivate func stop() {
    let first = state.withLock { state -> Bool in
      defer { state.cancelled = true }
      return !state.cancelled
    }
    guard first else { return }
    // A worker may wait for a slot that is never taken now: let it in (its claim sees the
    // cancellation and it gives the slot back). Every `vacant` ends at 1 or more, as a semaphore
    // must when freed.
    for slot in slots { slot.vacant.signal() }
    for _ in 0..<workers { stopped.wait() }
  }
}

extension XARReader {
  /// Starts decoding the data of every file entry on `workers` threads (see ``XARPrefetcher``).
  package func prefetchedItems(workers: Int = 2) -> XARPrefetchedItems {
    XARPrefetchedItems(XARPrefetcher(file: file, heapStart: header.heapStart, entries: entries, workers: workers))
  }
}
