import Foundation
import HostedContent
import SystemIO
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
  /// A 3 GB file (sparse: no disk used) is refused by its size on disk, before any of it is
  /// read, by build and by validate; nothing is written.
  @Test func contentOverTheLimitIsRefusedFromItsSizeOnDisk() throws {
    let dir = try TemporaryDirectory()
    let folder = try project(dir)
    let big = folder + "/Contents/big.bin"
    #expect(FileManager.default.createFile(atPath: big, contents: nil))
    let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: big))
    try handle.truncate(atOffset: 3_000_000_000)
    try handle.close()
    for command in ["build", "validate"] {
      let result = try pkgtool([command, "MyBook"], in: dir.path)
      #expect(result.status == 1, "\(command): \(result.stderr)")
      #expect(
        result.stdout.contains(
          "MyBook: error: the content's files add up to at least 3,000,000,"),
        "\(command): \(result.stdout)")
      #expect(result.stdout.contains("by their sizes on disk (reading stopped before the file that passes the limit)"))
    }
    #expect(!FileManager.default.fileExists(atPath: dir.appending("com.example.book-1.0.pkg")))
  }

  /// `build x.tar` says what package-form says: a tar is no package and no build input; its
  /// unpacked folder is. A built package is named as one.
  @Test func buildOfAnArchiveSaysWhatToBuildInstead() throws {
    let dir = try TemporaryDirectory()
    let folder = try project(dir)
    #expect(try runProcess("/usr/bin/env", ["tar", "-cf", dir.appending("book.tar"), "-C", folder, "."]).status == 0)
    let tar = try pkgtool(["build", "book.tar"], in: dir.path)
    #expect(tar.status == 2)
    #expect(
      tar.stderr.hasPrefix(
        "pkgtool: error: 'book.tar' is a tar archive: a tar is not a package, and build reads a folder, not an archive")
    )
    #expect(tar.stderr.contains("tar -xf 'book.tar' -C MyBook && pkgtool build MyBook"))
    let rule = try pkgtool(["validate", "book.tar"], in: dir.path)
    #expect(rule.stdout.contains("[package-form]") && rule.stdout.contains("unpack it into a folder (tar -xf)"))
    #expect(try pkgtool(["build", "MyBook"], in: dir.path).status == 0)
    let pkg = try pkgtool(["build", "com.example.book-1.0.pkg"], in: dir.path)
    #expect(pkg.status == 2)
    #expect(pkg.stderr.contains("is a XAR package, already built"), "\(pkg.stderr)")
    #expect(try pkgtool(["rules", "package-form"]).stdout.contains("a tar is no package (build its unpacked folder)"))
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

  /// `-o` at a project's root, beside Contents/: the package, and the hidden heap file it is
  /// written through, are neither listed nor warned about, in the first build or a rebuild.
  @Test func anOutputAtTheProjectRootIsNotItsOwnFinding() throws {
    let dir = try TemporaryDirectory()
    _ = try project(dir)
    for run in 1...2 {
      let result = try pkgtool(["build", "MyBook", "-o", "MyBook/book.pkg", "--json"], in: dir.path)
      #expect(result.status == 0, "\(result.stderr)")
      #expect(!result.stdout.contains("pkgtool-"), "run \(run): \(result.stdout)")
      #expect(!result.stdout.contains("book.pkg' is at the project root"), "run \(run): \(result.stdout)")
      #expect(!result.stdout.contains("\"severity\" : \"warning\""), "run \(run): \(result.stdout)")
    }
    #expect(try pkgtool(["validate", dir.appending("MyBook/book.pkg")]).status == 0)
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

  /// A file is deflated only when that makes it smaller, in both formats; bsdtar and Python's
  /// zipfile read the result back to the same bytes. The noise (300,000 bytes, large enough to
  /// be sampled) is stored on its sample's word, before any deflating.
  @Test func deflateOnlyWhatItShrinks() throws {
    let dir = try TemporaryDirectory()
    let book = try project(dir)
    var random = SystemRandomNumberGenerator()
    let noise = (0..<300_000).map { _ in UInt8.random(in: 0...255, using: &random) }
    try writeFile(dir.appending("MyBook/Contents/noise.bin"), noise)
    try writeFile(dir.appending("MyBook/Contents/tiny.txt"), "hello")
    try writeFile(dir.appending("MyBook/Contents/text.txt"), String(repeating: "words, words. ", count: 5000))
    let pkg = dir.appending("b.pkg")
    let zip = dir.appending("b.zip")
    let built = try pkgtool(["build", book, "-o", pkg])
    // tiny.txt and the 18 bytes of chapter1.txt; noise.bin by its sample
    #expect(
      built.stdout.contains(
        "2 stored as deflating made them no smaller, 1 stored as a sample would not shrink (300,000 bytes)"),
      "\(built.stdout)")
    #expect(try pkgtool(["build", book, "-o", zip]).status == 0)

    let listing = try pkgtool(["info", pkg, "--files"])
    for line in listing.stdout.split(separator: "\n") where line.hasSuffix("noise.bin") || line.hasSuffix("tiny.txt") {
      #expect(line.contains(" none "), "\(line)")
    }
    #expect(listing.stdout.split(separator: "\n").contains { $0.hasSuffix("text.txt") && $0.contains(" gzip ") })
    let script = """
      import sys, zipfile
      z = zipfile.ZipFile(sys.argv[1])
      assert z.testzip() is None
      for i in z.infolist():
          print(i.filename, i.compress_type, i.file_size, i.compress_size)
      """
    let zipped = try runProcess("/usr/bin/env", ["python3", "-c", script, zip])
    #expect(zipped.status == 0, "\(zipped.stderr)")
    #expect(zipped.stdout.contains("Contents/noise.bin 0 300000 300000"), "\(zipped.stdout)")
    #expect(zipped.stdout.contains("Contents/tiny.txt 0 5 5"), "\(zipped.stdout)")
    #expect(zipped.stdout.contains("Contents/text.txt 8 70000"), "\(zipped.stdout)")
    for archive in [pkg, zip] {
      let out = dir.appending("x-\(Paths.name(of: archive))")
      try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: true)
      #expect(try runProcess("/usr/bin/env", ["bsdtar", "-xf", archive, "-C", out]).status == 0)
      #expect(try readFile(out + "/Contents/noise.bin") == noise)
      #expect(try readFile(out + "/Contents/tiny.txt") == Array("hello".utf8))
    }
  }
}
