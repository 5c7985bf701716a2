// Containers for many small things, kept compact: growing never copies what is held and never
// leaves a spare half (the writer and the rules keep tens of thousands of records, names and
// paths; an array growing by doubling holds up to twice what it needs, and three times while it
// copies).

/// An array in chunks of 1,024 elements: appending never copies what is there, and at most one
/// chunk is partly empty (a copy, such as a streamed TOC's batch, shares all but that one).
package struct ChunkedArray<Element> {
  private var chunks: [[Element]] = []
  private static var shift: Int { 10 }
  private static var chunkSize: Int { 1 << shift }
  package private(set) var count = 0

  package init() {}

  package subscript(index: Int) -> Element {
    get { chunks[index >> Self.shift][index & (Self.chunkSize - 1)] }
    set { chunks[index >> Self.shift][index & (Self.chunkSize - 1)] = newValue }
  }

  package mutating func append(_ element: Element) {
    if count & (Self.chunkSize - 1) == 0 {
      chunks.append([])
      chunks[chunks.count - 1].reserveCapacity(Self.chunkSize)
    }
    chunks[chunks.count - 1].append(element)
    count += 1
  }
}

extension ChunkedArray: Sendable where Element: Sendable {}

/// Byte strings appended one after another, kept in chunks of 64 KiB. Appending never copies what
/// is held, at most one chunk is partly filled, and a string never straddles two chunks (one
/// longer than a chunk gets a chunk of its own), so each can be seen as one buffer.
///
/// A string is found by the position ``append(_:)`` returned and its length.
package struct ByteArena: Sendable {
  private var chunks: [[UInt8]] = []
  /// Room left in the last chunk; 0 after a string that had a chunk of its own.
  private var room = 0
  private static let shift = 16
  private static let chunkSize = 1 << shift

  package init() {}

  /// Adds `bytes`; returns their position.
  package mutating func append<C: Collection<UInt8>>(_ bytes: C) -> Int {
    let count = bytes.count
    if count > ByteArena.chunkSize {
      // A chunk of its own, and empty chunks after it so positions stay chunk-number-based.
      let position = chunks.count << ByteArena.shift
      chunks.append(Array(bytes))
      for _ in 1..<((count + ByteArena.chunkSize - 1) >> ByteArena.shift) { chunks.append([]) }
      room = 0
      return position
    }
    if count > room || chunks.isEmpty {
      chunks.append([])
      chunks[chunks.count - 1].reserveCapacity(ByteArena.chunkSize)
      room = ByteArena.chunkSize
    }
    let last = chunks.count - 1
    let position = last << ByteArena.shift | chunks[last].count
    chunks[last].append(contentsOf: bytes)
    room -= count
    return position
  }

  /// Adds `first` and `second` as one string (so they lie side by side); returns its position.
  package mutating func append(_ first: UnsafeBufferPointer<UInt8>, then second: UnsafeBufferPointer<UInt8>) -> Int {
    let count = first.count + second.count
    guard count <= room, !chunks.isEmpty else { return append(Array(first) + Array(second)) }
    let last = chunks.count - 1
    let position = last << ByteArena.shift | chunks[last].count
    chunks[last].append(contentsOf: first)
    chunks[last].append(contentsOf: second)
    room -= count
    return position
  }

  /// The `count` bytes at `position`.
  package subscript(position: Int, count: Int) -> ArraySlice<UInt8> {
    let offset = position & (ByteArena.chunkSize - 1)
    return chunks[position >> ByteArena.shift][offset..<(offset + count)]
  }

  /// Calls `body` with the `count` bytes at `position`.
  package func withBytes<R>(at position: Int, count: Int, _ body: (UnsafeBufferPointer<UInt8>) throws -> R) rethrows
    -> R
  {
    let offset = position & (ByteArena.chunkSize - 1)
    return try chunks[position >> ByteArena.shift].withUnsafeBufferPointer {
      try body(UnsafeBufferPointer(rebasing: $0[offset..<(offset + count)]))
    }
  }
}
