import SystemIO

/// Encodes a writer's blocks on several threads while it fills the next ones, and hands them
/// back in order: each block is compressed on its own, so the bytes are the same for any number
/// of threads. At most ``maxInFlight`` blocks are held (each one block size, raw and encoded):
/// one per thread, so that memory stays low; the writer fills the next block while they work.
final class BlockEncoderPool: @unchecked Sendable {
  private struct State: Sendable {
    /// Blocks waiting for a thread: their number and bytes.
    var queue: [(Int, [UInt8])] = []
    /// Encoded blocks not yet taken, by number: the raw bytes and the encoded ones.
    var done: [Int: ([UInt8], [UInt8])] = [:]
    var stopping = false
  }
  private let state = Watched(State())
  private let compression: AppleArchiveCompression
  /// Blocks submitted, and the number of the next one to hand back.
  private var submitted = 0
  private var taken = 0
  let maxInFlight: Int

  /// A pool of `threads` (at least 2) encoding with `compression`; nil when no thread could be
  /// started (the writer then encodes on its own thread).
  init?(compression: AppleArchiveCompression, threads: Int) {
    self.compression = compression
    maxInFlight = threads
    for _ in 0..<threads {
      let started = startDetachedThread { [state, compression] in
        while let (number, block) = state.wait(
          until: { $0.stopping || !$0.queue.isEmpty },
          then: { $0.stopping ? nil : $0.queue.removeFirst() })
        {
          let encoded = BlockCodec.encode(block, compression: compression)
          state.update { $0.done[number] = (block, encoded) }
        }
      }
      if !started {
        stop()
        return nil
      }
    }
  }

  deinit { stop() }

  /// Hands `block` to the threads; returns the blocks now ready in order (waiting for the
  /// oldest while ``maxInFlight`` are held).
  func submit(_ block: [UInt8]) -> [(raw: [UInt8], encoded: [UInt8])] {
    let number = submitted
    submitted += 1
    state.update { $0.queue.append((number, block)) }
    return take(waitingWhileAtLeast: maxInFlight)
  }

  /// Every block not yet handed back, in order, waiting for each.
  func drain() -> [(raw: [UInt8], encoded: [UInt8])] { take(waitingWhileAtLeast: 1) }

  /// Hands back the blocks ready in order; waits for the oldest as long as `limit` or more are
  /// still out.
  private func take(waitingWhileAtLeast limit: Int) -> [(raw: [UInt8], encoded: [UInt8])] {
    var out: [(raw: [UInt8], encoded: [UInt8])] = []
    while taken < submitted {
      let number = taken
      let mustWait = submitted - taken >= limit
      let ready: ([UInt8], [UInt8])? =
        mustWait
        ? state.wait(until: { $0.done[number] != nil }, then: { $0.done.removeValue(forKey: number) })
        : state.update { $0.done.removeValue(forKey: number) }
      guard let (raw, encoded) = ready else { break }
      out.append((raw, encoded))
      taken += 1
    }
    return out
  }

  /// Ends the threads (after the block each is on).
  func stop() { state.update { $0.stopping = true } }
}
