import Crypto
import Foundation
import TestSupport
import Testing

/// `pkgtool install URL` and `pkgtool unpack URL` through a connection that drops part way: the
/// built binary against ``CuttingHTTPServer`` on loopback, which closes the connection after K
/// bytes of the body on its first requests, honours `Range: bytes=N-` and `If-Range`
/// afterwards, and logs every request it sees. No mocks: real sockets, real curl.
@Suite struct ResumingDownloadTests {
  /// Two packages of the same product, 1.0 and 1.1, of random bytes (they do not compress, so
  /// each package is about 3 MB and a cut at 1 MB lands inside the body).
  struct Packages {
    let folder: TemporaryDirectory
    var first: String { folder.appending("first.pkg") }
    var second: String { folder.appending("second.pkg") }

    init() throws {
      folder = try TemporaryDirectory("pkgtool-resume")
      var generator = SystemRandomNumberGenerator()
      for (dir, sizes) in [("one", [1_500_000, 1_400_000, 700]), ("two", [1_200_000, 1_300_000])] {
        for (i, size) in sizes.enumerated() {
          try writeFile(
            folder.appending("\(dir)/part\(i)/file\(i).bin"),
            (0..<size).map { _ in UInt8.random(in: 0...255, using: &generator) })
        }
      }
      for (dir, version, output) in [("one", "1.0", "first.pkg"), ("two", "1.1", "second.pkg")] {
        let built = try pkgtool(
          ["build", dir, "--product-id", "com.example.resume", "--content-version", version, "-o", output, "-q"],
          in: folder.path)
        guard built.status == 0 else { throw TestFailure("build: \(built.stderr)") }
      }
    }

    /// The files under `root`, by relative path.
    func files(_ root: String) throws -> [String: [UInt8]] {
      try snapshot(root).filter { $0.value.kind == .file }.mapValues(\.bytes)
    }

    /// A signed catalog that lists `package` at `base/packages/first.pkg`.
    func catalog(for package: String, base: String) throws -> String {
      let folder = self.folder
      if !FileManager.default.fileExists(atPath: folder.appending("keys/signing.pub")) {
        let made = try pkgtool(["keygen", "-o", "keys/signing", "-q"], in: folder.path)
        guard made.status == 0 else { throw TestFailure("keygen: \(made.stderr)") }
      }
      // publish names the URL after the file: a copy under the name the server is asked for.
      try FileManager.default.createDirectory(atPath: folder.appending("published"), withIntermediateDirectories: true)
      try? FileManager.default.removeItem(atPath: folder.appending("published/first.pkg"))
      try FileManager.default.copyItem(atPath: package, toPath: folder.appending("published/first.pkg"))
      let published = try pkgtool(
        [
          "publish", "published/first.pkg", "--key", "keys/signing", "--base-url", base + "/packages", "-o",
          "catalog.json", "-q",
        ], in: folder.path)
      guard published.status == 0 else { throw TestFailure("publish: \(published.stderr)") }
      return folder.appending("catalog.json")
    }
  }

  static func sha256(_ path: String) throws -> String {
    SHA256.hash(data: try readFile(path)).map { String(format: "%02x", $0) }.joined()
  }

  @Test func aCutTransferIsResumedWithRangeAndIfRange() throws {
    let packages = try Packages()
    let folder = packages.folder
    let server = try CuttingHTTPServer(.files(first: packages.first, later: nil), cutAfter: 1_000_000, cuts: 2)
    let url = server.base + "/packages/first.pkg"
    let catalog = try packages.catalog(for: packages.first, base: server.base)

    let installed = try pkgtool(
      ["install", url, "--into", "docs", "--catalog", catalog, "--public-key", "keys/signing.pub"], in: folder.path)
    #expect(installed.status == 0, "\(installed.stderr)")
    #expect(
      try packages.files(folder.appending("docs/com.example.resume/current")) == packages.files(folder.appending("one"))
    )

    // Request 1 whole and cut, request 2 the rest of it and cut again, request 3 the rest.
    let requests = server.requests
    let etag = "\"\(try Self.sha256(packages.first))\""
    #expect(requests.count == 3, "\(requests)")
    #expect(requests.first?.range == nil && requests.first?.ifRange == nil)
    #expect(requests.dropFirst().map(\.range) == ["bytes=1000000-", "bytes=2000000-"], "\(requests)")
    #expect(requests.dropFirst().allSatisfy { $0.ifRange == etag && $0.status == 206 }, "\(requests)")
  }

  @Test func unpackResumesToo() throws {
    let packages = try Packages()
    let server = try CuttingHTTPServer(.files(first: packages.first, later: nil), cutAfter: 700_000, cuts: 1)
    let unpacked = try pkgtool(
      ["unpack", server.base + "/packages/first.pkg", "-o", "out", "-q"], in: packages.folder.path)
    #expect(unpacked.status == 0, "\(unpacked.stderr)")
    #expect(
      try packages.files(packages.folder.appending("out/Contents"))
        == packages.files(packages.folder.appending("one")))
    #expect(server.requests.map(\.range) == [nil, "bytes=700000-"])
  }

  /// The file is replaced after the first request: the If-Range no longer matches and the
  /// server answers 200 with the new bytes (itself cut once more). The result is the second
  /// package whole; bytes of the first never stay in front of it.
  @Test func aFileChangedBetweenRequestsIsNeverSpliced() throws {
    let packages = try Packages()
    let folder = packages.folder
    let server = try CuttingHTTPServer(
      .files(first: packages.first, later: packages.second), cutAfter: 1_000_000, cuts: 2)
    let url = server.base + "/packages/first.pkg"

    let unpacked = try pkgtool(["unpack", url, "-o", "out", "-q"], in: folder.path)
    #expect(unpacked.status == 0, "\(unpacked.stderr)")
    #expect(try packages.files(folder.appending("out/Contents")) == packages.files(folder.appending("two")))
    let requests = server.requests
    #expect(requests.count == 3, "\(requests)")
    #expect(requests.map(\.status) == [200, 200, 206], "\(requests)")
    // The third asks for the rest of the second file, under the second file's ETag.
    #expect(requests.last?.range == "bytes=1000000-")
    #expect(requests.last?.ifRange == "\"\(try Self.sha256(packages.second))\"")
  }

  /// A server that ignores If-Range and sends no ETag with its 206: the rest of another file is
  /// never put after the first one's head (the part is thrown away and the file fetched again).
  @Test func aPartWithoutTheSameETagIsNeverSpliced() throws {
    let packages = try Packages()
    let folder = packages.folder
    let server = try CuttingHTTPServer(
      .files(first: packages.first, later: packages.second), cutAfter: 1_000_000, cuts: 1, careless: true)
    let unpacked = try pkgtool(["unpack", server.base + "/packages/first.pkg", "-o", "out", "-q"], in: folder.path)
    #expect(unpacked.status == 0, "\(unpacked.stderr)")
    #expect(try packages.files(folder.appending("out/Contents")) == packages.files(folder.appending("two")))
    #expect(server.requests.map(\.status) == [200, 206, 200], "\(server.requests)")
  }

  /// A package larger than --max-size is not downloaded past it: an endless answer cannot fill
  /// the disk (there was no bound without a catalog).
  @Test func aDownloadStopsAtMaxSize() throws {
    let packages = try Packages()
    let folder = packages.folder
    let server = try CuttingHTTPServer(.files(first: packages.first, later: nil), cutAfter: 0, cuts: 0)
    let url = server.base + "/packages/first.pkg"
    for arguments in [["install", url, "--into", "docs"], ["unpack", url, "-o", "out"]] {
      let run = try pkgtool(arguments + ["--max-size", "1M"], in: folder.path)
      #expect(run.status == 2, "\(arguments[0]): \(run.stderr)")
      #expect(run.stderr.contains("larger than --max-size (1000000 bytes)"), "\(arguments[0]): \(run.stderr)")
      #expect(!run.stderr.contains("pkgtool-download"), "\(run.stderr)")
    }
    #expect(!FileManager.default.fileExists(atPath: folder.appending("out")))
  }

  /// With a catalog that lists the first package, the replaced file is refused: it does not
  /// have the catalog's SHA-256 (or size). Nothing is installed, and no temporary is left.
  @Test func aChangedFileIsRefusedByTheCatalog() throws {
    let packages = try Packages()
    let folder = packages.folder
    let server = try CuttingHTTPServer(
      .files(first: packages.first, later: packages.second), cutAfter: 1_000_000, cuts: 1)
    let catalog = try packages.catalog(for: packages.first, base: server.base)
    let temporary = try TemporaryDirectory("pkgtool-resume-tmp")
    let installed = try pkgtool(
      [
        "install", server.base + "/packages/first.pkg", "--into", "docs", "--catalog", catalog, "--public-key",
        "keys/signing.pub",
      ], in: folder.path, environment: ["TMPDIR": temporary.path])
    #expect(installed.status != 0)
    #expect(installed.stderr.contains("first.pkg"), "\(installed.stderr)")
    #expect(!installed.stderr.contains("pkgtool-download"), "\(installed.stderr)")
    #expect(!FileManager.default.fileExists(atPath: folder.appending("docs/com.example.resume/current")))
    #expect(try FileManager.default.contentsOfDirectory(atPath: temporary.path) == [])
  }

  /// A connection that is cut every time: a bounded number of requests, then exit 2 with a
  /// message that names the URL, the reason and what to do, never a temporary path.
  @Test func aServerThatAlwaysCutsIsGivenUpOn() throws {
    let packages = try Packages()
    let folder = packages.folder
    let server = try CuttingHTTPServer(.files(first: packages.first, later: nil), cutAfter: 0, cuts: 1000)
    let url = server.base + "/packages/first.pkg"
    let temporary = try TemporaryDirectory("pkgtool-resume-tmp")
    let installed = try pkgtool(
      ["install", url, "--into", "docs"], in: folder.path, environment: ["TMPDIR": temporary.path])
    #expect(installed.status == 2)
    #expect(
      installed.stderr.hasPrefix("pkgtool: error: cannot download '\(url)': the transfer was cut"),
      "\(installed.stderr)")
    #expect(installed.stderr.contains("curl: (18)"), "\(installed.stderr)")
    #expect(installed.stderr.contains("try again later"), "\(installed.stderr)")
    #expect(!installed.stderr.contains(temporary.path), "\(installed.stderr)")
    // No byte ever came: the first request and 5 retries.
    #expect(server.requests.count == 6, "\(server.requests)")
    #expect(try FileManager.default.contentsOfDirectory(atPath: temporary.path) == [])
  }
}
