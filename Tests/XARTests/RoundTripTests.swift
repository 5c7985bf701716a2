import Foundation
import SystemIO
import TestSupport
import Testing
import XAR

/// Writes `spec` with XARWriter, in its order.
func writeArchive(_ spec: TreeSpec, to path: String, compression: XARWriter.Compression = .zlib(level: 6)) throws {
  let writer = try XARWriter(path: path)
  for (entryPath, node) in spec.nodes {
    switch node {
    case .directory:
      try writer.addDirectory(entryPath, attributes: .init(mode: 0o755))
    case .file(let bytes):
      try writer.addFile(entryPath, attributes: .init(mode: 0o644), compression: compression, bytes: bytes)
    case .symlink(let target):
      try writer.addSymlink(entryPath, target: target, attributes: .init(mode: 0o755))
    case .hardLink(let original):
      try writer.addHardLink(entryPath, to: original, attributes: .init(mode: 0o644))
    }
  }
  try writer.finish()
}

/// Reads every entry back as a TreeSpec node (data fully verified).
func readArchive(_ path: String) throws -> [String: TreeSpec.Node] {
  let reader = try XARReader(path: path)
  var result: [String: TreeSpec.Node] = [:]
  for entry in reader.entries {
    switch entry.kind {
    case .directory: result[entry.path] = .directory
    case .file: result[entry.path] = .file(try reader.readData(of: entry, limit: 1 << 30))
    case .symlink: result[entry.path] = .symlink(entry.linkTarget ?? "")
    case .hardLink: result[entry.path] = .hardLink(entry.hardLinkTarget ?? "")
    default: throw TestFailure("unexpected kind \(entry.kind) at \(entry.path)")
    }
  }
  return result
}

@Suite struct RoundTripTests {
  @Test(arguments: [1, 2, 3, 4, 5] as [UInt64])
  func randomTreesReadBackIdentically(seed: UInt64) throws {
    let dir = try TemporaryDirectory()
    let spec = TreeSpec.random(seed: seed, entries: 80)
    let archive = dir.appending("t.xar")
    try writeArchive(spec, to: archive, compression: seed % 2 == 0 ? .none : .zlib(level: 6))
    let read = try readArchive(archive)
    #expect(read.count == spec.nodes.count)
    for (path, node) in spec.nodes {
      #expect(read[path] == node, "entry \(path)")
    }
  }

  @Test func entriesComeInTOCOrderWithNestedPaths() throws {
    let dir = try TemporaryDirectory()
    var spec = TreeSpec()
    spec.nodes = [
      ("b", .directory), ("b/inner", .directory), ("b/inner/x.txt", .file(Array("x".utf8))),
      ("a.txt", .file(Array("a".utf8))), ("b/y", .file([])),
    ]
    try writeArchive(spec, to: dir.appending("t.xar"))
    let reader = try XARReader(path: dir.appending("t.xar"))
    #expect(reader.entries.map(\.path) == ["b", "b/inner", "b/inner/x.txt", "b/y", "a.txt"])
    #expect(reader.entries.map(\.mode) == [0o755, 0o755, 0o644, 0o644, 0o644])
    #expect(reader.entries[3].data == nil, "an empty file carries no data")
  }

  @Test func sameEntriesGiveSameBytes() throws {
    let dir = try TemporaryDirectory()
    let spec = TreeSpec.random(seed: 42, entries: 50)
    try writeArchive(spec, to: dir.appending("1.xar"))
    try writeArchive(spec, to: dir.appending("2.xar"))
    let first = try readFile(dir.appending("1.xar"))
    #expect(first == (try readFile(dir.appending("2.xar"))))
    // Nothing of the host: no current year, no user name in the TOC.
    let toc = String(decoding: try XARReader(path: dir.appending("1.xar")).tocXML, as: UTF8.self)
    #expect(toc.contains("2000-01-01T00:00:00Z"))
    #expect(!toc.contains("<user>"))
    #expect(!toc.contains("<inode>"))
  }

  @Test func fiftyThousandEntries() throws {
    let dir = try TemporaryDirectory()
    let archive = dir.appending("big.xar")
    let writer = try XARWriter(path: archive)
    for folder in 0..<100 {
      try writer.addDirectory("d\(folder)", attributes: .init(mode: 0o755))
      for file in 0..<499 {
        try writer.addFile(
          "d\(folder)/f\(file).json", attributes: .init(mode: 0o644), compression: .zlib(level: 1),
          bytes: Array("{\"folder\":\(folder),\"file\":\(file)}".utf8))
      }
    }
    try writer.finish()
    let reader = try XARReader(path: archive)
    #expect(reader.entries.count == 50_000)
    let sample = reader.entries.first { $0.path == "d57/f321.json" }!
    #expect(try reader.readData(of: sample) == Array("{\"folder\":57,\"file\":321}".utf8))
    var total = 0
    for entry in reader.entries where entry.kind == .file {
      total += try reader.readData(of: entry).count
    }
    #expect(total > 50_000 * 20)
  }

  @Test func outputAppearsOnlyOnFinish() throws {
    let dir = try TemporaryDirectory()
    let archive = dir.appending("t.xar")
    do {
      let writer = try XARWriter(path: archive)
      try writer.addFile("a", attributes: .init(mode: 0o644), compression: .none, bytes: [1, 2, 3])
      #expect(!FileManager.default.fileExists(atPath: archive))
      writer.cancel()
    }
    #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path).isEmpty, "no temporary left")
  }

  @Test func refusesNonOverwriteWhenTargetExists() throws {
    let dir = try TemporaryDirectory()
    let archive = dir.appending("t.xar")
    try writeFile(archive, "precious")
    var options = XARWriter.Options()
    options.overwrite = false
    let writer = try XARWriter(path: archive, options: options)
    try writer.addDirectory("x", attributes: .init(mode: 0o755))
    #expect(throws: SystemError.self) { try writer.finish() }
    #expect(try readFile(archive) == Array("precious".utf8))
    #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path) == ["t.xar"])
  }

  @Test func writerRefusesBadPaths() throws {
    let dir = try TemporaryDirectory()
    let writer = try XARWriter(path: dir.appending("t.xar"))
    for bad in ["", "/abs", "a/../b", "a//b", "./a", "nul\u{0}x"] {
      #expect(throws: XARError.self, "\(bad.debugEscaped)") {
        try writer.addDirectory(bad, attributes: .init(mode: 0o755))
      }
    }
    #expect(throws: XARError.missingParent(path: "no/such", parent: "no")) {
      try writer.addDirectory("no/such", attributes: .init(mode: 0o755))
    }
    try writer.addDirectory("ok", attributes: .init(mode: 0o755))
    #expect(throws: XARError.duplicatePath("ok")) {
      try writer.addDirectory("ok", attributes: .init(mode: 0o755))
    }
  }

  @Test func namesWithControlCharactersSurvive() throws {
    let dir = try TemporaryDirectory()
    var spec = TreeSpec()
    spec.nodes = [("tab\tand\nnewline", .file([7])), ("lead ", .symlink("t\u{1}x"))]
    try writeArchive(spec, to: dir.appending("t.xar"))
    let read = try readArchive(dir.appending("t.xar"))
    #expect(read["tab\tand\nnewline"] == .file([7]))
    #expect(read["lead "] == .symlink("t\u{1}x"))
  }

  @Test(arguments: [XARChecksumAlgorithm.sha1, .md5, .sha256, .sha512])
  func everyChecksumAlgorithmRoundTrips(algorithm: XARChecksumAlgorithm) throws {
    let dir = try TemporaryDirectory()
    var options = XARWriter.Options()
    options.checksum = algorithm
    let writer = try XARWriter(path: dir.appending("t.xar"), options: options)
    try writer.addFile(
      "f", attributes: .init(mode: 0o644), compression: .zlib(level: 6), bytes: Array(repeating: 9, count: 5000))
    try writer.finish()
    let reader = try XARReader(path: dir.appending("t.xar"))
    #expect(reader.header.checksumAlgorithm == algorithm)
    #expect(reader.entries[0].data?.extractedChecksum?.algorithm == algorithm)
    #expect(try reader.readData(of: reader.entries[0]) == Array(repeating: 9, count: 5000))
  }
}
