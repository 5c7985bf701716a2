import Foundation
import HostedContent
import TestSupport
import Testing

/// Issue 44, part 4: `--catalog` and `--root` (and `catalog verify`'s catalog) given as URLs,
/// fetched through the package download path and verified exactly as files are. The built
/// binary, real curl, a real server on loopback (``HostileHTTPServer``).
@Suite struct CatalogByURLTests {
  struct Setup {
    let dir: TemporaryDirectory
    let server: HostileHTTPServer
    /// The folder served under `/files/`.
    var served: String { dir.appending("served") }
    /// The TMPDIR every run is given: downloads leave nothing in it.
    var temporary: String { dir.appending("tmp") }
    var environment: [String: String] {
      ["TMPDIR": temporary, "HOME": dir.appending("home"), "CURL_HOME": dir.appending("home")]
    }
    func url(_ name: String) -> String { server.base + "/files/" + name }

    func run(_ arguments: [String]) throws -> ProcessResult {
      try pkgtool(arguments, in: dir.path, environment: environment)
    }

    func downloadFolders() throws -> [String] {
      try FileManager.default.contentsOfDirectory(atPath: temporary).filter { $0.hasPrefix("pkgtool-download") }
    }
  }

  /// `book.pkg`, keys `root`, `c1`, `c2`; `root-1.json` (catalog key c1) kept locally, as the
  /// app ships it; `root-2.json` (catalog key c2) and `catalog.json` (signed by c2 under root 2)
  /// served beside the catalog, and `key.json` (signed by c1 alone) for `--public-key`.
  func setup() throws -> Setup {
    let dir = try TemporaryDirectory("pkgtool-catalog-url")
    for folder in ["served", "tmp", "home", "project/data"] {
      try FileManager.default.createDirectory(atPath: dir.appending(folder), withIntermediateDirectories: true)
    }
    try writeFile(dir.appending("project/data/notes.txt"), "chapter one\n")
    let steps: [[String]] = [
      ["build", "project", "--product-id", "com.example.url", "--content-version", "1.0", "-o", "book.pkg", "-q"],
      ["keygen", "-o", "root.key", "-q"], ["keygen", "-o", "c1.key", "-q"], ["keygen", "-o", "c2.key", "-q"],
      ["root", "init", "-o", "root-1.json", "--root-key", "root.key", "--catalog-key", "c1.key.pub"],
      [
        "root", "rotate", "root-1.json", "-o", "served/root-2.json", "--key", "root.key", "--catalog-key",
        "c2.key.pub",
      ],
      [
        "publish", "book.pkg", "--key", "c2.key", "--root", "root-1.json", "--root", "served/root-2.json",
        "--base-url", "https://cdn.example.com/content", "-o", "served/catalog.json", "-q",
      ],
      [
        "publish", "book.pkg", "--key", "c1.key", "--base-url", "https://cdn.example.com/content", "-o",
        "served/key.json", "-q",
      ],
    ]
    for step in steps {
      let result = try pkgtool(step, in: dir.path)
      guard result.status == 0 else { throw TestFailure("\(step): \(result.stderr)") }
    }
    return Setup(dir: dir, server: try HostileHTTPServer(serving: dir.appending("served")))
  }

  /// Exit `status`, one line on stderr that contains each of `messages`, nothing left in TMPDIR.
  func expectRefused(_ result: ProcessResult, _ s: Setup, status: Int32, _ messages: String...) throws {
    #expect(result.status == status, "\(result.stdout)\(result.stderr)")
    for message in messages { #expect(result.stderr.contains(message), "\(result.stderr)") }
    #expect(result.stderr.split(separator: "\n").count == 1, "\(result.stderr)")
    #expect(try s.downloadFolders() == [])
  }

  @Test func aCatalogAndANewerRootByURLVerifyAndInstall() throws {
    let s = try setup()
    let installed = try s.run([
      "install", "book.pkg", "--into", "docs", "--catalog", s.url("catalog.json"), "--root", "root-1.json",
      "--root", s.url("root-2.json"),
    ])
    #expect(installed.status == 0, "\(installed.stdout)\(installed.stderr)")
    #expect(FileManager.default.fileExists(atPath: s.dir.appending("docs/com.example.url/current/data/notes.txt")))
    // The device now remembers root 2, which came only by URL.
    #expect(try trustRecordHighest("rootVersion", in: s.dir.appending("docs")) == 2)
    #expect(s.server.requests == ["/files/root-2.json", "/files/catalog.json"], "\(s.server.requests)")

    let verified = try s.run([
      "catalog", "verify", s.url("catalog.json"), "--root", "root-1.json", "--root", s.url("root-2.json"),
    ])
    #expect(verified.status == 0, "\(verified.stderr)")
    #expect(verified.stdout.contains(s.url("catalog.json")), "\(verified.stdout)")

    let unpacked = try s.run([
      "unpack", "book.pkg", "-o", "out", "--catalog", s.url("key.json"), "--public-key", "c1.key.pub", "-q",
    ])
    #expect(unpacked.status == 0, "\(unpacked.stderr)")
    #expect(try s.downloadFolders() == [])

    // Without root 2 the catalog (signed by c2) does not meet root 1's threshold: the URL counted.
    let withoutRoot2 = try s.run(["catalog", "verify", s.url("catalog.json"), "--root", "root-1.json"])
    #expect(withoutRoot2.status == 1, "\(withoutRoot2.stderr)")
  }

  @Test func aTamperedCatalogOrRootByURLIsRefused() throws {
    let s = try setup()
    let text = String(decoding: try readFile(s.served + "/catalog.json"), as: UTF8.self)
    try writeFile(
      s.served + "/tampered.json", text.replacingOccurrences(of: "cdn.example.com", with: "evil.example.com"))
    // The query (a token, say) is never shown.
    let tampered = s.url("tampered.json") + "?token=s3cret"
    let refused = try s.run([
      "install", "book.pkg", "--into", "docs", "--catalog", tampered, "--root", "root-1.json", "--root",
      s.url("root-2.json"),
    ])
    try expectRefused(
      refused, s, status: 1, "the catalog '\(s.url("tampered.json"))' cannot be trusted", "changed after signing")
    #expect(!refused.stderr.contains("s3cret"))
    #expect(!FileManager.default.fileExists(atPath: s.dir.appending("docs/com.example.url")))

    let root = String(decoding: try readFile(s.served + "/root-2.json"), as: UTF8.self)
    try writeFile(
      s.served + "/root-bad.json", root.replacingOccurrences(of: "\"expires\" : \"20", with: "\"expires\" : \"21"))
    let badRoot = try s.run([
      "catalog", "verify", s.url("catalog.json"), "--root", "root-1.json", "--root", s.url("root-bad.json"),
    ])
    try expectRefused(
      badRoot, s, status: 1, "the root cannot be trusted: '\(s.url("root-bad.json"))' (root version 2) carries 0 valid")
  }

  @Test func aMissingDocumentIsAClearDownloadError() throws {
    let s = try setup()
    let missing = s.url("nowhere.json")
    let catalog = try s.run([
      "install", "book.pkg", "--into", "docs", "--catalog", missing, "--public-key", "c1.key.pub",
    ])
    try expectRefused(catalog, s, status: 2, "cannot download '\(missing)': the server answered HTTP 404")
    let root = try s.run(["catalog", "verify", s.url("catalog.json"), "--root", "root-1.json", "--root", missing])
    try expectRefused(root, s, status: 2, "cannot download '\(missing)': the server answered HTTP 404")
  }

  @Test func aBodyPastTheCapIsCutAndRefused() throws {
    let s = try setup()
    // A root padded past 1 MiB with whitespace: valid JSON, but no root is that large.
    let root = String(decoding: try readFile(s.served + "/root-2.json"), as: UTF8.self)
    try writeFile(s.served + "/huge-root.json", root + String(repeating: " ", count: 1 << 20))
    let huge = s.url("huge-root.json")
    let result = try s.run(["catalog", "verify", s.url("catalog.json"), "--root", "root-1.json", "--root", huge])
    try expectRefused(
      result, s, status: 2, "cannot download '\(huge)': it is larger than 1 MiB, the most a root may be")
  }

  @Test func plainHTTPOnlyFromLoopbackAndNeverRedirectedToPlainHTTP() throws {
    let s = try setup()
    let remote = "http://cdn.example.com/content/catalog.json"
    let plain = try s.run(["catalog", "verify", remote, "--public-key", "c1.key.pub"])
    try expectRefused(plain, s, status: 2, "'\(remote)': plain http:// is taken only from a loopback host", "https://")

    // Loopback http to loopback http: a package would follow it, a catalog does not.
    let hop = s.server.base + "/redirect?to=" + s.url("key.json")
    let redirected = try s.run(["catalog", "verify", hop, "--public-key", "c1.key.pub"])
    try expectRefused(
      redirected, s, status: 2, "cannot download '\(s.server.base)/redirect'", "redirected it to another plain http://")
    #expect(s.server.requests == ["/redirect?to=\(s.url("key.json"))"], "\(s.server.requests)")

    // The anchor is never fetched.
    let anchor = try s.run(["catalog", "verify", s.url("catalog.json"), "--root", s.url("root-2.json")])
    #expect(anchor.status == 2, "\(anchor.stderr)")
    #expect(anchor.stderr.contains("the anchor of trust is never fetched"), "\(anchor.stderr)")
    #expect(s.server.requests.count == 1)
  }
}
