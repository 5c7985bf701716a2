import Dispatch
import SystemIO

/// Decodes and verifies the data of a package's files on a worker thread, ahead of the reader
/// and in the same order, so reading the heap (inflating, hashing) overlaps with the work done
/// on each entry (rules, writing files).
///
/// Files up to ``wholeLimit`` bytes (declared and stored) are decoded whole; larger ones are
/// left to the caller, who streams them as before (``Item/isStreamed``). At most
/// ``queuedBatches`` batches of up to ``batchBytes`` bytes or ``batchCount`` files wait at any
/// time, so read-ahead memory stays bounded whatever the package.
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
  static let batchBytes = 512 << 10
  static let batchCount = 256
  static let queuedBatches = 2

  private struct State: Sendable {
    var batches: [[Item]] = []
    var cancelled = false
    var owed = 0
  }

  private let file: FileDescriptor
  private let heapStart: UInt64
  private let entries: XAREntryTable
  private let state = Locked(State())
  private let filled = DispatchSemaphore(value: 0)
  private let free = DispatchSemaphore(value: XARPrefetcher.queuedBatches)
  private let stopped = DispatchSemaphore(value: 0)

  init(file: FileDescriptor, heapStart: UInt64, entries: XAREntryTable) {
    self.file = file
    self.heapStart = heapStart
    self.entries = entries  // the reader's array, shared, not copied
    DispatchQueue.global().async { [self] in
      work()
      stopped.signal()
    }
  }

  private func work() {
    let window = ReadWindow()
    var batch: [Item] = []
    var batchBytes = 0
    var chunk = [UInt8](repeating: 0, count: 64 * 1024)
    for i in entries.indices where entries.kind(at: i) == .file {
      if state.withLock({ $0.cancelled }) { return }
      let (size, stored) = entries.sizes(at: i)
      if size > XARPrefetcher.wholeLimit || stored > XARPrefetcher.wholeLimit {
        batch.append(Item(bytes: [], error: nil, isStreamed: true))
      } else {
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
        batchBytes += item.bytes.count
        batch.append(item)
      }
      if batchBytes >= XARPrefetcher.batchBytes || batch.count >= XARPrefetcher.batchCount {
        guard push(batch) else { return }
        batch = []
        batchBytes = 0
      }
    }
    if !batch.isEmpty { _ = push(batch) }
  }

  // (The semaphores must be back at their starting values when they are freed: `owed` counts the
  // waits on `free` that no take has answered yet.)

  /// Queues a batch, waiting while the queue is full; false once cancelled.
  private func push(_ batch: [Item]) -> Bool {
    free.wait()
    let cancelled = state.withLock { state -> Bool in
      state.owed += 1
      if !state.cancelled { state.batches.append(batch) }
      return state.cancelled
    }
    filled.signal()
    return !cancelled
  }
}

/// The consumer's side, used from one thread: the items in file order.
package final class XARPrefetchedItems {
  private let prefetcher: XARPrefetcher
  private var current: [XARPrefetcher.Item] = []
  private var position = 0

  init(_ prefetcher: XARPrefetcher) { self.prefetcher = prefetcher }

  /// The next file's item (blocking until the worker has it).
  package func next() -> XARPrefetcher.Item {
    if position == current.count {
      current = prefetcher.take()
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
  /// The next batch (blocking).
  fileprivate func take() -> [Item] {
    filled.wait()
    let batch = state.withLock { state -> [Item] in
      state.owed -= 1
      return state.batches.isEmpty ? [] : state.batches.removeFirst()
    }
    free.signal()
    return batch
  }

  /// Cancels the worker and waits until it has stopped; safe to call more than once.
  fileprivate func stop() {
    let first = state.withLock { state -> Bool in
      defer { state.cancelled = true }
      return !state.cancelled
    }
    guard first else { return }
    // Unblock a worker waiting for room, then wait for it to end.
    free.signal()
    stopped.wait()
    stopped.signal()
    let owed = state.withLock { state -> Int in
      defer { state.owed = 0 }
      return state.owed
    }
    for _ in 0..<max(0, owed) { free.signal() }
  }
}

extension XARReader {
  /// Starts decoding the data of every file entry on a worker thread (see ``XARPrefetcher``).
  package func prefetchedItems() -> XARPrefetchedItems {
    XARPrefetchedItems(XARPrefetcher(file: file, heapStart: header.heapStart, entries: entries))
  }
}
