import SystemIO
import TestSupport
import Testing

/// `observeMapped` (how the writer hashes the finished archive) shows exactly the bytes asked
/// for, from an offset that is not on a page and across several windows, as reading would.
@Suite struct MappedReadTests {
  @Test(arguments: [(0, 100_000, 8_192), (4_095, 70_001, 16_384), (12_288, 1, 4_096), (5, 0, 4_096)])
  func showsTheSameBytesAsReading(_ offset: Int, _ length: Int, _ window: Int) throws {
    let dir = try TemporaryDirectory()
    let path = dir.appending("f")
    let bytes = (0..<120_000).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ $0 >> 9) }
    let file = try FileDescriptor.create(path, mode: 0o600)
    try file.write(bytes)
    var seen: [UInt8] = []
    var pieces = 0
    let mapped = file.observeMapped(offset: UInt64(offset), length: UInt64(length), window: window) {
      seen += $0
      pieces += 1
    }
    #expect(mapped)
    #expect(seen == Array(bytes[offset..<(offset + length)]))
    #expect(pieces >= length / window, "at most one window is mapped at a time")
  }
}

/// `copy(from:length:to:)` and `truncate(to:)`: how the writer moves the TOC it spilled behind
/// the data to the front of the archive, across more than one buffer.
@Suite struct FileCopyTests {
  @Test func copiesWithinTheFileAndCuts() throws {
    let dir = try TemporaryDirectory()
    let file = try FileDescriptor.create(dir.appending("f"), mode: 0o600)
    let front = [UInt8](repeating: 0, count: 10)
    let tail = (0..<600_000).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 11) }
    try file.write(front + [UInt8](repeating: 0xEE, count: 700_000) + tail)
    try file.copy(from: 700_010, length: UInt64(tail.count), to: 10)
    try file.truncate(to: 10 + UInt64(tail.count))
    #expect(try file.size() == 600_010)
    #expect(try file.read(count: 700_000, at: 0) == front + tail)
  }
}
