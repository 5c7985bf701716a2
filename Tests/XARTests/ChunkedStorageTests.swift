import Testing

@testable import XAR

/// `ByteArena` gives back every string as it was added: across chunk boundaries (a string that
/// does not fit in what is left of a chunk starts the next), for strings longer than a chunk,
/// for empty ones, and for strings added in two parts.
@Suite struct ChunkedStorageTests {
  @Test func everyStringComesBackWhole() {
    var arena = ByteArena()
    var added: [(position: Int, bytes: [UInt8])] = []
    var seed: UInt64 = 0x9E37_79B9_7F4A_7C15
    func next() -> Int {
      seed = seed &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
      return Int(seed >> 33)
    }
    for i in 0..<3_000 {
      // Mostly short, some near a chunk's size, a few longer than a chunk, some empty.
      let length =
        i % 500 == 7
        ? 65_536 * 2 + next() % 1000 : i % 97 == 3 ? 60_000 + next() % 6_000 : i % 50 == 0 ? 0 : next() % 300
      let bytes = (0..<length).map { UInt8(truncatingIfNeeded: $0 &+ i &* 131) }
      if i % 3 == 1 {
        // In two parts, split anywhere: one string all the same.
        let cut = length == 0 ? 0 : next() % (length + 1)
        let position = bytes.withUnsafeBufferPointer {
          arena.append(UnsafeBufferPointer(rebasing: $0[..<cut]), then: UnsafeBufferPointer(rebasing: $0[cut...]))
        }
        added.append((position, bytes))
      } else {
        added.append((arena.append(bytes), bytes))
      }
    }
    for (position, bytes) in added {
      #expect(Array(arena[position, bytes.count]) == bytes)
      #expect(arena.withBytes(at: position, count: bytes.count) { Array($0) } == bytes)
    }
  }

  @Test func chunkedArrayKeepsOrder() {
    var array = ChunkedArray<Int>()
    for i in 0..<10_000 { array.append(i * 3) }
    array[4_097] = -1
    #expect(array.count == 10_000)
    #expect(array[0] == 0 && array[4_095] == 4_095 * 3 && array[4_097] == -1 && array[9_999] == 9_999 * 3)
  }
}
