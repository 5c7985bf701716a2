import Foundation
import SystemIO
import Testing

@testable import HostedContent
@testable import TestSupport

/// The walk reads a regular file without the read that would return 0 when a read comes back
/// short exactly at the size the file had once opened; a file that grew since is still read to
/// its real end, and a FIFO is still refused.
@Suite struct OpenedFileTests {
  func readAll(_ data: EntryData, buffer: Int) throws -> [UInt8] {
    var out: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: buffer)
    while true {
      let n = try chunk.withUnsafeMutableBytes { try data.read(into: $0) }
      if n == 0 { break }
      out += chunk[..<n]
    }
    return out
  }

  @Test(arguments: [1, 999, 1000, 1001, 4096])
  func readsTheWholeFile(buffer: Int) throws {
    let dir = try TemporaryDirectory()
    let bytes = (0..<1000).map { UInt8(truncatingIfNeeded: $0 * 7) }
    try writeFile(dir.appending("a.bin"), bytes)
    let folder = try DirectoryHandle(path: dir.path)
    let (file, size) = try folder.openFileAndSize("a.bin")
    #expect(size == 1000)
    let data = OpenedFile(file, size: size)
    #expect(try readAll(data, buffer: buffer) == bytes)
    #expect(try readAll(data, buffer: buffer).isEmpty)
  }

  @Test func aFileThatGrewAfterOpeningIsReadToItsEnd() throws {
    let dir = try TemporaryDirectory()
    let path = dir.appending("grows.txt")
    try writeFile(path, [UInt8](repeating: 65, count: 1000))
    let folder = try DirectoryHandle(path: dir.path)
    let (file, size) = try folder.openFileAndSize("grows.txt")
    let handle = try #require(FileHandle(forWritingAtPath: path))
    handle.seekToEndOfFile()
    handle.write(Data(repeating: 66, count: 500))
    try handle.close()
    let read = try readAll(OpenedFile(file, size: size), buffer: 4096)
    #expect(read.count == 1500)
    #expect(read.suffix(500).allSatisfy { $0 == 66 })
  }

  @Test func aFIFOIsNotOpened() throws {
    let dir = try TemporaryDirectory()
    #expect(mkfifo(dir.appending("pipe"), 0o644) == 0)
    let folder = try DirectoryHandle(path: dir.path)
    #expect(throws: SystemError.self) { try folder.openFileAndSize("pipe") }
  }
}
