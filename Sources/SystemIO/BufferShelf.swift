/// Byte buffers put aside for reuse across threads: a few kept, handed out as they were put.
///
/// Reading hundreds of megabytes through buffers made new each time costs a page fault (and a
/// page of zeros) for every 4 KiB, since glibc gives large freed blocks back to the kernel; a
/// shelf keeps a few of them instead. A buffer is put on it moved (the caller's reference
/// dropped first), so it is not shared when it is emptied, which would make it anew.
package final class BufferShelf: Sendable {
  private let buffers = Locked<[[UInt8]]>([])
  /// The most buffers kept; more are freed.
  private let limit: Int
  /// Buffers with less capacity are freed.
  private let minimumCapacity: Int

  package init(limit: Int, minimumCapacity: Int) {
    self.limit = limit
    self.minimumCapacity = minimumCapacity
  }

  /// A buffer put aside, its bytes as they were (a shelf of one size of buffer hands them out
  /// ready to overwrite), or nil when there is none.
  package func take() -> [UInt8]? { buffers.withLock { $0.popLast() } }

  /// Keeps `bytes` for a later ``take()`` if it is large enough and there is room; `bytes` is
  /// left empty either way.
  package func put(_ bytes: inout [UInt8]) {
    let buffer = bytes
    bytes = []
    guard buffer.capacity >= minimumCapacity else { return }
    buffers.withLock { if $0.count < limit { $0.append(buffer) } }
  }
}
