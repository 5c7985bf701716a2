import Foundation
import LZFSE
import TestSupport
import Testing

/// Damaged and hostile streams: each must be refused with a `DecodeError`, never crash, never
/// be read differently from the reference.
@Suite struct HostileInputTests {
  /// Expects `input` to be refused (with any `DecodeError`).
  func expectRefused(_ input: [UInt8], limit: Int = 1 << 24, _ comment: Comment? = nil) {
    #expect(throws: LZFSE.DecodeError.self, comment) { try LZFSE.decode(input, limit: limit) }
  }

  func le32(_ v: UInt32) -> [UInt8] { (0..<4).map { UInt8(truncatingIfNeeded: v >> UInt32(8 * $0)) } }
  func set32(_ bytes: inout [UInt8], at: Int, _ v: UInt32) { bytes.replaceSubrange(at..<(at + 4), with: le32(v)) }

  /// A stream of a bvxn, a bvx2 and a bvx- block.
  func threeBlocks() throws -> (stream: [UInt8], decoded: [UInt8]) {
    let a = Samples.text(2000, seed: 21)
    let b = Samples.text(60_000, seed: 22)
    let c = Samples.random(3000, seed: 23)
    let stream = try Reference.compress(a).dropLast(4) + LZFSE.encode(b).dropLast(4) + LZFSE.encode(c)
    return (Array(stream), a + b + c)
  }

  @Test func emptyInput() {
    #expect(throws: LZFSE.DecodeError("LZFSE stream is empty")) { try LZFSE.decode([], limit: 100) }
  }

  @Test func truncatedAtEveryPoint() throws {
    let (stream, decoded) = try threeBlocks()
    #expect(try LZFSE.decode(stream, limit: decoded.count) == decoded)
    for cut in 0..<stream.count where cut < 3000 || cut % 7 == 0 || stream.count - cut < 3000 {
      expectRefused(Array(stream[..<cut]), "cut at \(cut)")
    }
  }

  @Test func missingEndMarker() throws {
    let stream = LZFSE.encode(Samples.text(10_000, seed: 24))
    #expect(throws: LZFSE.DecodeError("LZFSE stream ends before its end marker")) {
      try LZFSE.decode(Array(stream.dropLast(4)), limit: 1 << 20)
    }
  }

  @Test func trailingGarbage() throws {
    let stream = LZFSE.encode(Samples.text(10_000, seed: 25))
    for tail in [[0], Array("bvx$".utf8), [1, 2, 3, 4, 5, 6, 7, 8]] as [[UInt8]] {
      #expect(throws: LZFSE.DecodeError("LZFSE stream has bytes after its end marker")) {
        try LZFSE.decode(stream + tail, limit: 1 << 20)
      }
    }
  }

  @Test func unknownBlockMagic() throws {
    var stream = LZFSE.encode(Samples.text(10_000, seed: 26))
    stream[3] = UInt8(ascii: "3")
    #expect(throws: LZFSE.DecodeError("LZFSE block header is damaged")) { try LZFSE.decode(stream, limit: 1 << 20) }
    expectRefused(Array("bvx".utf8))
    expectRefused(Array("BVX$".utf8))
  }

  @Test func limitSmallerThanOutput() throws {
    let input = Samples.text(100_000, seed: 27)
    for stream in [LZFSE.encode(input), try Reference.compress(input)] {
      #expect(try LZFSE.decode(stream, limit: input.count) == input)
      #expect(throws: LZFSE.DecodeError("LZFSE data would decode past the declared size")) {
        try LZFSE.decode(stream, limit: input.count - 1)
      }
    }
    // A raw block declaring 4 GiB is refused before anything is allocated.
    expectRefused(Array("bvx-".utf8) + le32(0xffff_ffff) + Array("bvx$".utf8), limit: 1 << 20)
  }

  @Test func rawBlockLongerThanStream() {
    expectRefused(Array("bvx-".utf8) + le32(10) + [1, 2, 3] + Array("bvx$".utf8))
  }

  @Test func rawSizeDisagreesWithContent() throws {
    let input = Samples.text(50_000, seed: 28)
    let stream = LZFSE.encode(input)
    #expect(blockKinds(stream).first == "bvx2")
    for delta in [-1, 1, -1000, 1000] {
      var damaged = stream
      set32(&damaged, at: 4, UInt32(input.count + delta))
      #expect(throws: LZFSE.DecodeError.self) { try LZFSE.decode(damaged, limit: 1 << 20) }
    }
    // The same for an LZVN block.
    let small = Samples.text(3000, seed: 29)
    let lzvn = try Reference.compress(small)
    #expect(blockKinds(lzvn).first == "bvxn")
    for delta in [-1, 1] {
      var damaged = lzvn
      set32(&damaged, at: 4, UInt32(small.count + delta))
      expectRefused(damaged, "LZVN raw size \(delta)")
    }
  }

  @Test func v2HeaderSizeDamaged() throws {
    let stream = LZFSE.encode(Samples.text(50_000, seed: 30))
    for headerSize in [0, 31, 33, 100, 0xffff_ffff] as [UInt32] {
      var damaged = stream
      set32(&damaged, at: 24, headerSize)
      expectRefused(damaged, "header size \(headerSize)")
    }
  }

  @Test func tooManyLiteralsOrMatches() throws {
    let stream = LZFSE.encode(Samples.text(50_000, seed: 31))
    // n_literals (bits 0-19 of the first packed field) past the block limit, or not a multiple
    // of 4; n_matches (bits 40-59) past 10000.
    for (byte, value) in [(8, 0xff), (9, 0xff), (8, 0x01)] {
      var damaged = stream
      damaged[byte] = UInt8(value)
      expectRefused(damaged, "byte \(byte) = \(value)")
    }
    var damaged = stream
    damaged[13] = 0xff
    damaged[14] = 0xff
    expectRefused(damaged, "n_matches")
  }

  /// Frequencies that do not sum to the number of states, written in a v1 header.
  @Test func badFrequencies() throws {
    let input = Samples.text(50_000, seed: 32)
    let v1 = try convertToV1(LZFSE.encode(input))
    #expect(try LZFSE.decode(v1, limit: input.count) == input)
    // Literal frequencies start at 50 + 2 * 104; L frequencies at 50.
    let literalFreq = 50 + 2 * 104
    for (offset, delta) in [(literalFreq + 2 * 101, 1), (literalFreq + 2 * 101, -1), (50, 5), (50 + 2 * 40, 300)] {
      var damaged = v1
      let old = Int(damaged[offset]) | Int(damaged[offset + 1]) << 8
      let new = max(0, old + delta)
      damaged[offset] = UInt8(new & 0xff)
      damaged[offset + 1] = UInt8(new >> 8)
      expectRefused(damaged, "frequency at \(offset) changed by \(delta)")
    }
  }

  /// Bit-count and state fields of a v1 header out of their ranges.
  @Test func v1FieldsOutOfRange() throws {
    let input = Samples.text(50_000, seed: 33)
    let v1 = try convertToV1(LZFSE.encode(input))
    for (offset, value) in [(28, 5 as UInt32), (28, 0xffff_fff0), (40, 9), (32, 1024), (44, 64), (48, 256)] {
      var damaged = v1
      if offset == 28 || offset == 40 {
        set32(&damaged, at: offset, value)
      } else {
        damaged[offset] = UInt8(value & 0xff)
        damaged[offset + 1] = UInt8(value >> 8)
      }
      expectRefused(damaged, "v1 field at \(offset) = \(value)")
    }
  }

  /// The boundary between the literal and the L/M/D bit streams moved, one match too many or
  /// too few: the bit streams over- or under-run, and the block is refused. Damage the format
  /// cannot detect (literal bits shifted into different but valid literals) must at least be
  /// read exactly as the reference reads it.
  @Test func bitStreamOverAndUnderRun() throws {
    let input = Samples.text(50_000, seed: 35)
    let v1 = try convertToV1(LZFSE.encode(input))
    func field(_ bytes: [UInt8], _ at: Int) -> Int {
      Int(bytes[at]) | Int(bytes[at + 1]) << 8 | Int(bytes[at + 2]) << 16 | Int(bytes[at + 3]) << 24
    }
    func movedBoundary(_ delta: Int) -> [UInt8] {
      var damaged = v1
      set32(&damaged, at: 20, UInt32(field(v1, 20) + delta))
      set32(&damaged, at: 24, UInt32(field(v1, 24) - delta))
      return damaged
    }
    for delta in [-8, -1, 8] { expectRefused(movedBoundary(delta), "literal/LMD boundary moved by \(delta)") }
    for delta in [-1, 1] {
      var damaged = v1
      set32(&damaged, at: 16, UInt32(field(v1, 16) + delta))
      expectRefused(damaged, "n_matches changed by \(delta)")
    }
    // One byte more for the literals takes a padding byte of the L/M/D stream: the literals are
    // then read shifted by 8 bits, and may still form a valid block. Likewise a changed count
    // of unused bits in the last literal byte.
    var undetectable = [movedBoundary(1)]
    for offset in [28, 40] {
      var damaged = v1
      let bits = Int32(bitPattern: UInt32(field(v1, offset)))
      set32(&damaged, at: offset, UInt32(bitPattern: bits == 0 ? -3 : 0))
      undetectable.append(damaged)
    }
    let theirs = try Reference.verdicts(undetectable)
    for (i, stream) in undetectable.enumerated() {
      if let ours = try? LZFSE.decode(stream, limit: 1 << 20) {
        #expect(theirs[i] == ours, "case \(i): decoded, but not as the reference does")
      }
    }
  }

  /// bvx2 blocks whose matches reach into blocks left out of the stream: the distances point
  /// before the start of the output.
  @Test func distanceBeforeTheStart() throws {
    let a = Samples.random(100_000, seed: 34)
    let stream = try Reference.compress(a + a)
    let parts = blocks(stream)
    #expect(parts.count >= 4 && parts.dropLast().allSatisfy { $0.kind == "bvx2" })
    #expect(try LZFSE.decode(stream, limit: 2 * a.count) == a + a)
    let end = Array("bvx$".utf8)
    #expect(throws: LZFSE.DecodeError("LZFSE match refers to data before the start of the output")) {
      try LZFSE.decode(Array(parts[parts.count - 2].bytes) + end, limit: 2 * a.count)
    }
    expectRefused(Array(parts[0].bytes + parts[parts.count - 2].bytes) + end, "the middle blocks left out")
  }

  /// LZVN opcodes by hand: a distance before the start, a repeated distance with none before,
  /// undefined opcodes, no end-of-stream opcode, literals past the block.
  @Test func handMadeLZVN() throws {
    func lzvn(raw: UInt32, _ payload: [UInt8]) -> [UInt8] {
      Array("bvxn".utf8) + le32(raw) + le32(UInt32(payload.count)) + payload + Array("bvx$".utf8)
    }
    let eos: [UInt8] = [0x06, 0, 0, 0, 0, 0, 0, 0]
    // Valid: literal "ab" then a match of 3 at distance 2 ("aba"): sml_d L=2 M=3 D=2.
    #expect(try LZFSE.decode(lzvn(raw: 5, [0x80, 0x02, 0x61, 0x62] + eos), limit: 10) == Array("ababa".utf8))
    expectRefused(lzvn(raw: 5, [0x80, 0x03, 0x61, 0x62] + eos), "distance 3 past 2 bytes")
    expectRefused(lzvn(raw: 5, [0x80, 0x00, 0x61, 0x62] + eos), "distance 0")
    expectRefused(lzvn(raw: 5, [0x86, 0x61, 0x62] + eos), "previous distance at the start")
    expectRefused(lzvn(raw: 3, [0xf3] + eos), "match without any distance")
    for op: UInt8 in [0x1e, 0x26, 0x2e, 0x36, 0x3e, 0x70, 0x7f, 0xd0, 0xdf] {
      expectRefused(lzvn(raw: 1, [op, 0, 0, 0] + eos), "undefined opcode \(op)")
    }
    expectRefused(lzvn(raw: 2, [0xe2, 0x61, 0x62]), "no end-of-stream opcode")
    expectRefused(lzvn(raw: 2, [0xe2, 0x61, 0x62] + eos + [0]), "bytes after end-of-stream")
    expectRefused(lzvn(raw: 2, [0xe2, 0x61, 0x62, 0x06, 0, 0]), "short end-of-stream")
    expectRefused(lzvn(raw: 1, [0xe2, 0x61, 0x62] + eos), "literals past the block")
    expectRefused(lzvn(raw: 20, [0xef, 0x61] + eos), "literal longer than the payload")
    expectRefused(lzvn(raw: 0, []), "empty LZVN payload")
    // Apple's decoder refuses an LZVN block declaring no output, even one holding only its end.
    expectRefused(lzvn(raw: 0, eos), "LZVN block without output")
  }

  /// Random damage to valid streams over many seeds: never a crash; whatever we decode, the
  /// reference decodes to the same bytes (we may refuse more than it does, never less).
  @Test func fuzzAgainstReference() throws {
    let (threeBlockStream, _) = try threeBlocks()
    let v1 = try convertToV1(LZFSE.encode(Samples.text(20_000, seed: 41)))
    let seeds: [[UInt8]] = [
      threeBlockStream, v1, LZFSE.encode(Samples.mixed(30_000, seed: 42)),
      try Reference.compress(Samples.text(1500, seed: 43)),
      try Reference.compress(Samples.text(30_000, seed: 44)),
    ]
    var generator = SeededGenerator(seed: 2026)
    var cases: [[UInt8]] = []
    for round in 0..<1500 {
      var stream = seeds[round % seeds.count]
      switch generator.next() % 5 {
      case 0:
        // A few bit flips.
        for _ in 0...(generator.next() % 3) {
          let at = Int(generator.next() % UInt64(stream.count))
          stream[at] ^= UInt8(1) << UInt8(generator.next() % 8)
        }
      case 1:
        // Damage in the first bytes of a block header.
        let at = Int(generator.next() % UInt64(min(stream.count, 64)))
        stream[at] = UInt8(truncatingIfNeeded: generator.next())
      case 2:
        // A run of random bytes.
        let at = Int(generator.next() % UInt64(stream.count))
        for i in at..<min(stream.count, at + 1 + Int(generator.next() % 16)) {
          stream[i] = UInt8(truncatingIfNeeded: generator.next())
        }
      case 3:
        // Bytes cut from the middle.
        let at = Int(generator.next() % UInt64(stream.count))
        stream.removeSubrange(at..<min(stream.count, at + 1 + Int(generator.next() % 8)))
      default:
        // A random payload behind a plausible header.
        let kinds = ["bvxn", "bvx2", "bvx1", "bvx-"]
        let kind = Array(kinds[Int(generator.next() % 4)].utf8)
        stream =
          kind + le32(UInt32(generator.next() % 2000))
          + Samples.random(Int(generator.next() % 900), seed: generator.next())
        stream += Array("bvx$".utf8)
      }
      cases.append(stream)
    }
    var decodedCount = 0
    var ours: [[UInt8]?] = []
    for stream in cases {
      do {
        ours.append(try LZFSE.decode(stream, limit: 1 << 22))
        decodedCount += 1
      } catch {
        ours.append(nil)
      }
    }
    let theirs = try Reference.verdicts(cases)
    for (i, result) in ours.enumerated() {
      guard let result else { continue }
      // The reference's API reports an empty output as a failure: nothing more to compare then.
      if result.isEmpty { continue }
      #expect(theirs[i] == result, "case \(i): we decoded \(result.count) bytes, the reference disagrees")
    }
    print("fuzz: \(cases.count) damaged streams, \(decodedCount) decoded (all agreeing with the reference)")
  }
}

/// The encoder's own properties.
@Suite struct EncoderTests {
  @Test func deterministic() {
    for input in [Samples.text(500_000, seed: 51), Samples.mixed(500_000, seed: 52), Samples.random(50_000, seed: 53)] {
      #expect(LZFSE.encode(input) == LZFSE.encode(input))
    }
  }

  @Test func ratioOnRepetitiveText() throws {
    let input = Array(String(repeating: "All work and no play makes Jack a dull boy.\n", count: 20_000).utf8)
    let ours = LZFSE.encode(input)
    #expect(ours.count * 100 < input.count)
    #expect(try LZFSE.decode(ours, limit: input.count) == input)
  }

  @Test func ratioNearTheReferenceOnText() throws {
    let input = Samples.text(2_000_000, seed: 54)
    let ours = LZFSE.encode(input).count
    let theirs = try Reference.compress(input).count
    print("text 2 MB: ours \(ours) bytes, reference \(theirs) bytes")
    #expect(Double(ours) < Double(theirs) * 1.1)
  }
}
