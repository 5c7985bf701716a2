import Foundation
import TestSupport
import Testing
import XAR

/// The same content through bsdtar (libarchive), an independent XAR implementation.
@Suite struct InteroperabilityTests {
  /// The last tree's TOC is about 860 KB of XML: four pieces compressed apart and joined into
  /// one zlib stream (`PieceDeflation`).
  @Test(arguments: [(11, 70), (12, 70), (13, 70), (14, 2_500)] as [(UInt64, Int)])
  func bsdtarExtractsWhatXARWrites(seed: UInt64, entries: Int) throws {
    let dir = try TemporaryDirectory()
    let spec = TreeSpec.random(seed: seed, entries: entries)
    let source = dir.appending("src")
    try FileManager.default.createDirectory(atPath: source, withIntermediateDirectories: true)
    try spec.materialize(at: source)
    try writeArchive(spec, to: dir.appending("t.xar"))
    if entries > 1_000 {
      let toc = try XARReader(path: dir.appending("t.xar")).header.tocUncompressedLength
      #expect(toc > 3 << 18, "TOC of \(toc) bytes")
    }

    let listing = try bsdtar(["-tf", dir.appending("t.xar")]).stdout
    #expect(Set(listing.split(separator: "\n").map { String($0).trimmingTrailingSlash }) == Set(spec.nodes.map(\.path)))

    let out = dir.appending("out")
    try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: true)
    try bsdtar(["-xpf", dir.appending("t.xar"), "-C", out])
    let expected = try snapshot(source)
    let actual = try snapshot(out)
    #expect(Set(actual.keys) == Set(expected.keys))
    for (path, node) in expected {
      guard let got = actual[path] else { continue }
      #expect(got.kind == node.kind, "\(path)")
      #expect(got.bytes == node.bytes, "\(path)")
      #expect(got.linkTarget == node.linkTarget, "\(path)")
      if node.kind != .symlink { #expect(got.mode == node.mode, "\(path)") }
    }
    // Hard links come out as links to the same inode.
    for (path, node) in spec.nodes {
      if case .hardLink(let original) = node {
        #expect(actual[path]?.inode == actual[original]?.inode, "\(path) is a hard link")
      }
    }
  }

  @Test(arguments: ["gzip", "none", "bzip2", "xz"])
  func xarReadsWhatBsdtarWrites(compression: String) throws {
    let dir = try TemporaryDirectory()
    let spec = TreeSpec.random(seed: 99, entries: 60)
    let source = dir.appending("src")
    try FileManager.default.createDirectory(atPath: source, withIntermediateDirectories: true)
    try spec.materialize(at: source)
    let archive = dir.appending("b.xar")
    try bsdtar(["--format", "xar", "--options", "xar:compression=\(compression)", "-cf", archive, "-C", source, "."])
    let reader = try XARReader(path: archive)
    let expected = try snapshot(source)
    var seen = Set<String>()
    for entry in reader.entries {
      let path = entry.path.hasPrefix("./") ? String(entry.path.dropFirst(2)) : entry.path
      guard path != "." else { continue }
      seen.insert(path)
      let node = try #require(expected[path], "unexpected \(path)")
      switch entry.kind {
      case .file:
        #expect(node.kind == .file, "\(path)")
        #expect(try reader.readData(of: entry, limit: 1 << 30) == node.bytes, "\(path)")
        if compression != "none" && node.bytes.count > 100 {
          #expect(entry.data?.encoding != XAREncoding.none, "\(path) is compressed by bsdtar")
        }
      case .directory: #expect(node.kind == .directory, "\(path)")
      case .symlink: #expect(entry.linkTarget == node.linkTarget, "\(path)")
      case .hardLink:
        let target = try #require(entry.hardLinkTarget)
        let original = String(target.hasPrefix("./") ? target.dropFirst(2) : target[...])
        #expect(expected[original]?.inode == node.inode, "\(path) links to \(original)")
      default: Issue.record("unexpected kind \(entry.kind)")
      }
    }
    #expect(seen == Set(expected.keys))
  }
}

extension String {
  var trimmingTrailingSlash: String { hasSuffix("/") ? String(dropLast()) : self }
}
