import AppleArchive
import Foundation
import Testing

/// A crafted archive and the refusal it must get.
struct HostileCase: Sendable, CustomTestStringConvertible {
  let name: String
  let bytes: [UInt8]
  var limits = AppleArchiveLimits()
  /// The exact reason, or nil when `kind` decides.
  var reason: AppleArchiveError.Reason?
  /// For reasons that carry a library's own message: which case it must be.
  var kind: (@Sendable (AppleArchiveError.Reason) -> Bool)? = nil
  /// The entry the error must name (nil: not checked).
  var entry: Int? = nil

  var testDescription: String { name }

  init(
    _ name: String, _ bytes: [UInt8], _ reason: AppleArchiveError.Reason, entry: Int? = nil,
    limits: AppleArchiveLimits = AppleArchiveLimits()
  ) {
    self.name = name
    self.bytes = bytes
    self.reason = reason
    self.entry = entry
    self.limits = limits
  }

  init(_ name: String, _ bytes: [UInt8], kind: @escaping @Sendable (AppleArchiveError.Reason) -> Bool) {
    self.name = name
    self.bytes = bytes
    self.kind = kind
  }
}

/// Reads every entry and all data; returns the first error.
func firstError(_ bytes: [UInt8], limits: AppleArchiveLimits = AppleArchiveLimits()) -> AppleArchiveError? {
  archiveError {
    let reader = try AppleArchiveReader(bytes: bytes, limits: limits)
    _ = try readEverything(reader)
  }
}

/// One zlib or xz block of an archive holding `payload` as one file's data, as our writer makes
/// it: the block's raw size and its compressed bytes.
func compressedBlock(_ payload: [UInt8], _ compression: AppleArchiveCompression) throws -> (raw: UInt64, bytes: [UInt8])
{
  var out: [UInt8] = []
  let writer = try AppleArchiveWriter(compression: compression, blockSize: 1 << 20) { out += $0 }
  try writer.addFile(Array("p".utf8), contents: payload)
  try writer.finish()
  let raw = out[12..<20].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
  let compressed = Int(out[20..<28].reduce(UInt64(0)) { $0 << 8 | UInt64($1) })
  return (raw, Array(out[28..<28 + compressed]))
}

/// The payload the compressed blocks below hold: a file entry of 20,000 bytes of text.
let blockPayload: [UInt8] = {
  var random = SeededBytes(state: 99)
  let data = random.bytes(20_000)
  return header([
    field("TYP1", [0x46]), stringField("PAT", [0x70]), field("MOD2", le(0o644, 2)),
    field("SH2H", SHA256Digest.of(data)),
    field("DATA", le(UInt64(data.count), 2)),
  ]) + data
}()

let typD = field("TYP1", [UInt8(ascii: "D")])
let typF = field("TYP1", [UInt8(ascii: "F")])
func pat(_ s: String) -> [UInt8] { stringField("PAT", Array(s.utf8)) }
func patBytes(_ b: [UInt8]) -> [UInt8] { stringField("PAT", b) }

let hostileCases: [HostileCase] = {
  var cases: [HostileCase] = []
  func add(_ c: HostileCase) { cases.append(c) }
  let good = directoryEntry("") + fileEntry("a", Array("hello".utf8))
  // The container
  add(HostileCase("empty file", [], .empty))
  add(HostileCase("not an archive", Array("hello world".utf8), .notAppleArchive(found: Array("hell".utf8))))
  add(HostileCase("cut inside the first magic", Array("AA0".utf8), .truncatedHeader(needed: 6, available: 3), entry: 1))
  add(HostileCase("cut inside the framing magic", Array("pb".utf8), .truncatedFraming(available: 2)))
  add(HostileCase("three bytes of something else", Array("xyz".utf8), .notAppleArchive(found: Array("xyz".utf8))))
  add(HostileCase("AEA container", Array("AEA1".utf8) + [0, 0, 0, 0] + good, .encrypted))
  add(
    HostileCase("LZ4 framing", framed("4", blockSize: 1 << 22, []), .unsupportedCompression(letter: UInt8(ascii: "4"))))
  add(
    HostileCase(
      "LZBITMAP framing", framed("b", blockSize: 1 << 22, []), .unsupportedCompression(letter: UInt8(ascii: "b"))))
  add(
    HostileCase(
      "unknown algorithm", framed("q", blockSize: 1 << 22, []), .unsupportedCompression(letter: UInt8(ascii: "q"))))
  add(HostileCase("framing cut short", Array("pbzz".utf8) + [0, 0, 0], .truncatedFraming(available: 7)))
  add(HostileCase("zero block size", framed("z", blockSize: 0, []), .zeroBlockSize))
  add(
    HostileCase(
      "block size over 64 MiB", framed("z", blockSize: (64 << 20) + 1, []),
      .blockSizeTooLarge(size: (64 << 20) + 1, limit: 64 << 20)))
  add(
    HostileCase(
      "block size 2^64 - 1", framed("x", blockSize: .max, []), .blockSizeTooLarge(size: .max, limit: 64 << 20)))
  add(
    HostileCase(
      "block size 2^40 with the limit lifted", framed("z", blockSize: 1 << 40, []),
      .blockSizeTooLarge(size: 1 << 40, limit: 1 << 30),
      limits: {
        var l = AppleArchiveLimits()
        l.maxBlockSize = .max
        return l
      }()))
  // Blocks
  let stored = framed("z", blockSize: 1 << 20, [(UInt64(good.count), UInt64(good.count), good)])
  add(
    HostileCase(
      "trailing bytes after the last block", stored + [1, 2, 3, 4, 5], .trailingBytes(count: 5, afterBlock: 1)))
  add(
    HostileCase(
      "block cut short", Array(stored.dropLast(3)),
      .truncatedBlock(block: 1, declared: UInt64(good.count), available: UInt64(good.count - 3))))
  add(HostileCase("block header cut short", Array(stored.prefix(20)), .trailingBytes(count: 8, afterBlock: 0)))
  add(
    HostileCase(
      "compressed size over raw size", framed("z", blockSize: 1 << 20, [(10, 11, Array(repeating: 0, count: 11))]),
      .compressedLargerThanRaw(block: 1, rawSize: 10, compressedSize: 11)))
  add(
    HostileCase(
      "raw size over block size", framed("z", blockSize: 16, [(17, 17, Array(repeating: 0, count: 17))]),
      .rawLargerThanBlockSize(block: 1, rawSize: 17, blockSize: 16)))
  add(
    HostileCase(
      "raw size 2^64 - 1", framed("z", blockSize: 1 << 20, [(.max, 10, [])]),
      .rawLargerThanBlockSize(block: 1, rawSize: .max, blockSize: 1 << 20)))
  add(
    HostileCase(
      "compressed size 2^64 - 1", framed("z", blockSize: 1 << 20, [(100, .max, [])]),
      .compressedLargerThanRaw(block: 1, rawSize: 100, compressedSize: .max)))
  add(
    HostileCase(
      "empty block", framed("z", blockSize: 1 << 20, [(0, 0, [])]), .emptyBlock(block: 1, rawSize: 0, compressedSize: 0)
    ))
  add(
    HostileCase(
      "short block before another",
      framed("z", blockSize: 64, [(21, 21, directoryEntry("")), (21, 21, directoryEntry("d"))]),
      .shortBlockNotLast(block: 1, rawSize: 21, blockSize: 64)))
  add(
    HostileCase(
      "ratio bomb (declared)", framed("z", blockSize: 4 << 20, [(4 << 20, 10, Array(repeating: 0, count: 10))]),
      .ratioTooHigh(block: 1, rawSize: 4 << 20, compressedSize: 10, limit: 8_192)))
  if let (raw, zlibBlock) = try? compressedBlock(blockPayload, .zlib),
    let (_, xzBlock) = try? compressedBlock(blockPayload, .lzma)
  {
    let zc = UInt64(zlibBlock.count)
    add(
      HostileCase(
        "budget bomb", framed("z", blockSize: 1 << 20, [(raw, zc, zlibBlock)]), .budgetExceeded(limit: 10_000),
        limits: {
          var l = AppleArchiveLimits()
          l.maxDecodedTotal = 10_000
          return l
        }()))
    add(
      HostileCase(
        "ratio over a lowered limit", framed("z", blockSize: 1 << 20, [(raw, zc, zlibBlock)]),
        .ratioTooHigh(block: 1, rawSize: raw, compressedSize: zc, limit: 2),
        limits: {
          var l = AppleArchiveLimits()
          l.maxRatio = 2
          return l
        }()))
    let deflate = Array(zlibBlock[2..<(zlibBlock.count - 4)])
    add(
      HostileCase(
        "raw DEFLATE in pbzz", framed("z", blockSize: 1 << 20, [(raw, UInt64(deflate.count), deflate)]),
        .notZlibStream(block: 1, found: Array(deflate.prefix(2)))))
    add(
      HostileCase(
        "block decodes to less than declared", framed("z", blockSize: 1 << 20, [(raw + 5, zc, zlibBlock)]),
        .blockSizeMismatch(block: 1, declared: raw + 5, actual: raw)))
    add(
      HostileCase(
        "block decodes to more than declared", framed("z", blockSize: 1 << 20, [(raw - 5, zc, zlibBlock)]),
        .blockSizeMismatch(block: 1, declared: raw - 5, actual: nil)))
    add(
      HostileCase(
        "junk after the zlib stream", framed("z", blockSize: 1 << 20, [(raw, zc + 3, zlibBlock + [1, 2, 3])]),
        .junkAfterBlockStream(block: 1, count: 3)))
    var damaged = zlibBlock
    for i in 40..<60 { damaged[i] ^= 0x5A }
    add(
      HostileCase("damaged zlib block", framed("z", blockSize: 1 << 20, [(raw, zc, damaged)])) {
        if case .corruptBlock(1, "zlib", _) = $0 { return true } else { return false }
      })
    var damagedXZ = xzBlock
    for i in 40..<60 { damagedXZ[i] ^= 0x5A }
    add(
      HostileCase("damaged xz block", framed("x", blockSize: 1 << 20, [(raw, UInt64(xzBlock.count), damagedXZ)])) {
        if case .corruptBlock(1, "xz", _) = $0 { return true } else { return false }
      })
    add(
      HostileCase("zlib block in a pbzx framing", framed("x", blockSize: 1 << 20, [(raw, zc, zlibBlock)])) {
        if case .corruptBlock(1, "xz", _) = $0 { return true } else { return false }
      })
    add(
      HostileCase(
        "xz block decodes to less than declared",
        framed("x", blockSize: 1 << 20, [(raw + 1, UInt64(xzBlock.count), xzBlock)]),
        .blockSizeMismatch(block: 1, declared: raw + 1, actual: raw)))
  }
  // Headers
  add(HostileCase("header size 5", Array("AA01".utf8) + le(5, 2) + typD, .headerSizeTooSmall(size: 5), entry: 1))
  add(HostileCase("header size 0", Array("AA01".utf8) + le(0, 2), .headerSizeTooSmall(size: 0), entry: 1))
  add(
    HostileCase(
      "header over the limit", header([typD, pat("")], size: 20_000), .headerTooLarge(size: 20_000, limit: 16_384),
      entry: 1))
  add(
    HostileCase(
      "header size 9 for a 5-byte field", header([typD], size: 9) + [0], .junkInHeader(offset: 6, count: 3), entry: 1))
  add(
    HostileCase(
      "field past the header", header([typD], size: 10) + [0],
      .fieldPastHeader(field: "TYP1", offset: 6, needed: 5, headerSize: 10), entry: 1))
  add(
    HostileCase(
      "path length past the header", header([typD, field("PATP", le(50, 2) + Array("abc".utf8))]),
      .fieldPastHeader(field: "PATP", offset: 11, needed: 56, headerSize: 20), entry: 1))
  add(
    HostileCase(
      "trailing junk in a header", header([typD, pat(""), [7, 7]]), .junkInHeader(offset: 17, count: 2), entry: 1))
  add(HostileCase("unknown key", header([typD, pat(""), field("ZZZ1", [0])]), .unknownKey(field: "ZZZ1"), entry: 1))
  add(
    HostileCase(
      "unprintable key", header([typD, pat(""), [0, 1, 2, 0x31, 0]]), .unknownKey(field: "\\x00\\x01\\x021"), entry: 1))
  add(
    HostileCase(
      "known key, wrong subtype", header([typD, field("PAT1", [0])]),
      .wrongSubtype(field: "PAT1", expected: "P (a string)"), entry: 1))
  add(
    HostileCase(
      "TYP as two bytes", header([field("TYP2", [0x44, 0]), pat("")]),
      .wrongSubtype(field: "TYP2", expected: "1 (one letter)"), entry: 1))
  add(
    HostileCase(
      "hash of the wrong size", header([typF, pat("a"), field("SH2G", Array(repeating: 0, count: 20))]),
      .wrongSubtype(field: "SH2G", expected: "H (a hash)"), entry: 1))
  add(
    HostileCase(
      "duplicate key", header([typD, pat("a"), field("MOD2", [0, 0]), field("MOD2", [0, 0])]),
      .duplicateKey(key: "MOD"), entry: 1))
  add(HostileCase("two paths", header([typD, pat("a"), pat("b")]), .duplicateKey(key: "PAT"), entry: 1))
  add(HostileCase("missing TYP", header([pat("a")]), .missingField(key: "TYP"), entry: 1))
  add(HostileCase("missing PAT", header([typD]), .missingField(key: "PAT"), entry: 1))
  add(
    HostileCase(
      "unknown entry type", header([field("TYP1", [0x5A]), pat("a")]), .unknownEntryType(value: 0x5A), entry: 1))
  add(
    HostileCase("symlink without LNK", header([field("TYP1", [0x4C]), pat("l")]), .missingField(key: "LNK"), entry: 1))
  add(
    HostileCase(
      "LNK on a file", header([typF, pat("f"), stringField("LNK", [0x61])]),
      .fieldNotAllowed(key: "LNK", kind: "regular file"), entry: 1))
  add(
    HostileCase(
      "DAT on a directory", header([typD, pat("d"), field("DATA", le(1, 2))]) + [0],
      .fieldNotAllowed(key: "DAT", kind: "directory"), entry: 1))
  add(
    HostileCase(
      "SH2 on a symlink",
      header([
        field("TYP1", [0x4C]), pat("l"), stringField("LNK", [0x61]), field("SH2H", Array(repeating: 0, count: 32)),
      ]), .fieldNotAllowed(key: "SH2", kind: "symbolic link"), entry: 1))
  add(
    HostileCase(
      "LNK with a NUL", header([field("TYP1", [0x4C]), pat("l"), stringField("LNK", [0x61, 0])]),
      .invalidLinkTarget(reason: "it holds a NUL byte"), entry: 1))
  add(
    HostileCase(
      "nanoseconds over a second", header([typD, pat(""), field("MTMT", le(0, 8) + le(1_000_000_000, 4))]),
      .invalidTime(key: "MTM", nanoseconds: 1_000_000_000), entry: 1))
  add(
    HostileCase(
      "SIZ disagrees with DAT", fileEntry("f", [1, 2], extra: [field("SIZ1", [3])]), .sizeMismatch(siz: 3, dat: 2),
      entry: 1))
  // Links: Apple's aa writes a hard link as a file with an HLC cluster id, its DAT repeated or
  // (with AA_FLAG_SKIP_DUPLICATE_DAT-style writers) left out after the first; a clone has CLC.
  let twin = fileEntry("a.txt", Array("same".utf8), extra: [field("HLC1", [1])])
  add(
    HostileCase(
      "hard link (HLC) with its data repeated",
      directoryEntry("") + twin + fileEntry("b.txt", Array("same".utf8), extra: [field("HLC1", [1])]),
      .linkedData(key: "HLC", cluster: 1), entry: 2))
  add(
    HostileCase(
      "hard link (HLC) whose second name has no data",
      directoryEntry("") + header([typF, pat("b.txt"), field("HLC4", le(7, 4))]),
      .linkedData(key: "HLC", cluster: 7), entry: 2))
  add(
    HostileCase(
      "HLC before PAT still names the entry", header([typF, field("HLC8", le(1 << 40, 8)), pat("late")]),
      .linkedData(key: "HLC", cluster: 1 << 40), entry: 1))
  add(
    HostileCase(
      "clone (CLC)", fileEntry("c.bin", [1, 2, 3], extra: [field("CLC2", le(300, 2))]),
      .linkedData(key: "CLC", cluster: 300), entry: 1))
  add(
    HostileCase(
      "identical-data cluster (SLC)", fileEntry("s.bin", [1], extra: [field("SLC1", [0])]),
      .linkedData(key: "SLC", cluster: 0), entry: 1))
  add(
    HostileCase(
      "HLC on a directory", header([typD, pat("d"), field("HLC1", [2])]), .linkedData(key: "HLC", cluster: 2),
      entry: 1))
  // Paths
  add(HostileCase("path with a NUL", header([typF, patBytes([0x61, 0, 0x62])]), .invalidPath(.nulByte), entry: 1))
  add(HostileCase("absolute path", header([typF, pat("/etc/passwd")]), .invalidPath(.absolute), entry: 1))
  add(HostileCase("dot-dot component", header([typF, pat("a/../../b")]), .invalidPath(.dotDot), entry: 1))
  add(HostileCase("dot-dot alone", header([typD, pat("..")]), .invalidPath(.dotDot), entry: 1))
  add(HostileCase("empty component", header([typF, pat("a//b")]), .invalidPath(.emptyComponent), entry: 1))
  add(HostileCase("trailing slash", header([typD, pat("a/")]), .invalidPath(.emptyComponent), entry: 1))
  add(HostileCase("dot component", header([typF, pat("./a")]), .invalidPath(.dotComponent), entry: 1))
  add(HostileCase("control character", header([typF, pat("a\nb")]), .invalidPath(.controlCharacter(0x0A)), entry: 1))
  add(
    HostileCase(
      "DEL character", header([typF, patBytes([0x61, 0x7F])]), .invalidPath(.controlCharacter(0x7F)), entry: 1))
  add(
    HostileCase(
      "path over 1024 bytes", header([typF, pat(String(repeating: "a", count: 1_025))]),
      .invalidPath(.tooLong(length: 1_025, limit: 1_024)), entry: 1))
  add(HostileCase("empty path on a file", header([typF, pat("")]), .invalidPath(.empty), entry: 1))
  // Blobs and truncation
  add(
    HostileCase(
      "blob sizes overflow", header([typF, pat("f"), field("DATC", le(.max, 8)), field("XATC", le(1, 8))]),
      .blobSizesOverflow, entry: 1))
  add(
    HostileCase(
      "DAT of 2^64 - 1 bytes", header([typF, pat("f"), field("DATC", le(.max, 8))]) + [1, 2, 3],
      .truncatedBlob(key: "DAT", declared: .max, available: 3), entry: 1))
  add(
    HostileCase(
      "DAT past the end", Array(fileEntry("f", Array(repeating: 9, count: 100)).dropLast(40)),
      .truncatedBlob(key: "DAT", declared: 100, available: 60), entry: 1))
  add(
    HostileCase(
      "XAT past the end", header([typF, pat("f"), field("XATB", le(50, 4)), field("DATA", le(1, 2))]) + [1, 2],
      .truncatedBlob(key: "XAT", declared: 50, available: 2), entry: 1))
  add(
    HostileCase(
      "archive ends inside a header", good + Array(directoryEntry("d").prefix(10)),
      .truncatedHeader(needed: 24, available: 10), entry: 3))
  add(
    HostileCase(
      "archive ends inside a header's first 6 bytes", good + Array("AA01".utf8),
      .truncatedHeader(needed: 6, available: 4), entry: 3))
  add(
    HostileCase(
      "junk after the last entry", good + Array("junk!!".utf8), .badMagic(found: Array("junk".utf8)), entry: 3))
  add(
    HostileCase(
      "too many entries", good + directoryEntry("b"), .tooManyEntries(limit: 2), entry: 3,
      limits: {
        var l = AppleArchiveLimits()
        l.maxEntries = 2
        return l
      }()))
  add(
    HostileCase(
      "raw archive over the budget", good + fileEntry("b", Array(repeating: 1, count: 500)),
      .budgetExceeded(limit: 300),
      limits: {
        var l = AppleArchiveLimits()
        l.maxDecodedTotal = 300
        return l
      }()))
  // Hashes
  let data = Array("the data".utf8)
  add(
    HostileCase(
      "CKS mismatch", fileEntry("f", data, extra: [field("CKSF", le(12345, 4))]),
      kind: { if case .hashMismatch("CKS", "3039", _) = $0 { return true } else { return false } }))
  var badSHA = SHA256Digest.of(data)
  badSHA[0] ^= 1
  add(
    HostileCase(
      "SH2 mismatch", fileEntry("f", data, extra: [field("SH2H", badSHA)]),
      .hashMismatch(
        key: "SH2", declared: AppleArchiveError.hex(badSHA), actual: AppleArchiveError.hex(SHA256Digest.of(data))),
      entry: 1))
  add(
    HostileCase(
      "SH1 mismatch", fileEntry("f", data, extra: [field("SH1G", Array(repeating: 0, count: 20))]),
      kind: { if case .hashMismatch("SH1", _, _) = $0 { return true } else { return false } }))
  add(
    HostileCase(
      "SH5 mismatch on empty data", fileEntry("f", [], extra: [field("SH5J", Array(repeating: 0, count: 64))]),
      kind: { if case .hashMismatch("SH5", _, _) = $0 { return true } else { return false } }))
  return cases
}()

@Suite struct HostileTests {
  @Test func thereAreEnoughCases() {
    #expect(hostileCases.count >= 40)
  }

  @Test(arguments: hostileCases)
  func refusedForTheRightReason(_ hostile: HostileCase) throws {
    let error = try #require(firstError(hostile.bytes, limits: hostile.limits), "\(hostile.name) was read")
    if let reason = hostile.reason {
      #expect(error.reason == reason, "\(error)")
    } else if let kind = hostile.kind {
      #expect(kind(error.reason), "\(error)")
    }
    if let entry = hostile.entry { #expect(error.entry == entry, "\(error)") }
    #expect(error.description.hasPrefix("Apple Archive"))
  }

  /// After an error, the reader keeps throwing it (no reading on past a fault).
  @Test func errorsAreSticky() throws {
    let bytes = directoryEntry("") + header([typF, pat("/x")]) + directoryEntry("d")
    let reader = try AppleArchiveReader(bytes: bytes)
    _ = try reader.next()
    let first = archiveError { _ = try reader.next() }
    let second = archiveError { _ = try reader.next() }
    #expect(first != nil && first == second)
    #expect(first?.description == "Apple Archive entry 2 ('/x'): invalid path: it starts with '/'")
  }

  /// A cut anywhere inside an entry is refused as a truncation; a cut between entries cannot be
  /// seen (the raw format has no end marker) and reads as the entries before it.
  @Test func truncatedRawArchiveAtEveryOffset() throws {
    let entries = [
      directoryEntry(""), fileEntry("a", Array(repeating: 7, count: 300)), directoryEntry("b"),
      fileEntry("c", Array("xyz".utf8), extra: [field("XATA", le(4, 2))]) + [1, 2, 3, 4],
    ]
    var boundaries: Set<Int> = [0]
    var end = 0
    for e in entries {
      end += e.count
      boundaries.insert(end)
    }
    let whole = Array(entries.joined())
    var checked = 0
    for cut in 1..<whole.count where !boundaries.contains(cut) {
      let error = firstError(Array(whole.prefix(cut)))
      switch error?.reason {
      case .truncatedHeader?, .truncatedBlob?: checked += 1
      default: Issue.record("cut at \(cut): \(String(describing: error))")
      }
    }
    #expect(checked > 300)
  }

  /// A compressed archive cut anywhere is refused: in its framing, a block header or a block,
  /// or (at a block boundary) inside an entry.
  @Test(arguments: [AppleArchiveCompression.zlib, .lzma])
  func truncatedCompressedArchiveAtManyOffsets(compression: AppleArchiveCompression) throws {
    let bytes = try writeTree(testTree(seed: 41, files: 30), compression: compression, blockSize: 2_048)
    for cut in stride(from: 1, to: bytes.count, by: 7) {
      let error = firstError(Array(bytes.prefix(cut)))
      switch error?.reason {
      case .truncatedFraming?, .trailingBytes?, .truncatedBlock?, .truncatedHeader?, .truncatedBlob?: break
      default: Issue.record("cut at \(cut) of \(bytes.count): \(String(describing: error))")
      }
    }
  }

  /// Data half read when `next()` is called is hashed to its end on the way past, and checked.
  @Test func halfReadDataIsStillChecked() throws {
    var bad = SHA256Digest.of(Array(repeating: 5, count: 1_000))
    bad[31] ^= 0x80
    let bytes = fileEntry("f", Array(repeating: 5, count: 1_000), extra: [field("SH2H", bad)]) + directoryEntry("d")
    let reader = try AppleArchiveReader(bytes: bytes)
    _ = try reader.next()
    var buffer = [UInt8](repeating: 0, count: 100)
    #expect(try buffer.withUnsafeMutableBytes { try reader.readData(into: $0) } == 100)
    let error = archiveError { _ = try reader.next() }
    guard case .hashMismatch("SH2", _, _)? = error?.reason else {
      Issue.record("expected an SH2 mismatch, got \(String(describing: error))")
      return
    }
    #expect(error?.entry == 1)
  }

  /// Thousands of damaged copies of good archives (bytes flipped, cut, repeated): each is read
  /// or refused with an AppleArchiveError; none crashes, hangs or throws anything else.
  @Test(arguments: [AppleArchiveCompression.none, .zlib, .lzma])
  func damagedCopiesAreReadOrRefused(compression: AppleArchiveCompression) throws {
    let good = try writeTree(testTree(seed: 51, files: 12), compression: compression, blockSize: 1_024)
    var random = SeededBytes(state: 77)
    var refused = 0
    for round in 0..<1_500 {
      var bytes = good
      for _ in 0..<(1 + Int(random.next() % 4)) {
        let at = Int(random.next() % UInt64(bytes.count))
        switch random.next() % 4 {
        case 0: bytes[at] ^= UInt8(truncatingIfNeeded: random.next() | 1)
        case 1: bytes[at] = [0x00, 0xFF, 0x7F, 0x80][Int(random.next() % 4)]
        case 2: bytes.removeSubrange(at...)
        default: bytes.insert(contentsOf: bytes[at..<min(bytes.count, at + 16)], at: at)
        }
        if bytes.isEmpty { break }
      }
      do {
        let reader = try AppleArchiveReader(bytes: bytes)
        _ = try readEverything(reader, chunk: 1 + round % 300)
      } catch is AppleArchiveError {
        refused += 1
      }
    }
    #expect(refused > 1_000)
  }

  /// A hard link is refused by name, with the cluster and why, and the writer never makes one:
  /// whatever it is given, its headers carry no cluster field.
  @Test func hardLinkIsRefusedByNameAndNeverWritten() throws {
    let bytes = directoryEntry("") + fileEntry("books/a.txt", [1], extra: [field("HLC1", [3])])
    let error = try #require(firstError(bytes))
    #expect(
      error.description
        == "Apple Archive entry 2 ('books/a.txt'): the HLC field puts the entry in hard link cluster 3, sharing its data with other entries; links and shared data are refused (readers that honour HLC and readers that ignore it unpack different files)"
    )
    for compression in [AppleArchiveCompression.none, .zlib] {
      let written = try writeTree(testTree(seed: 5, files: 20), compression: compression, blockSize: 4_096)
      let reader = try AppleArchiveReader(bytes: written)
      var count = 0
      while let entry = try reader.next() {
        count += 1
        #expect(!entry.fieldKeys.contains { ["HLC", "CLC", "SLC"].contains(String($0.prefix(3))) })
      }
      #expect(count >= 20)
    }
  }

  @Test func legacyMagicAccepted() throws {
    let archive = header([typD, pat("")], magic: "YAA1")
    let entry = try #require(try AppleArchiveReader(bytes: archive).next())
    #expect(entry.legacyMagic)
  }
}
