import AppleArchive
import Foundation
import SystemIO
import Testing

/// A small, deterministic random source (SplitMix64), so every run writes the same trees.
struct SeededBytes {
  var state: UInt64
  mutating func next() -> UInt64 {
    state &+= 0x9E37_79B9_7F4A_7C15
    var z = state
    z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
    z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
    return z ^ (z >> 31)
  }
  /// Bytes that compress somewhat: runs of words from a small vocabulary, and some noise.
  mutating func bytes(_ count: Int) -> [UInt8] {
    var out: [UInt8] = []
    out.reserveCapacity(count)
    let words = ["level ", "chapter ", "pkgtool ", "\u{00e9}t\u{00e9} ", "0123456789", "\n"].map { Array($0.utf8) }
    while out.count < count {
      let r = next()
      if r % 5 == 0 {
        out.append(UInt8(truncatingIfNeeded: r >> 8))
      } else {
        out += words[Int(r >> 16) % words.count]
      }
    }
    return Array(out.prefix(count))
  }
}

/// What a test tree holds, in the order written.
enum TreeNode: Equatable {
  case directory(String, mode: UInt16)
  case file(String, [UInt8], mode: UInt16)
  case symlink(String, target: String)

  var path: [UInt8] {
    switch self {
    case .directory(let p, _), .file(let p, _, _), .symlink(let p, _): return Array(p.utf8)
    }
  }
}

/// A tree: the root, folders, files of many sizes (empty ones, and one over several blocks when
/// `bigFile` is given), and symbolic links.
func testTree(seed: UInt64, files: Int, bigFile: Int? = nil) -> [TreeNode] {
  var random = SeededBytes(state: seed)
  var nodes: [TreeNode] = [.directory("", mode: 0o755), .directory("Contents", mode: 0o755)]
  for d in 0..<4 { nodes.append(.directory("Contents/d\(d)", mode: d == 3 ? 0o700 : 0o755)) }
  for i in 0..<files {
    let size = i % 7 == 0 ? 0 : Int(random.next() % 5_000)
    nodes.append(.file("Contents/d\(i % 4)/f\(i).txt", random.bytes(size), mode: i % 3 == 0 ? 0o600 : 0o644))
  }
  if let bigFile { nodes.append(.file("Contents/big.bin", random.bytes(bigFile), mode: 0o644)) }
  nodes.append(.symlink("Contents/link", target: "d0/f0.txt"))
  nodes.append(.symlink("Contents/d1/up", target: "../d0"))
  return nodes
}

/// Writes `nodes`; files of over 10 KB are streamed in uneven chunks, the rest given whole.
func writeTree(
  _ nodes: [TreeNode], compression: AppleArchiveCompression, blockSize: Int = AppleArchive.defaultBlockSize
) throws -> [UInt8] {
  var out: [UInt8] = []
  let writer = try AppleArchiveWriter(compression: compression, blockSize: blockSize) { out += $0 }
  for node in nodes {
    switch node {
    case .directory(let path, let mode): try writer.addDirectory(Array(path.utf8), mode: mode)
    case .symlink(let path, let target): try writer.addSymlink(Array(path.utf8), target: Array(target.utf8))
    case .file(let path, let bytes, let mode):
      if bytes.count > 10_000 {
        try writer.beginFile(
          Array(path.utf8), size: UInt64(bytes.count), mode: mode, sha256: SHA256Digest.of(bytes))
        var at = 0
        var step = 1
        while at < bytes.count {
          let n = min(step, bytes.count - at)
          try bytes[at..<at + n].withUnsafeBytes { try writer.writeData($0) }
          at += n
          step = step * 3 + 1
        }
        try writer.endFile()
      } else {
        try writer.addFile(Array(path.utf8), contents: bytes, mode: mode)
      }
    }
  }
  try writer.finish()
  return out
}

/// Reads `bytes` back and checks every entry against `nodes`.
func checkTree(_ bytes: [UInt8], _ nodes: [TreeNode], chunk: Int = 64 << 10) throws {
  let reader = try AppleArchiveReader(bytes: bytes)
  let entries = try readEverything(reader, chunk: chunk)
  #expect(entries.count == nodes.count)
  for ((entry, data), node) in zip(entries, nodes) {
    #expect(entry.path == node.path)
    switch node {
    case .directory(_, let mode):
      #expect(entry.kind == .directory)
      #expect(entry.mode == UInt64(mode))
      #expect(data == nil)
    case .symlink(_, let target):
      #expect(entry.kind == .symlink)
      #expect(entry.linkTarget == Array(target.utf8))
    case .file(let path, let bytes, let mode):
      #expect(entry.kind == .file, "\(path)")
      #expect(entry.mode == UInt64(mode))
      #expect(data == bytes, "\(path)")
      #expect(entry.hashes.sha256 == SHA256Digest.of(bytes))
      let subtype = bytes.count <= 0xFFFF ? "DATA" : "DATB"
      #expect(entry.fieldKeys == ["TYP1", "PATP", "MOD2", "SH2H", subtype])
    }
  }
}

@Suite struct RoundTripTests {
  @Test(arguments: [AppleArchiveCompression.none, .zlib, .lzma])
  func manyEntriesRoundTrip(compression: AppleArchiveCompression) throws {
    let nodes = testTree(seed: 7, files: 300, bigFile: 200_000)
    // 64 KiB blocks: the big file spans four of them, and the headers cross block boundaries.
    let bytes = try writeTree(nodes, compression: compression, blockSize: 64 << 10)
    try checkTree(bytes, nodes)
    try checkTree(bytes, nodes, chunk: 7)
    let reader = try AppleArchiveReader(bytes: bytes)
    #expect(reader.compression == compression)
    #expect(reader.blockSize == (compression == .none ? nil : 64 << 10))
  }

  @Test(.enabled(if: lzfseAvailable, lzfseMissing))
  func manyEntriesRoundTripLZFSE() throws {
    let nodes = testTree(seed: 8, files: 300, bigFile: 200_000)
    let bytes = try writeTree(nodes, compression: .lzfse, blockSize: 64 << 10)
    try checkTree(bytes, nodes)
    #expect(try writeTree(nodes, compression: .lzfse, blockSize: 64 << 10) == bytes)
  }

  /// Default 4 MiB blocks, a file of 9 MiB: three blocks, the last one short.
  @Test(arguments: [AppleArchiveCompression.zlib, .lzma])
  func fileSpanningDefaultBlocks(compression: AppleArchiveCompression) throws {
    var random = SeededBytes(state: 3)
    let nodes: [TreeNode] = [.directory("", mode: 0o755), .file("big", random.bytes(9 << 20), mode: 0o644)]
    let bytes = try writeTree(nodes, compression: compression)
    try checkTree(bytes, nodes)
    #expect(Array(bytes[4..<12]) == be64(4 << 20))
  }

  @Test(arguments: [AppleArchiveCompression.none, .zlib, .lzma])
  func sameInputsGiveSameBytes(compression: AppleArchiveCompression) throws {
    let nodes = testTree(seed: 11, files: 40)
    #expect(try writeTree(nodes, compression: compression) == writeTree(nodes, compression: compression))
  }

  /// The exact bytes of a small raw archive: the field set and order are part of the contract.
  @Test func rawBytesAreExactlyTheDocumentedFields() throws {
    var out: [UInt8] = []
    let writer = try AppleArchiveWriter { out += $0 }
    try writer.addDirectory([])
    try writer.addSymlink(Array("l".utf8), target: Array("t".utf8), modificationTime: .init(seconds: 1, nanoseconds: 2))
    try writer.addFile(Array("f".utf8), contents: Array("hi".utf8))
    try writer.finish()
    let expected =
      header([field("TYP1", [0x44]), stringField("PAT", []), field("MOD2", le(0o755, 2))])
      + header([
        field("TYP1", [0x4C]), stringField("PAT", [0x6C]), stringField("LNK", [0x74]), field("MOD2", le(0o755, 2)),
        field("MTMT", le(1, 8) + le(2, 4)),
      ])
      + header([
        field("TYP1", [0x46]), stringField("PAT", [0x66]), field("MOD2", le(0o644, 2)),
        field("SH2H", SHA256Digest.of(Array("hi".utf8))), field("DATA", le(2, 2)),
      ]) + Array("hi".utf8)
    #expect(out == expected)
  }

  /// A block whose compressed form is not shorter is stored (raw size = compressed size).
  @Test func incompressibleBlockIsStored() throws {
    var random = SeededBytes(state: 5)
    let noise = (0..<50_000).map { _ in UInt8(truncatingIfNeeded: random.next()) }
    let bytes = try writeTree([.file("n", noise, mode: 0o644)], compression: .zlib, blockSize: 1 << 20)
    let raw = bytes[12..<20].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
    let compressed = bytes[20..<28].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
    #expect(raw == compressed)
    try checkTree(bytes, [.file("n", noise, mode: 0o644)])
  }

  /// Through real files: the writer on a descriptor, the reader on another.
  @Test func throughFileDescriptors() throws {
    let folder = try ScratchFolder()
    let path = folder.path + "/t.aar"
    let nodes = testTree(seed: 12, files: 20)
    do {
      let file = try FileDescriptor.create(path)
      let writer = try AppleArchiveWriter(file: file, compression: .lzma)
      for case .file(let p, let bytes, _) in nodes { try writer.addFile(Array(p.utf8), contents: bytes) }
      try writer.finish()
    }
    let reader = try AppleArchiveReader(file: try FileDescriptor.open(reading: path))
    let files = nodes.compactMap { node -> [UInt8]? in
      if case .file(_, let b, _) = node { return b } else { return nil }
    }
    #expect(try readEverything(reader).map { $0.data ?? [] } == files)
  }

  /// Data left unread, or half read, is passed over by `next()`.
  @Test func unreadDataIsSkipped() throws {
    let nodes = testTree(seed: 13, files: 30)
    let bytes = try writeTree(nodes, compression: .zlib, blockSize: 4_096)
    let reader = try AppleArchiveReader(bytes: bytes)
    var paths: [[UInt8]] = []
    var buffer = [UInt8](repeating: 0, count: 3)
    var i = 0
    while let entry = try reader.next() {
      paths.append(entry.path)
      if i % 2 == 0 { _ = try buffer.withUnsafeMutableBytes { try reader.readData(into: $0) } }
      i += 1
    }
    #expect(paths == nodes.map(\.path))
  }

  @Test(arguments: [AppleArchiveCompression.none, .zlib, .lzma])
  func independentReaderReadsOurBytes(compression: AppleArchiveCompression) throws {
    let folder = try ScratchFolder()
    let path = folder.path + "/t.aar"
    let nodes = testTree(seed: 21, files: 120, bigFile: 300_000)
    let bytes = try writeTree(nodes, compression: compression, blockSize: 64 << 10)
    try Data(bytes).write(to: URL(fileURLWithPath: path))
    let theirs = try OracleListing.oracle(path)
    #expect(try OracleListing.ours(path) == theirs)
    #expect(theirs.entries.count == nodes.count)
  }

  @Test(.enabled(if: lzfseAvailable, lzfseMissing))
  func independentReaderReadsOurLZFSE() throws {
    let folder = try ScratchFolder()
    let path = folder.path + "/t.aar"
    let bytes = try writeTree(testTree(seed: 22, files: 60, bigFile: 300_000), compression: .lzfse, blockSize: 64 << 10)
    try Data(bytes).write(to: URL(fileURLWithPath: path))
    #expect(try OracleListing.ours(path) == OracleListing.oracle(path))
  }

  /// `CKS` is POSIX cksum's CRC: the same number the cksum tool prints.
  @Test func checksumIsPOSIXCksum() throws {
    var random = SeededBytes(state: 31)
    let folder = try ScratchFolder()
    for size in [0, 1, 5, 255, 256, 70_000] {
      let bytes = random.bytes(size)
      let path = folder.path + "/c\(size)"
      try Data(bytes).write(to: URL(fileURLWithPath: path))
      let tool = try run("/usr/bin/env", ["cksum", path])
      let expected = UInt32(String(decoding: tool.stdout, as: UTF8.self).split(separator: " ")[0])!
      var sum = POSIXChecksum()
      bytes.withUnsafeBytes { sum.update($0) }
      #expect(sum.value == expected, "\(size) bytes")
      // And an archive declaring it is read.
      let archive = fileEntry("c", bytes, extra: [field("CKSF", le(UInt64(expected), 4))])
      #expect(try readEverything(AppleArchiveReader(bytes: archive)).first?.data == bytes)
    }
  }

  @Test func legacyMagicIsRead() throws {
    let archive = header([field("TYP1", [0x44]), stringField("PAT", [])], magic: "YAA1") + fileEntry("a", [1, 2, 3])
    let entries = try readEverything(AppleArchiveReader(bytes: archive))
    #expect(entries.map(\.entry.legacyMagic) == [true, false])
    #expect(entries[1].data == [1, 2, 3])
  }

  @Test func writerRefusesWhatTheReaderWould() throws {
    var out: [UInt8] = []
    let writer = try AppleArchiveWriter { out += $0 }
    #expect(archiveError { try writer.addFile(Array("/abs".utf8), contents: []) }?.reason == .invalidPath(.absolute))
    let again = try AppleArchiveWriter { out += $0 }
    #expect(archiveError { try again.addFile([], contents: []) }?.reason == .invalidPath(.empty))
    let short = try AppleArchiveWriter { out += $0 }
    try short.beginFile(Array("a".utf8), size: 3)
    #expect(archiveError { try short.endFile() }?.reason == .dataSizeMismatch(declared: 3, written: 0))
    let long = try AppleArchiveWriter { out += $0 }
    try long.beginFile(Array("a".utf8), size: 1)
    #expect(
      archiveError { try ([1, 2] as [UInt8]).withUnsafeBytes { try long.writeData($0) } }?.reason
        == .dataSizeMismatch(declared: 1, written: 2))
    let wrong = try AppleArchiveWriter { out += $0 }
    try wrong.beginFile(Array("a".utf8), size: 1, sha256: SHA256Digest.of([7]))
    try ([8] as [UInt8]).withUnsafeBytes { try wrong.writeData($0) }
    let error = archiveError { try wrong.endFile() }
    guard case .declaredDigestMismatch = error?.reason else {
      Issue.record("expected declaredDigestMismatch, got \(String(describing: error))")
      return
    }
    #expect(error?.entry == 1)
    let open = try AppleArchiveWriter { out += $0 }
    try open.beginFile(Array("a".utf8), size: 1)
    guard case .writerMisuse = archiveError({ try open.addDirectory(Array("d".utf8)) })?.reason else {
      Issue.record("an entry while a file is open was not refused")
      return
    }
    let link = try AppleArchiveWriter { out += $0 }
    #expect(
      archiveError { try link.addSymlink(Array("l".utf8), target: []) }?.reason
        == .invalidLinkTarget(reason: "it is empty"))
  }
}

/// Compressed archives another encoder made: scripts/aar_oracle.py frames our raw bytes with
/// Python's zlib and lzma, and PyPI's lzfse (the reference C code).
@Suite struct ForeignEncoderTests {
  func framedByPython(_ nodes: [TreeNode], letter: String, blockSize: Int) throws -> [UInt8] {
    let folder = try ScratchFolder()
    try Data(try writeTree(nodes, compression: .none)).write(to: URL(fileURLWithPath: folder.path + "/raw.aar"))
    let result = try run(
      "/usr/bin/env",
      [
        "python3", repositoryRoot + "/scripts/aar_oracle.py", "frame", folder.path + "/raw.aar", letter,
        String(blockSize), folder.path + "/framed.aar",
      ])
    #expect(result.status == 0, "\(result.stderr)")
    return Array(try Data(contentsOf: URL(fileURLWithPath: folder.path + "/framed.aar")))
  }

  @Test(arguments: ["z", "x"])
  func readsBlocksPythonCompressed(letter: String) throws {
    let nodes = testTree(seed: 61, files: 80, bigFile: 150_000)
    let bytes = try framedByPython(nodes, letter: letter, blockSize: 32 << 10)
    try checkTree(bytes, nodes)
  }

  @Test(.enabled(if: lzfseAvailable, lzfseMissing))
  func readsBlocksReferenceLZFSECompressed() throws {
    let nodes = testTree(seed: 62, files: 80, bigFile: 150_000)
    let bytes = try framedByPython(nodes, letter: "e", blockSize: 32 << 10)
    try checkTree(bytes, nodes)
  }

  /// A damaged LZFSE block is refused as corrupt LZFSE data, in the decoder's words.
  @Test(.enabled(if: lzfseAvailable, lzfseMissing))
  func damagedLZFSEBlockIsRefused() throws {
    var bytes = try framedByPython(testTree(seed: 63, files: 10), letter: "e", blockSize: 1 << 20)
    for i in 60..<90 { bytes[i] ^= 0x5A }
    let error = firstError(bytes)
    switch error?.reason {
    case .corruptBlock(1, "LZFSE", _)?, .blockSizeMismatch(1, _, _)?: break
    default: Issue.record("expected a corrupt LZFSE block, got \(String(describing: error))")
    }
  }
}
