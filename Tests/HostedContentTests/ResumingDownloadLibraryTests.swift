import Foundation
import HostedContent
import TestSupport
import Testing

/// The download, used as a library (no pkgtool binary): a file served over loopback HTTP by a
/// server that cuts the connection twice arrives whole, resumed with Range and If-Range; a limit
/// stops a larger answer, leaving nothing behind.
@Suite struct ResumingDownloadLibraryTests {
  static func served(in dir: TemporaryDirectory, size: Int) throws -> (String, [UInt8]) {
    var generator = SystemRandomNumberGenerator()
    let bytes = (0..<size).map { _ in UInt8.random(in: 0...255, using: &generator) }
    let path = dir.appending("served.pkg")
    try writeFile(path, bytes)
    return (path, bytes)
  }

  @Test func aCutTransferArrivesWhole() throws {
    let dir = try TemporaryDirectory()
    let (path, bytes) = try Self.served(in: dir, size: 2_500_000)
    let server = try CuttingHTTPServer(.files(first: path, later: nil), cutAfter: 1_000_000, cuts: 2)
    defer { server.stop() }
    let target = dir.appending("got.pkg")
    try ResumingDownload(address: server.base + "/packages/first.pkg", limit: nil).run(into: target)
    #expect(try readFile(target) == bytes)
    #expect(server.requests.count == 3, "\(server.requests)")
    #expect(server.requests.dropFirst().map(\.range) == ["bytes=1000000-", "bytes=2000000-"], "\(server.requests)")

    // The same through DownloadedPackage: a private copy that goes with the object.
    var copy: String?
    do {
      let download = try DownloadedPackage(server.base + "/packages/first.pkg", catalog: nil)
      copy = download.path
      #expect(try readFile(download.path) == bytes)
    }
    #expect(copy.map { !FileManager.default.fileExists(atPath: $0) } == true, "the private copy was left behind")
  }

  @Test func aLimitStopsALargerAnswer() throws {
    let dir = try TemporaryDirectory()
    let (path, _) = try Self.served(in: dir, size: 300_000)
    let server = try CuttingHTTPServer(.files(first: path, later: nil), cutAfter: 10_000_000, cuts: 0)
    defer { server.stop() }
    #expect(throws: OperationError.self) {
      _ = try DownloadedPackage(server.base + "/packages/first.pkg", catalog: nil, maxSize: 100_000)
    }
  }
}
