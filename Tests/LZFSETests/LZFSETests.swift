import Foundation
import LZFSE
import TestSupport
import Testing

/// Our encoder and decoder against Apple's reference code, in both directions.
@Suite struct InteropTests {
  /// Checks both directions for one input: we decode what the reference wrote, the reference
  /// decodes what we wrote, both byte-identical to the input.
  func checkBothWays(_ input: [UInt8], _ label: String) throws {
    let theirs = try Reference.compress(input)
    #expect(try LZFSE.decode(theirs, limit: input.count) == input, "\(label): decoding the reference's stream")
    let ours = LZFSE.encode(input)
    #expect(try Reference.decompress(ours) == input, "\(label): the reference decoding our stream")
    #expect(try LZFSE.decode(ours, limit: input.count) == input, "\(label): decoding our own stream")
  }

  @Test func emptyInput() throws {
    let theirs = try Reference.compress([])
    #expect(try LZFSE.decode(theirs, limit: 0) == [])
    // Apple's API cannot report an empty output as success (it returns 0 bytes either way), so
    // our stream for empty input is the very stream Apple's encoder writes.
    #expect(LZFSE.encode([]) == theirs)
    #expect(blockKinds(LZFSE.encode([])) == ["bvx-", "bvx$"])
  }

  @Test func oneByte() throws { try checkBothWays([0x41], "one byte") }

  @Test func shortText() throws { try checkBothWays(Array("Hello, LZFSE! Hello, LZFSE! Hello.\n".utf8), "short text") }

  @Test func longRepetitiveText() throws {
    let input = Array(String(repeating: "The quick brown fox jumps over the lazy dog. ", count: 50_000).utf8)
    try checkBothWays(input, "repetitive text")
    #expect(blockKinds(LZFSE.encode(input)).first == "bvx2")
  }

  @Test func randomBinary() throws {
    let input = Samples.random(300_000, seed: 1)
    try checkBothWays(input, "random")
    // Incompressible blocks are stored, so the stream hardly grows.
    #expect(LZFSE.encode(input).count < input.count + input.count / 1000 + 64)
  }

  @Test func mixedBinary() throws { try checkBothWays(Samples.mixed(3_000_000, seed: 2), "mixed") }

  @Test func text() throws { try checkBothWays(Samples.text(2_000_000, seed: 3), "text") }

  /// Around the reference's LZVN threshold (4096), our block limits (40000 literals, 10000
  /// matches) and powers of two.
  @Test(arguments: [
    2, 7, 8, 9, 4095, 4096, 4097, 39_999, 40_000, 40_001, 40_004, 65_535, 65_536, 65_537, 262_144, 1_048_577,
  ])
  func sizesAroundBoundaries(size: Int) throws {
    try checkBothWays(Samples.random(size, seed: UInt64(size)), "random \(size)")
    try checkBothWays(Samples.text(size, seed: UInt64(size)), "text \(size)")
    try checkBothWays(Samples.mixed(size, seed: UInt64(size)), "mixed \(size)")
  }

  /// Many matches (short repeats) fill our 10000-match blocks before the literal limit.
  @Test func manyMatchesPerBlock() throws {
    var generator = SeededGenerator(seed: 9)
    var input: [UInt8] = []
    while input.count < 400_000 {
      input += [
        UInt8(generator.next() % 4), UInt8(ascii: "a"), UInt8(ascii: "b"), UInt8(ascii: "c"), UInt8(ascii: "d"),
      ]
    }
    try checkBothWays(input, "many matches")
    #expect(blockKinds(LZFSE.encode(input)).filter { $0 == "bvx2" }.count > 1)
  }

  /// The reference writes LZVN (`bvxn`) blocks below 4096 bytes; we decode them.
  @Test(arguments: [9, 100, 1000, 3000, 4095])
  func lzvnBlocks(size: Int) throws {
    for input in [Samples.text(size, seed: 5), Samples.mixed(size, seed: 6), Samples.random(size, seed: 7)] {
      let theirs = try Reference.compress(input)
      let kinds = blockKinds(theirs)
      if size >= 1000 && input == Samples.text(size, seed: 5) {
        #expect(kinds == ["bvxn", "bvx$"], "text of \(size) bytes")
      }
      #expect(try LZFSE.decode(theirs, limit: input.count) == input)
    }
  }

  /// One stream holding every block kind (bvxn, bvx2, bvx-, bvx1): matches reach back across
  /// blocks, and the reference agrees on the whole.
  @Test func everyBlockKindInOneStream() throws {
    let a = Samples.text(3000, seed: 11)
    let b = Samples.text(100_000, seed: 12)
    let c = Samples.random(5000, seed: 13)
    let d = Samples.text(50_000, seed: 14)
    let lzvn = try Reference.compress(a).dropLast(4)
    let v2 = LZFSE.encode(b).dropLast(4)
    let raw = LZFSE.encode(c).dropLast(4)
    let v1 = try convertToV1(Reference.compress(d)).dropLast(4)
    let stream = Array(lzvn + v2 + raw + v1) + Array("bvx$".utf8)
    #expect(Set(blockKinds(stream)) == ["bvxn", "bvx2", "bvx-", "bvx1", "bvx$"])
    let expected = a + b + c + d
    #expect(try LZFSE.decode(stream, limit: expected.count) == expected)
    #expect(try Reference.decompress(stream) == expected)
  }

  /// A v1 block (uncompressed header) decodes like the v2 block it came from, for us and for
  /// the reference: our reading of the 772-byte v1 layout matches Apple's.
  @Test func v1Blocks() throws {
    let input = Samples.text(200_000, seed: 15)
    let v1 = try convertToV1(LZFSE.encode(input))
    #expect(blockKinds(v1).contains("bvx1"))
    #expect(try LZFSE.decode(v1, limit: input.count) == input)
    #expect(try Reference.decompress(v1) == input)
  }

  /// 100 MB of mixed data, both directions, with figures printed for the record.
  @Test func hundredMegabytes() throws {
    let input = Samples.mixed(100_000_000, seed: 100)
    var clock = ContinuousClock.now
    let ours = LZFSE.encode(input)
    let encodeTime = ContinuousClock.now - clock
    #expect(try Reference.decompress(ours) == input)
    let theirs = try Reference.compress(input)
    clock = ContinuousClock.now
    let decoded = try LZFSE.decode(theirs, limit: input.count)
    let decodeTime = ContinuousClock.now - clock
    #expect(decoded == input)
    print(
      "100 MB: ours \(ours.count) bytes in \(encodeTime); reference \(theirs.count) bytes; decoded in \(decodeTime)")
    #expect(encodeTime < .seconds(60))
  }
}

/// Rewrites every bvx2 block of a stream as the equivalent bvx1 block (frequencies and fields
/// stored plainly, in Apple's 772-byte v1 layout). Written independently of the decoder.
func convertToV1(_ stream: [UInt8]) throws -> [UInt8] {
  var out: [UInt8] = []
  var position = 0
  func u32(_ at: Int) -> UInt64 {
    UInt64(stream[at]) | UInt64(stream[at + 1]) << 8 | UInt64(stream[at + 2]) << 16 | UInt64(stream[at + 3]) << 24
  }
  func put32(_ v: UInt64) { for i in 0..<4 { out.append(UInt8(truncatingIfNeeded: v >> UInt64(8 * i))) } }
  func put16(_ v: UInt64) { for i in 0..<2 { out.append(UInt8(truncatingIfNeeded: v >> UInt64(8 * i))) } }
  while position < stream.count {
    let kind = String(decoding: stream[position..<(position + 4)], as: UTF8.self)
    switch kind {
    case "bvx$":
      out += stream[position...]
      return out
    case "bvx-":
      let size = 8 + Int(u32(position + 4))
      out += stream[position..<(position + size)]
      position += size
    case "bvxn":
      let size = 12 + Int(u32(position + 8))
      out += stream[position..<(position + size)]
      position += size
    case "bvx2":
      let v0 = u32(position + 8) | u32(position + 12) << 32
      let v1 = u32(position + 16) | u32(position + 20) << 32
      let v2 = u32(position + 24) | u32(position + 28) << 32
      let headerSize = Int(v2 & 0xffff_ffff)
      let literalPayload = Int((v0 >> 20) & 0xfffff)
      let lmdPayload = Int((v1 >> 40) & 0xfffff)
      // The frequencies: a prefix code read from the low bits up.
      var frequencies: [UInt64] = []
      var bitPosition = 0
      func bit(_ i: Int) -> UInt64 {
        let byte = position + 32 + (bitPosition + i) / 8
        return byte < position + headerSize ? UInt64(stream[byte] >> UInt8((bitPosition + i) % 8)) & 1 : 0
      }
      func bits(_ from: Int, _ count: Int) -> UInt64 {
        (0..<count).reduce(0) { $0 | bit(from + $1) << UInt64($1) }
      }
      for _ in 0..<360 {
        if bit(0) == 0 {
          frequencies.append(bit(1))
          bitPosition += 2
        } else if bit(1) == 0 {
          frequencies.append(2 + bit(2))
          bitPosition += 3
        } else if bit(2) == 0 {
          frequencies.append(4 + bits(3, 2))
          bitPosition += 5
        } else if bit(3) == 0 {
          frequencies.append(8 + bits(4, 4))
          bitPosition += 8
        } else {
          frequencies.append(24 + bits(4, 10))
          bitPosition += 14
        }
      }
      put32(0x3178_7662)
      put32(u32(position + 4))
      put32(UInt64(literalPayload + lmdPayload))
      put32(v0 & 0xfffff)
      put32((v0 >> 40) & 0xfffff)
      put32(UInt64(literalPayload))
      put32(UInt64(lmdPayload))
      put32(UInt64(UInt32(bitPattern: Int32((v0 >> 60) & 7) - 7)))
      for i in 0..<4 { put16((v1 >> UInt64(10 * i)) & 0x3ff) }
      put32(UInt64(UInt32(bitPattern: Int32((v1 >> 60) & 7) - 7)))
      put16((v2 >> 32) & 0x3ff)
      put16((v2 >> 42) & 0x3ff)
      put16((v2 >> 52) & 0x3ff)
      for f in frequencies { put16(f) }
      put16(0)  // the C structure's padding to 772 bytes
      let payload = position + headerSize
      out += stream[payload..<(payload + literalPayload + lmdPayload)]
      position = payload + literalPayload + lmdPayload
    default:
      throw TestFailure("unexpected block \(kind)")
    }
  }
  throw TestFailure("no end marker")
}
