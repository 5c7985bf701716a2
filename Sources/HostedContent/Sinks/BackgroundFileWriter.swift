import Dispatch
import SystemIO

/// Creates small files on worker threads, so the kernel's work of creating them overlaps with
/// decoding and checking the next entries. Each file's bytes are gathered whole in a buffer
/// from a small pool (at most ``bufferCount`` in use, so memory stays bounded); the buffers keep
/// their capacity from file to file, so their pages are not faulted in again.
final class BackgroundFileWriter: Sendable {
  /// The largest file written this way, in bytes.
  static let fileLimit = 4 << 20
  /// Buffers in use at most.
  static let bufferCount = 5

  private struct State: Sendable {
    var pool: [[UInt8]] = []
    var firstError: (any Error)?
  }

  /// Buffers free to take. Made at 0 and signalled up to ``bufferCount``: libdispatch stops the
  /// process when a semaphore goes with a value below the one it was made with (a writer given
  /// up with buffers still taken).
  private let slots: DispatchSemaphore = {
    let slots = DispatchSemaphore(value: 0)
    for _ in 0..<BackgroundFileWriter.bufferCount { slots.signal() }
    return slots
  }()
  private let writes = DispatchGroup()
  private let state = Locked(State())

  /// An empty buffer able to hold ``fileLimit`` bytes; waits while all are in use.
  func takeBuffer() -> [UInt8] {
    slots.wait()
    if var buffer = state.withLock({ $0.pool.popLast() }) {
      // Emptied here, where the pool held the only reference: emptying it in `giveBack`, while
      // the writer's closure still held one, would copy it into a fresh allocation every time.
      buffer.removeAll(keepingCapacity: true)
      return buffer
    }
    var buffer: [UInt8] = []
    buffer.reserveCapacity(BackgroundFileWriter.fileLimit)
    return buffer
  }

  /// Gives back a buffer (written, or not to be written).
  func giveBack(_ buffer: [UInt8]) {
    state.withLock { $0.pool.append(buffer) }
    slots.signal()
  }

  /// Creates `name` in `folder` (mode 0644, never over anything) with `bytes`, on a worker
  /// thread; the buffer goes back to the pool afterwards. A failure is kept for ``wait()``.
  func write(_ bytes: [UInt8], to name: String, in folder: DirectoryHandle) {
    writes.enter()
    DispatchQueue.global().async { [self] in
      defer {
        giveBack(bytes)
        writes.leave()
      }
      do {
        let file = try folder.createFile(name, mode: 0o644)
        try bytes.withUnsafeBytes { try file.write($0) }
      } catch {
        state.withLock { if $0.firstError == nil { $0.firstError = error } }
      }
    }
  }

  /// Waits for every write; throws the first error one of them met.
  func wait() throws {
    writes.wait()
    if let error = state.withLock({ $0.firstError }) { throw error }
  }
}
