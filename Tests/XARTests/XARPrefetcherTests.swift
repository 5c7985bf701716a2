import TestSupport
import Testing
import XAR

/// The prefetcher's workers decode batches in whatever order they finish, and the reader gets
/// every file's bytes in file order all the same: many batches, files of different sizes (a few
/// too large to decode whole), several rounds (an ordering race shows up as a mismatch).
@Suite struct XARPrefetcherTests {
  @Test func itemsComeInFileOrderFromEveryWorker() throws {
    let dir = try TemporaryDirectory()
    let path = dir.appending("many.xar")
    let writer = try XARWriter(path: path)
    try writer.addDirectory("d", attributes: .init(mode: 0o755))
    var expected: [[UInt8]] = []
    for i in 0..<3_000 {
      let size = i % 500 == 7 ? 300_000 : (i * 37) % 2_000
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
        let item = items.next()
        #expect(item.error == nil)
        if item.isStreamed {
          #expect(expected[index].count > 256 << 10, "only files past the whole limit are streamed")
        } else {
          #expect(item.bytes == expected[index], "file \(index) (\(entry.path)) got another file's bytes")
        }
        index += 1
      }
      #expect(index == expected.count)
      items.stop()
    }
  }
}
