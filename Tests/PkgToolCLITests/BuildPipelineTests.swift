import Foundation
import HostedContent
import TestSupport
import Testing

/// `build` as a content pipeline runs it: again and again into the same output, with the format
/// named by the file, quietly, and never into the content it packs.
@Suite struct BuildPipelineTests {
  func project(_ dir: TemporaryDirectory) throws -> String {
    #expect(try pkgtool(["init", "MyBook", "--product-id", "com.example.book"], in: dir.path).status == 0)
    try writeFile(dir.appending("MyBook/Contents/chapter1.txt"), "Once upon a time.\n")
    return dir.appending("MyBook")
  }

  func head(_ path: String) throws -> [UInt8] { Array(try readFile(path).prefix(4)) }

  @Test func theFormatFollowsTheOutputsExtension() throws {
    let dir = try TemporaryDirectory()
    let book = try project(dir)
    #expect(try pkgtool(["build", book, "-o", dir.appending("a.zip")]).status == 0)
    #expect(try head(dir.appending("a.zip")) == [0x50, 0x4B, 0x03, 0x04])
    #expect(try pkgtool(["build", book, "-o", dir.appending("a.pkg")]).status == 0)
    #expect(try head(dir.appending("a.pkg")) == Array("xar!".utf8))
    #expect(try pkgtool(["validate", dir.appending("a.zip"), dir.appending("a.pkg")]).status == 0)
  }

  /// A format the name contradicts is refused before anything is written, both ways.
  @Test(arguments: [("zip", "x.pkg"), ("xar", "x.zip")])
  func aFormatTheNameContradictsIsRefused(format: String, name: String) throws {
    let dir = try TemporaryDirectory()
    let book = try project(dir)
    let result = try pkgtool(["build", book, "--format", format, "-o", dir.appending(name)])
    #expect(result.status == 2, "\(result.stderr)")
    #expect(result.stderr.contains("--format \(format)"), "\(result.stderr)")
    #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path) == ["MyBook"])
  }

  /// Rebuilding over the previous package is the normal case; a file that is not a package is
  /// kept unless --force.
  @Test func aRebuildReplacesThePreviousPackage() throws {
    let dir = try TemporaryDirectory()
    let book = try project(dir)
    let out = dir.appending("book.pkg")
    #expect(try pkgtool(["build", book, "-o", out]).status == 0)
    try writeFile(dir.appending("MyBook/Contents/chapter2.txt"), "Later.\n")
    let again = try pkgtool(["build", book, "-o", out])
    #expect(again.status == 0, "\(again.stderr)")
    let listing = try PackageInfo.run(path: out, includeFiles: true)
    #expect((listing.files ?? []).map(\.path).contains("Contents/chapter2.txt"))

    let notes = dir.appending("notes.pkg")
    try writeFile(notes, "my notes, not a package")
    let refused = try pkgtool(["build", book, "-o", notes])
    #expect(refused.status == 2)
    #expect(refused.stderr.contains("is not a package"), "\(refused.stderr)")
    #expect(try readFile(notes) == Array("my notes, not a package".utf8))
    #expect(try pkgtool(["build", book, "-o", notes, "--force"]).status == 0)
    #expect(try head(notes) == Array("xar!".utf8))
  }

  /// The package never lands in what it packs: the next build would pack it.
  @Test func anOutputInsideTheContentIsRefused() throws {
    let dir = try TemporaryDirectory()
    let book = try project(dir)
    for target in ["MyBook/Contents/book.pkg", "MyBook/Contents/./book.zip"] {
      let result = try pkgtool(["build", "MyBook", "-o", target], in: dir.path)
      #expect(result.status == 2, "\(result.stderr)")
      #expect(result.stderr.contains("inside"), "\(result.stderr)")
    }
    #expect(try FileManager.default.contentsOfDirectory(atPath: book + "/Contents").sorted() == ["chapter1.txt"])
    // A plain folder is all content.
    try writeFile(dir.appending("assets/level1.json"), "{}")
    let plain = try pkgtool(
      ["build", "assets", "--product-id", "com.example.levels", "--content-version", "1.0", "-o", "assets/out.pkg"],
      in: dir.path)
    #expect(plain.status == 2, "\(plain.stderr)")
    #expect(try FileManager.default.contentsOfDirectory(atPath: dir.appending("assets")) == ["level1.json"])
  }

  @Test func aQuietDryRunIsQuiet() throws {
    let dir = try TemporaryDirectory()
    let book = try project(dir)
    let result = try pkgtool(["build", book, "--dry-run", "-q"], in: dir.path)
    #expect(result.status == 0)
    #expect(result.stdout.isEmpty && result.stderr.isEmpty, "\(result.stdout)\(result.stderr)")
    let loud = try pkgtool(["build", book, "--dry-run"], in: dir.path)
    #expect(loud.stdout.contains("Contents/chapter1.txt"))
  }

  /// K/M/G (1,000s) and KiB/MiB/GiB (1,024s); a refused value lists them.
  @Test func sizesTakeTheUsualUnits() throws {
    let dir = try TemporaryDirectory()
    let book = try project(dir)
    let out = dir.appending("b.pkg")
    #expect(try pkgtool(["build", book, "-o", out]).status == 0)
    for good in ["2G", "10M", "1GiB", "500k", "2000000000"] {
      #expect(try pkgtool(["validate", out, "--max-size", good]).status == 0, "\(good)")
    }
    let tight = try pkgtool(["validate", out, "--max-size", "1K", "--json"])
    #expect(tight.status == 1)
    #expect(tight.stdout.contains("over the limit of 1,000 bytes"), "\(tight.stdout)")
    let bad = try pkgtool(["validate", out, "--max-size", "2 gigs"])
    #expect(bad.status == 2)
    #expect(bad.stderr.contains("KiB, MiB, GiB"), "\(bad.stderr)")
  }
}
