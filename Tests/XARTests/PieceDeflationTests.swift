import Testing
import Zlib

@testable import XAR

/// The TOC is compressed in pieces that are joined into one zlib stream (``DeflateJoin``,
/// ``PieceDeflation``): zlib, an inflater independent of libdeflate, must read the joined stream
/// back to exactly the input, whatever the pieces hold, and the bytes must not depend on threads.
@Suite struct PieceDeflationTests {
  /// Deterministic bytes of several kinds: XML-like text, random bytes (stored blocks), runs.
  static func sample(_ count: Int, seed: UInt64) -> [UInt8] {
    var state = seed &* 0x9E37_79B9_7F4A_7C15 &+ 1
    func next() -> UInt64 {
      state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
      return state >> 33
    }
    let words = Array("<file id=\"12\">\n <name>f00012.json</name>\n <mode>0644</mode>\n</file>\n".utf8)
    var out: [UInt8] = []
    out.reserveCapacity(count)
    while out.count < count {
      let run = Int(next() % 3000) + 1
      switch next() % 3 {
      case 0: for i in 0..<run { out.append(words[(i + Int(next() % 2)) % words.count]) }
      case 1: for _ in 0..<run { out.append(UInt8(truncatingIfNeeded: next())) }
      default: out += [UInt8](repeating: UInt8(truncatingIfNeeded: next()), count: run)
      }
    }
    return Array(out.prefix(count))
  }

  /// Inflates a whole zlib stream with zlib.
  static func inflate(_ stream: [UInt8]) throws -> [UInt8] {
    let inflater = ZlibInflater()
    var out: [UInt8] = []
    let used = try stream.withUnsafeBytes { try inflater.inflate($0) { out += $0 } }
    #expect(inflater.finished)
    #expect(used == stream.count)
    return out
  }

  /// A zlib stream ended after the joined pieces: a final empty stored block, then the Adler-32.
  static func ended(_ body: [UInt8], adler: UInt32) -> [UInt8] {
    body + [
      0x01, 0x00, 0x00, 0xFF, 0xFF, UInt8(adler >> 24), UInt8(adler >> 16 & 0xFF), UInt8(adler >> 8 & 0xFF),
      UInt8(adler & 0xFF),
    ]
  }

  @Test(arguments: [1, 6, 12] as [Int32])
  func joinedPiecesInflateToTheInput(level: Int32) throws {
    let deflater = WholeDeflater(level: level)
    for round in 0..<12 {
      let sizes = (0..<(1 + round % 4)).map { i in [1, 2, 7, 100, 5000, 70_000, 300_000][(round * 3 + i) % 7] }
      var input: [UInt8] = []
      var body: [UInt8] = [0x78, 0x9C]
      for (i, size) in sizes.enumerated() {
        let piece = PieceDeflationTests.sample(size, seed: UInt64(round * 10 + i))
        input += piece
        let raw = piece.withUnsafeBytes { deflater.compressRaw($0) }
        let joinable = try piece.withUnsafeBytes { try DeflateJoin.unfinished(raw, of: $0) }
        // Ends as a sync flush does.
        #expect(Array(joinable.suffix(4)) == [0x00, 0x00, 0xFF, 0xFF])
        body += joinable
      }
      let adler = input.withUnsafeBytes { ZlibDeflater.adler32($0) }
      #expect(try PieceDeflationTests.inflate(PieceDeflationTests.ended(body, adler: adler)) == input)
    }
  }

  @Test func aPieceThatDoesNotInflateToItsInputIsRefused() throws {
    let deflater = WholeDeflater(level: 6)
    let piece = PieceDeflationTests.sample(10_000, seed: 7)
    let raw = piece.withUnsafeBytes { deflater.compressRaw($0) }
    var other = piece
    other[5000] ^= 1
    #expect(throws: ZlibError.self) { try other.withUnsafeBytes { try DeflateJoin.unfinished(raw, of: $0) } }
    #expect(throws: ZlibError.self) { try piece.dropLast().withUnsafeBytes { try DeflateJoin.unfinished(raw, of: $0) } }
    #expect(throws: ZlibError.self) {
      try piece.withUnsafeBytes { try DeflateJoin.unfinished(Array(raw.dropLast(3)), of: $0) }
    }
  }

  @Test func sameStreamForAnyThreadCountAndItInflatesToTheXML() throws {
    let xml = PieceDeflationTests.sample(3 * PieceDeflation.tocChunkSize + 12_345, seed: 99)
    var streams: [[UInt8]] = []
    for threads in [1, 2, 5] {
      var out: [UInt8] = []
      let deflation = PieceDeflation(level: 6, threads: threads) { out += $0 }
      // Uneven pieces, as the XML writer hands them over.
      var offset = 0
      var step = 1
      while offset < xml.count {
        let end = min(xml.count, offset + step)
        xml[offset..<end].withUnsafeBytes { deflation.append($0) }
        offset = end
        step = step * 7 % 100_003 + 1
      }
      let (length, adler) = try deflation.finish()
      #expect(length == xml.count)
      #expect(adler == xml.withUnsafeBytes { ZlibDeflater.adler32($0) })
      #expect(Array(out.prefix(2)) == [0x78, 0x9C])
      #expect(try PieceDeflationTests.inflate(PieceDeflationTests.ended(out, adler: adler)) == xml)
      streams.append(out)
    }
    #expect(streams.allSatisfy { $0 == streams[0] })
  }

  @Test func anOutputErrorIsThrownByFinish() throws {
    struct Full: Error {}
    let xml = PieceDeflationTests.sample(2 * PieceDeflation.tocChunkSize, seed: 3)
    let deflation = PieceDeflation(level: 6, threads: 2) { _ in throw Full() }
    xml.withUnsafeBytes { deflation.append($0) }
    #expect(throws: Full.self) { try deflation.finish() }
  }
}
