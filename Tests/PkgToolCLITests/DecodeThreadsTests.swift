import Foundation
import TestSupport
import Testing

/// `--jobs` sets how many threads decode a package's data ahead of the rules and the sink. The
/// report, the verdict and the unpacked bytes are the same for any number, on a package of
/// large files (decoded in parts, several files at once) with one damaged file among them.
@Suite struct DecodeThreadsTests {
  /// A package of 24 files of 0.1–1.3 MB (stored: random bytes), many small ones, and a text
  /// file; with `damage`, one byte of one stored file is flipped in the package.
  static func package(in dir: TemporaryDirectory, damage: Bool) throws -> String {
    let project = dir.appending("P")
    #expect(try pkgtool(["init", project, "--product-id", "com.example.threads"]).status == 0)
    var generator = SystemRandomNumberGenerator()
    for i in 0..<24 {
      let size = 100_000 + i * 50_000
      var bytes = (0..<size).map { _ in UInt8.random(in: 0...255, using: &generator) }
      bytes.replaceSubrange(0..<16, with: Array(String(format: "MARKER-FILE-%04d", i).utf8))
      try writeFile(project + "/Contents/media/m\(i).bin", bytes)
    }
    for i in 0..<300 { try writeFile(project + "/Contents/small/s\(i).txt", "small file \(i)\n") }
    try writeFile(project + "/Contents/book.txt", String(repeating: "the harbour at night. ", count: 40_000))
    let package = dir.appending("p.pkg")
    #expect(try pkgtool(["build", project, "-o", package]).status == 0)
    if damage {
      var bytes = try readFile(package)
      let marker = Array("MARKER-FILE-0017".utf8)
      let at = try #require(
        (0...(bytes.count - marker.count)).first {
          bytes[$0] == marker[0] && Array(bytes[$0..<($0 + marker.count)]) == marker
        })
      bytes[at + 5000] ^= 0x01
      try writeFile(package, bytes)
    }
    return package
  }

  @Test(arguments: [false, true])
  func theReportAndTheBytesAreTheSameForAnyNumber(damaged: Bool) throws {
    let dir = try TemporaryDirectory()
    let package = try Self.package(in: dir, damage: damaged)
    var reports: Set<String> = []
    var trees: [[String: SnapshotNode]] = []
    for jobs in [1, 2, 3, 8] {
      let validate = try pkgtool(["validate", package, "--json", "--jobs", String(jobs)])
      #expect(validate.status == (damaged ? 1 : 0), "--jobs \(jobs): \(validate.stderr)")
      reports.insert(validate.stdout)
      let output = dir.appending("out-\(jobs)")
      let unpack = try pkgtool(["unpack", package, "-o", output, "--jobs", String(jobs), "--keep-going", "--json"])
      #expect(unpack.status == (damaged ? 1 : 0), "--jobs \(jobs): \(unpack.stderr)")
      trees.append(
        try snapshot(output).mapValues { node in
          var node = node
          node.inode = 0
          return node
        })
    }
    #expect(reports.count == 1, "the reports differ: \(reports)")
    if damaged {
      #expect(reports.first?.contains("m17.bin") == true, "\(reports)")
      #expect(trees[0]["Contents/media/m17.bin"] == nil)
    }
    #expect(trees[0].count > 300)
    for tree in trees.dropFirst() { #expect(tree == trees[0]) }
  }

  /// `install --jobs` installs the same files for any number, and refuses a damaged package
  /// (leaving nothing) for any number.
  @Test(arguments: [false, true])
  func installIsTheSameForAnyNumber(damaged: Bool) throws {
    let dir = try TemporaryDirectory()
    let package = try Self.package(in: dir, damage: damaged)
    var trees: [[String: SnapshotNode]] = []
    for jobs in [1, 2, 8] {
      let docs = dir.appending("docs-\(jobs)")
      try FileManager.default.createDirectory(atPath: docs, withIntermediateDirectories: false)
      let install = try pkgtool(["install", package, "--into", docs, "--jobs", String(jobs), "--json"])
      #expect(install.status == (damaged ? 1 : 0), "--jobs \(jobs): \(install.stderr)")
      let installed = docs + "/com.example.threads/1.0"
      if damaged {
        #expect(!FileManager.default.fileExists(atPath: installed), "--jobs \(jobs)")
        continue
      }
      trees.append(
        try snapshot(installed).mapValues { node in
          var node = node
          node.inode = 0
          return node
        })
    }
    if !damaged {
      #expect(trees[0]["media/m17.bin"] != nil)
      #expect(trees[0].count > 300)
      for tree in trees.dropFirst() { #expect(tree == trees[0]) }
    }
  }
}
