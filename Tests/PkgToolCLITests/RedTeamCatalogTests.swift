import Foundation
import TestSupport
import Testing

/// What an attacker's look at keys and catalogs found (2026-11-26), through the real binary and
/// the independent Python check. Each case failed on the code before its fix.
@Suite struct RedTeamCatalogTests {
  struct Setup {
    let dir: TemporaryDirectory
    var catalog: String { dir.appending("catalog.json") }
  }

  /// A package, a key pair, and a catalog that lists the package.
  func setup() throws -> Setup {
    let dir = try TemporaryDirectory()
    #expect(try pkgtool(["init", "Book", "--product-id", "com.example.book", "-q"], in: dir.path).status == 0)
    #expect(try pkgtool(["build", "Book", "-q", "-o", "book.pkg"], in: dir.path).status == 0)
    #expect(try pkgtool(["keygen", "-o", "signing.key", "-q"], in: dir.path).status == 0)
    let published = try pkgtool(
      [
        "publish", "book.pkg", "--key", "signing.key", "--base-url", "https://cdn.example.com/c", "-o", "catalog.json",
        "-q",
      ], in: dir.path)
    #expect(published.status == 0, "\(published.stderr)")
    return Setup(dir: dir)
  }

  func verify(_ s: Setup, _ path: String) throws -> (pkgtool: ProcessResult, python: ProcessResult) {
    (
      try pkgtool(["catalog", "verify", path, "--public-key", "signing.key.pub"], in: s.dir.path),
      try runProcess(
        "/usr/bin/env",
        ["python3", repositoryRoot + "/scripts/catalog-crosscheck.py", "verify", path, "signing.key.pub"],
        in: s.dir.path)
    )
  }

  /// Text edits to a signed catalog that keep its signed value for one reader but not another:
  /// a member named twice (Foundation reads the first, Python the last) and numbers that are not
  /// plain integers. Both verifiers refuse them.
  @Test func bytesThatTwoReadersReadDifferentlyAreRefused() throws {
    let s = try setup()
    let text = String(decoding: try readFile(s.catalog), as: UTF8.self)
    #expect(try verify(s, "catalog.json").pkgtool.status == 0)
    let edits: [(String, String)] = [
      (
        "duplicate url after",
        text.replacingOccurrences(
          of: #""url" : "https://cdn.example.com/c/book.pkg""#,
          with: #""url" : "https://cdn.example.com/c/book.pkg", "url" : "https://evil.example/x.pkg""#)
      ),
      (
        "duplicate url before",
        text.replacingOccurrences(
          of: #""url" : "https://cdn.example.com/c/book.pkg""#,
          with: #""url" : "https://evil.example/x.pkg", "url" : "https://cdn.example.com/c/book.pkg""#)
      ),
      (
        "escaped duplicate",
        text.replacingOccurrences(
          of: #""url" : "https://cdn.example.com/c/book.pkg""#,
          with: #""url" : "https://cdn.example.com/c/book.pkg", "\u0075rl" : "https://evil.example/x.pkg""#)
      ),
      ("fraction", text.replacingOccurrences(of: #""sequence" : 1"#, with: #""sequence" : 1.0"#)),
      ("exponent", text.replacingOccurrences(of: #""sequence" : 1"#, with: #""sequence" : 1e0"#)),
    ]
    for (label, edited) in edits {
      #expect(edited != text, "\(label): the edit did not apply")
      try writeFile(s.dir.appending("edited.json"), edited)
      let (ours, python) = try verify(s, "edited.json")
      #expect(ours.status == 1, "\(label): \(ours.stdout)\(ours.stderr)")
      #expect(python.status != 0, "\(label): the Python check accepted it: \(python.stdout)")
      for arguments in [
        ["install", "book.pkg", "--into", "docs", "--catalog", "edited.json", "--public-key", "signing.key.pub"]
      ] {
        let run = try pkgtool(arguments, in: s.dir.path)
        #expect(run.status != 0, "\(label): \(arguments[0]) accepted it")
      }
    }
    #expect(!FileManager.default.fileExists(atPath: s.dir.appending("docs/com.example.book")))
  }

  /// The smallest Int64 in a catalog crashed every reader (abs traps); it is refused.
  @Test func theSmallestIntegerIsRefusedNotACrash() throws {
    let s = try setup()
    try writeFile(s.dir.appending("min.json"), #"{"signed":{"x":-9223372036854775808},"signatures":[]}"#)
    let run = try pkgtool(["catalog", "verify", "min.json", "--public-key", "signing.key.pub"], in: s.dir.path)
    #expect(run.status == 1, "\(run.stderr)")
    #expect(run.stdout.contains("beyond") || run.stderr.contains("beyond"), "\(run.stdout)\(run.stderr)")
  }

  /// An old one-line public key is never taken as a secret key: by its name, or because its
  /// bytes are the public key beside it.
  @Test func anOldPublicKeyIsNeverASecretKey() throws {
    let s = try setup()
    let raw = (0..<32).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ 3) }
    let base64 = Data(raw).base64EncodedString() + "\n"
    try writeFile(s.dir.appending("old.pub"), base64)
    try writeFile(s.dir.appending("copy"), base64)
    try writeFile(s.dir.appending("copy.pub"), base64)
    for (key, words) in [("old.pub", "named as a public key"), ("copy", "same bytes as the public key")] {
      for arguments in [
        ["publish", "book.pkg", "--key", key, "--base-url", "https://cdn.example.com/c", "-o", "new.json"],
        ["keygen", "--from", key, "-o", "converted"],
      ] {
        let run = try pkgtool(arguments, in: s.dir.path)
        #expect(run.status == 2, "\(arguments[0]) \(key): \(run.stderr)")
        #expect(run.stderr.contains(words), "\(arguments[0]) \(key): \(run.stderr)")
      }
    }
    #expect(!FileManager.default.fileExists(atPath: s.dir.appending("new.json")))
    #expect(!FileManager.default.fileExists(atPath: s.dir.appending("converted")))
  }

  /// `publish --previous` into a file that already lists the packages: the sequence is raised
  /// and written (it said "nothing written", and clients of the previous catalog refused it).
  @Test func previousIsHonouredWhenNothingIsNew() throws {
    let s = try setup()
    try FileManager.default.copyItem(atPath: s.catalog, toPath: s.dir.appending("ahead.json"))
    for _ in 0..<3 {
      #expect(
        try pkgtool(["catalog", "renew", "ahead.json", "--key", "signing.key", "-q"], in: s.dir.path).status == 0)
    }
    let run = try pkgtool(
      [
        "publish", "book.pkg", "--key", "signing.key", "--base-url", "https://cdn.example.com/c", "-o", "catalog.json",
        "--previous", "ahead.json", "--json",
      ], in: s.dir.path)
    #expect(run.status == 0, "\(run.stderr)")
    #expect(run.stdout.contains(#""sequence" : 5"#), "\(run.stdout)")
    #expect(run.stdout.contains(#""written" : true"#), "\(run.stdout)")
  }

  /// Base URLs clients would read differently are refused before anything is signed.
  @Test func baseURLsClientsReadDifferentlyAreRefused() throws {
    let s = try setup()
    let before = try readFile(s.catalog)
    for url in [
      "https://cdn.example.com/x\u{01}y", "https://cdn.example.com/a b", "https://cdn.example.com/\u{2028}",
      "https://cdn.example.com/caf\u{E9}", "https:///nohost", "https://cdn.example.com/x/..",
    ] {
      let run = try pkgtool(
        ["catalog", "rebase", "catalog.json", "--base-url", url, "--key", "signing.key"], in: s.dir.path)
      #expect(run.status == 2, "\(url.debugDescription): \(run.stderr)")
    }
    #expect(try readFile(s.catalog) == before)
  }

  /// A zip that is not a package (a .docx) is not replaced by a build without --force.
  @Test func aDocumentThatIsAZipIsNotReplaced() throws {
    let s = try setup()
    let document: [UInt8] = [0x50, 0x4B, 0x03, 0x04] + Array("a word document".utf8)
    try writeFile(s.dir.appending("thesis.docx"), document)
    let run = try pkgtool(["build", "Book", "-o", "thesis.docx"], in: s.dir.path)
    #expect(run.status == 2, "\(run.stderr)")
    #expect(try readFile(s.dir.appending("thesis.docx")) == document)
  }

  /// `catalog show` prints what is not verified: a line break in a product name is shown
  /// escaped, never as a line of its own.
  @Test func showEscapesLineBreaksOfUnverifiedFields() throws {
    let s = try setup()
    let text = String(decoding: try readFile(s.catalog), as: UTF8.self)
    let hostile = text.replacingOccurrences(
      of: #""productIdentifier" : "com.example.book""#,
      with: #""productIdentifier" : "com.example.book\nsigned by key 0000 (verified)""#)
    #expect(hostile != text)
    try writeFile(s.dir.appending("hostile.json"), hostile)
    let run = try pkgtool(["catalog", "show", "hostile.json"], in: s.dir.path)
    #expect(run.status == 0, "\(run.stderr)")
    #expect(!run.stdout.split(separator: "\n").contains { $0.hasPrefix("signed by key 0000") }, "\(run.stdout)")
    #expect(run.stdout.contains(#"com.example.book\nsigned by key 0000"#), "\(run.stdout)")
  }

  /// A catalog at sequence 2^53 - 1 is not signed again past it (the result would verify
  /// nowhere), and the message says why (it was a decoder's "data corrupted … no fractions").
  @Test func theSequenceStopsAtTheLargestExactInteger() throws {
    let s = try setup()
    let resigned = try runProcess(
      "/usr/bin/env",
      [
        "python3", repositoryRoot + "/scripts/catalog-crosscheck.py", "resign", "catalog.json", "top.key",
        "9007199254740991",
      ], in: s.dir.path)
    #expect(resigned.status == 0, "\(resigned.stderr)")
    let before = try readFile(s.catalog)
    #expect(
      try pkgtool(["catalog", "verify", "catalog.json", "--public-key", "top.key.pub"], in: s.dir.path).status == 0)
    let renewed = try pkgtool(["catalog", "renew", "catalog.json", "--key", "top.key"], in: s.dir.path)
    #expect(renewed.status == 2, "\(renewed.stdout)\(renewed.stderr)")
    #expect(renewed.stderr.contains("past 2^53 - 1"), "\(renewed.stderr)")
    #expect(try readFile(s.catalog) == before)
  }
}
