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

  /// An error body is read for its reason only when it is `pkgtool serve`'s JSON
  /// (`{"error": CODE, "detail": TEXT}`), within 4 KiB, and what is shown is escaped for the
  /// terminal: never raw bytes of the server's.
  @Test func anErrorBodyGivesItsReasonEscaped() {
    func body(_ text: String) -> [UInt8] { Array(text.utf8) }
    #expect(
      ResumingDownload.refusal(body(#"{"error":"revoked","detail":"the transaction was refunded"}"#))
        == "revoked: the transaction was refunded")
    #expect(ResumingDownload.refusal(body(#"{"error":"expired-url"}"#)) == "expired-url")
    // A terminal escape in the code or the detail is shown as an escape.
    let hostile = ResumingDownload.refusal(body(#"{"error":"x\u001b[2J","detail":"a\u009b31m\nb"}"#))
    #expect(hostile == #"x\u{1b}[2J: a\u{9b}31m\u{a}b"#, "\(hostile ?? "nil")")
    // Not that JSON: nothing is shown.
    for other in ["<html>Forbidden</html>", #"{"detail":"no code"}"#, #"{"error":42}"#, "[1]", ""] {
      #expect(ResumingDownload.refusal(body(other)) == nil, "\(other)")
    }
    // Past 4 KiB (a body cut there is not JSON either): nothing.
    let long = #"{"error":"x","detail":""# + String(repeating: "y", count: 5000) + #""}"#
    #expect(ResumingDownload.refusal(body(long)) == nil)
    // A long detail is shortened.
    let wordy = ResumingDownload.refusal(
      body(#"{"error":"x","detail":""# + String(repeating: "y", count: 1000) + #""}"#))
    #expect(wordy.map { $0.count < 400 && $0.hasSuffix("…") } == true)
  }
}
