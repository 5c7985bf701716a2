import TestSupport
import Testing
import XAR

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// The prefetcher's workers decode batches in whatever order they finish, and the reader gets
/// every file's bytes in file order all the same: many batches, files of different sizes (a few
/// large enough to come in parts), several rounds (an ordering race shows up as a mismatch).
@Suite struct XARPrefetcherTests {
  @Test func itemsComeInFileOrderFromEveryWorker() throws {
    let dir = try TemporaryDirectory()
    let path = dir.appending("many.xar")
    let writer = try XARWriter(path: path)
    try writer.addDirectory("d", attributes: .init(mode: 0o755))
    var expected: [[UInt8]] = []
    for i in 0..<3_000 {
      let size = i % 500 == 7 ? 300_000 + i * 100 : (i * 37) % 2_000
      let bytes = (0..<size).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ i) }
      try writer.addFile("d/f\(i)", attributes: .init(mode: 0o644), compression: .zlib(level: 1), bytes: bytes)
      if i % 3 == 0 { try writer.addDirectory("d/sub\(i)", attributes: .init(mode: 0o755)) }
      expected.append(bytes)
    }
    try writer.finish()

    for _ in 0..<5 {
      let reader = try XARReader(path: path)
      let items = reader.prefetchedItems()
      var index = 0
      for entry in reader.entries where entry.kind == .file {
        var item = items.next()
        var bytes = item.bytes
        var parts = 1
        while item.continues {
          item = items.nextPart()
          bytes += item.bytes
          parts += 1
        }
        #expect(item.error == nil)
        #expect(bytes == expected[index], "file \(index) (\(entry.path)) got another file's bytes")
        #expect(parts == 1 || expected[index].count > 256 << 10, "only files past the whole limit come in parts")
        index += 1
      }
      #expect(index == expected.count)
      items.stop()
    }
  }

  @Test func partsNobodyReadAreSkippedAndTheNextFileIsItself() throws {
    let dir = try TemporaryDirectory()
    let path = dir.appending("parts.xar")
    let writer = try XARWriter(path: path)
    let large = (0..<1_000_000).map { UInt8(truncatingIfNeeded: $0 &* 13) }
    try writer.addFile("large", attributes: .init(mode: 0o644), compression: .zlib(level: 1), bytes: large)
    try writer.addFile("small", attributes: .init(mode: 0o644), compression: .none, bytes: [1, 2, 3])
    try writer.addFile("large2", attributes: .init(mode: 0o644), compression: .none, bytes: large)
    try writer.finish()
    let reader = try XARReader(path: path)
    let items = reader.prefetchedItems()
    let first = items.next()
    #expect(first.continues && first.bytes == Array(large[..<(256 << 10)]))
    // The rest of "large" is never asked for.
    #expect(items.next().bytes == [1, 2, 3])
    let third = items.next()
    #expect(third.continues && third.bytes == Array(large[..<(256 << 10)]))
    items.stop()
  }

  /// A large file is decoded by one worker, part after part; the other starts on the next large
  /// file before the reader is through the first (it waited, when parts were held to three
  /// batches ahead like runs of small files): with the reader taking nothing, all four parts
  /// of both files are decoded.
  @Test func twoLargeFilesAreDecodedAtOnce() throws {
    let dir = try TemporaryDirectory()
    let path = dir.appending("two.xar")
    let writer = try XARWriter(path: path)
    let large = (0..<(1 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ $0 >> 9) }
    try writer.addFile("a", attributes: .init(mode: 0o644), compression: .zlib(level: 1), bytes: large)
    try writer.addFile("b", attributes: .init(mode: 0o644), compression: .none, bytes: large)
    try writer.finish()
    let reader = try XARReader(path: path)
    let items = reader.prefetchedItems(workers: 2)
    defer { items.stop() }
    // Waits for the workers (they stop at the bound); fails if the second file never starts.
    var ready = 0
    for _ in 0..<3_000 where ready < 8 {
      usleep(10_000)
      ready = items.batchesReady
    }
    #expect(ready == 8, "parts decoded ahead of a reader that took none: \(ready) of 8")
    var first = items.next()
    var bytes = first.bytes
    while first.continues {
      first = items.nextPart()
      bytes += first.bytes
    }
    #expect(bytes == large)
  }

  /// Large files up to the bound come in parts; one past it is left to the reader, and the
  /// files after it are still decoded ahead.
  @Test func filesPastThePartsBoundAreLeftToTheReader() throws {
    let dir = try TemporaryDirectory()
    let path = dir.appending("bound.xar")
    let writer = try XARWriter(path: path)
    let mid = (0..<(600 << 10)).map { UInt8(truncatingIfNeeded: $0 &* 5) }
    let long = (0..<(1_200 << 10)).map { UInt8(truncatingIfNeeded: $0 &* 3) }
    try writer.addFile("mid", attributes: .init(mode: 0o644), compression: .zlib(level: 1), bytes: mid)
    try writer.addFile("long", attributes: .init(mode: 0o644), compression: .zlib(level: 1), bytes: long)
    try writer.addFile("small", attributes: .init(mode: 0o644), compression: .none, bytes: [7, 8, 9])
    try writer.finish()
    let reader = try XARReader(path: path)
    let items = reader.prefetchedItems(workers: 2, largeFilesInPartsUpTo: 1 << 20)
    defer { items.stop() }
    var first = items.next()
    #expect(!first.isStreamed && first.continues)
    var bytes = first.bytes
    while first.continues {
      first = items.nextPart()
      bytes += first.bytes
    }
    #expect(bytes == mid)
    #expect(items.next().isStreamed, "a file past the bound is the reader's to decode")
    #expect(items.next().bytes == [7, 8, 9])
  }
}
