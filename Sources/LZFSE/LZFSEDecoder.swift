// The stream decoder: finds the blocks, checks their framing and sizes against the limit, then
// decodes each into one output buffer (matches may reach back into earlier blocks).

/// The block kinds of an LZFSE stream, by their magic number (little-endian "bvx?").
enum BlockMagic {
  static let endOfStream: UInt32 = 0x2478_7662  // bvx$
  static let uncompressed: UInt32 = 0x2d78_7662  // bvx-
  static let compressedV1: UInt32 = 0x3178_7662  // bvx1
  static let compressedV2: UInt32 = 0x3278_7662  // bvx2
  static let compressedLZVN: UInt32 = 0x6e78_7662  // bvxn
}

/// Size of a v1 header as Apple's C structure lays it out (770 bytes of fields, padded to 772).
let v1HeaderSize = 772

/// The reasons a stream is refused, worded for people.
extension LZFSE.DecodeError {
  static let empty = LZFSE.DecodeError("LZFSE stream is empty")
  static let damagedHeader = LZFSE.DecodeError("LZFSE block header is damaged")
  static let truncated = LZFSE.DecodeError("LZFSE stream ends before its end marker")
  static let trailing = LZFSE.DecodeError("LZFSE stream has bytes after its end marker")
  static let tooLarge = LZFSE.DecodeError("LZFSE data would decode past the declared size")
  static let damagedPayload = LZFSE.DecodeError("LZFSE block data is damaged")
  static let badTables = LZFSE.DecodeError("LZFSE block frequency tables are damaged")
  static let badDistance = LZFSE.DecodeError("LZFSE match refers to data before the start of the output")
  static let sizeMismatch = LZFSE.DecodeError("LZFSE block does not decode to the size its header declares")
}

/// The little-endian 16-bit value at `at` (the caller checked the bounds).
@inline(__always) func load16(_ p: UnsafePointer<UInt8>, _ at: Int) -> Int {
  Int(p[at]) | Int(p[at + 1]) << 8
}

/// The little-endian 32-bit value at `at` (the caller checked the bounds).
@inline(__always) func load32(_ p: UnsafePointer<UInt8>, _ at: Int) -> UInt32 {
  UInt32(p[at]) | UInt32(p[at + 1]) << 8 | UInt32(p[at + 2]) << 16 | UInt32(p[at + 3]) << 24
}

/// The little-endian 64-bit value at `at` (the caller checked the bounds).
@inline(__always) func load64(_ p: UnsafePointer<UInt8>, _ at: Int) -> UInt64 {
  UInt64(load32(p, at)) | UInt64(load32(p, at + 4)) << 32
}

/// One block's place in the input: where its header starts, its whole size, its output size.
struct BlockExtent {
  var magic: UInt32
  var start: Int
  var size: Int
  var rawBytes: Int
}

/// Reads the block header at `position`: where the block lies and what it declares. Nil for the
/// end-of-stream marker, which must be the input's last four bytes.
func blockAt(_ p: UnsafePointer<UInt8>, count n: Int, position: Int) throws(LZFSE.DecodeError) -> BlockExtent? {
  guard n - position >= 4 else { throw .truncated }
  let magic = load32(p, position)
  let size: Int
  var raw = 0
  switch magic {
  case BlockMagic.endOfStream:
    guard position + 4 == n else { throw .trailing }
    return nil
  case BlockMagic.uncompressed:
    guard n - position >= 8 else { throw .truncated }
    raw = Int(load32(p, position + 4))
    size = 8 + raw
  case BlockMagic.compressedLZVN:
    guard n - position >= 12 else { throw .truncated }
    raw = Int(load32(p, position + 4))
    size = 12 + Int(load32(p, position + 8))
  case BlockMagic.compressedV1:
    guard n - position >= v1HeaderSize else { throw .truncated }
    raw = Int(load32(p, position + 4))
    size = v1HeaderSize + Int(load32(p, position + 20)) + Int(load32(p, position + 24))
  case BlockMagic.compressedV2:
    guard n - position >= 32 else { throw .truncated }
    raw = Int(load32(p, position + 4))
    let v0 = load64(p, position + 8)
    let v1 = load64(p, position + 16)
    let v2 = load64(p, position + 24)
    let headerSize = Int(v2 & 0xffff_ffff)
    guard headerSize >= 32 else { throw .damagedHeader }
    size = headerSize + Int((v0 >> 20) & 0xfffff) + Int((v1 >> 40) & 0xfffff)
  default:
    throw .damagedHeader
  }
  guard size <= n - position else { throw .truncated }
  return BlockExtent(magic: magic, start: position, size: size, rawBytes: raw)
}

/// Walks the block headers only and returns the declared output size: every block must lie
/// within the input, the stream must end with `bvx$` and nothing after it, and the declared
/// output must stay within `limit`.
func declaredSize(_ src: UnsafeBufferPointer<UInt8>, limit: Int) throws(LZFSE.DecodeError) -> Int {
  guard let p = src.baseAddress, src.count > 0 else { throw .empty }
  var position = 0
  var total = 0
  while let block = try blockAt(p, count: src.count, position: position) {
    total += block.rawBytes
    guard total <= limit else { throw .tooLarge }
    position += block.size
  }
  return total
}

/// The fields of a compressed block header, v1 and v2 alike.
struct CompressedHeader {
  var headerSize = 0
  var rawBytes = 0
  var literalCount = 0
  var matchCount = 0
  var literalPayload = 0
  var lmdPayload = 0
  var literalBits = 0
  var literalStates: (Int, Int, Int, Int) = (0, 0, 0, 0)
  var lmdBits = 0
  var lState = 0
  var mState = 0
  var dState = 0
  /// L, M, D then literal frequencies.
  var frequencies = [UInt16](repeating: 0, count: FSE.allSymbols)
}

/// Reads a v2 header (packed fields, then the frequencies in their variable-length code).
func parseV2Header(_ p: UnsafePointer<UInt8>, at start: Int, available: Int) throws(LZFSE.DecodeError)
  -> CompressedHeader
{
  var h = CompressedHeader()
  let v0 = load64(p, start + 8)
  let v1 = load64(p, start + 16)
  let v2 = load64(p, start + 24)
  h.rawBytes = Int(load32(p, start + 4))
  h.literalCount = Int(v0 & 0xfffff)
  h.literalPayload = Int((v0 >> 20) & 0xfffff)
  h.matchCount = Int((v0 >> 40) & 0xfffff)
  h.literalBits = Int((v0 >> 60) & 7) - 7
  h.literalStates = (Int(v1 & 0x3ff), Int((v1 >> 10) & 0x3ff), Int((v1 >> 20) & 0x3ff), Int((v1 >> 30) & 0x3ff))
  h.lmdPayload = Int((v1 >> 40) & 0xfffff)
  h.lmdBits = Int((v1 >> 60) & 7) - 7
  h.headerSize = Int(v2 & 0xffff_ffff)
  h.lState = Int((v2 >> 32) & 0x3ff)
  h.mState = Int((v2 >> 42) & 0x3ff)
  h.dState = Int((v2 >> 52) & 0x3ff)
  guard h.headerSize >= 32, h.headerSize <= available else { throw .damagedHeader }
  // No frequency bytes at all means every frequency is zero.
  if h.headerSize == 32 { return h }
  var position = start + 32
  let end = start + h.headerSize
  var accumulator: UInt32 = 0
  var held = 0
  for i in 0..<FSE.allSymbols {
    while position < end && held + 8 <= 32 {
      accumulator |= UInt32(p[position]) << UInt32(held)
      held += 8
      position += 1
    }
    // The code's length shows in its low bits: xx0 is 2 bits, x01 3, xx011 5, 0111 8, 1111 14.
    let value: Int
    let length: Int
    if accumulator & 1 == 0 {
      length = 2
      value = Int((accumulator >> 1) & 1)
    } else if accumulator & 2 == 0 {
      length = 3
      value = 2 + Int((accumulator >> 2) & 1)
    } else if accumulator & 4 == 0 {
      length = 5
      value = 4 + Int((accumulator >> 3) & 3)
    } else if accumulator & 8 == 0 {
      length = 8
      value = 8 + Int((accumulator >> 4) & 0xf)
    } else {
      length = 14
      value = 24 + Int((accumulator >> 4) & 0x3ff)
    }
    guard length <= held else { throw .damagedHeader }
    h.frequencies[i] = UInt16(value)
    accumulator >>= UInt32(length)
    held -= length
  }
  guard held < 8, position == end else { throw .damagedHeader }
  return h
}

/// Reads a v1 header (every field stored plainly).
func parseV1Header(_ p: UnsafePointer<UInt8>, at start: Int) -> CompressedHeader {
  var h = CompressedHeader()
  h.headerSize = v1HeaderSize
  h.rawBytes = Int(load32(p, start + 4))
  h.literalCount = Int(load32(p, start + 12))
  h.matchCount = Int(load32(p, start + 16))
  h.literalPayload = Int(load32(p, start + 20))
  h.lmdPayload = Int(load32(p, start + 24))
  h.literalBits = Int(Int32(bitPattern: load32(p, start + 28)))
  h.literalStates = (load16(p, start + 32), load16(p, start + 34), load16(p, start + 36), load16(p, start + 38))
  h.lmdBits = Int(Int32(bitPattern: load32(p, start + 40)))
  h.lState = load16(p, start + 44)
  h.mState = load16(p, start + 46)
  h.dState = load16(p, start + 48)
  for i in 0..<FSE.allSymbols { h.frequencies[i] = UInt16(load16(p, start + 50 + 2 * i)) }
  return h
}

/// Decodes the blocks `blockAt` finds into an output buffer of exactly their declared size.
struct StreamDecoder {
  let src: UnsafePointer<UInt8>
  let dst: UnsafeMutablePointer<UInt8>
  /// Bytes of output written so far.
  var produced = 0
  /// Decoding tables of the current block, and its literals once decoded.
  var literalTable = [UInt32](repeating: 0, count: FSE.literalStates)
  var lTable = [UInt64](repeating: 0, count: FSE.lStates)
  var mTable = [UInt64](repeating: 0, count: FSE.mStates)
  var dTable = [UInt64](repeating: 0, count: FSE.dStates)
  var literals = [UInt8](repeating: 0, count: FSE.maxLiteralsPerBlock + 4)

  init(src: UnsafePointer<UInt8>, dst: UnsafeMutablePointer<UInt8>) {
    self.src = src
    self.dst = dst
  }

  /// Decodes one block right after the output so far; it must produce exactly what it declares.
  mutating func decode(_ block: BlockExtent) throws(LZFSE.DecodeError) {
    let end = produced + block.rawBytes
    switch block.magic {
    case BlockMagic.uncompressed:
      (dst + produced).update(from: src + block.start + 8, count: block.rawBytes)
      produced = end
    case BlockMagic.compressedLZVN:
      produced = try decodeLZVN(
        src: src, from: block.start + 12, to: block.start + block.size, dst: dst, at: produced, end: end)
    case BlockMagic.compressedV1:
      try decodeCompressed(parseV1Header(src, at: block.start), block: block)
    default:
      try decodeCompressed(parseV2Header(src, at: block.start, available: block.size), block: block)
    }
    guard produced == end else { throw .sizeMismatch }
  }

  /// Checks a frequency table: never more than `states` in all, and exactly `states` when the
  /// block uses the table (a partial table leaves states undefined).
  static func checkTable(_ f: ArraySlice<UInt16>, states: Int, used: Bool) -> Bool {
    var sum = 0
    for x in f { sum += Int(x) }
    return used ? sum == states : sum <= states
  }

  /// Decodes a bvx1 or bvx2 block: checks the header, builds the tables, decodes the literals,
  /// then runs the L/M/D triples (literals, then a match) into the output.
  mutating func decodeCompressed(_ h: CompressedHeader, block: BlockExtent) throws(LZFSE.DecodeError) {
    let f = h.frequencies
    let lRange = 0..<FSE.lSymbols
    let mRange = lRange.upperBound..<(lRange.upperBound + FSE.mSymbols)
    let dRange = mRange.upperBound..<(mRange.upperBound + FSE.dSymbols)
    let literalRange = dRange.upperBound..<FSE.allSymbols
    guard h.literalCount <= FSE.maxLiteralsPerBlock, h.literalCount % 4 == 0, h.matchCount <= FSE.maxMatchesPerBlock,
      h.literalStates.0 < FSE.literalStates, h.literalStates.1 < FSE.literalStates,
      h.literalStates.2 < FSE.literalStates, h.literalStates.3 < FSE.literalStates,
      h.lState < FSE.lStates, h.mState < FSE.mStates, h.dState < FSE.dStates,
      h.headerSize + h.literalPayload + h.lmdPayload == block.size
    else { throw .damagedHeader }
    let hasMatches = h.matchCount > 0
    guard Self.checkTable(f[lRange], states: FSE.lStates, used: hasMatches),
      Self.checkTable(f[mRange], states: FSE.mStates, used: hasMatches),
      Self.checkTable(f[dRange], states: FSE.dStates, used: hasMatches),
      Self.checkTable(f[literalRange], states: FSE.literalStates, used: h.literalCount > 0)
    else { throw .badTables }

    f.withUnsafeBufferPointer { all in
      let base = all.baseAddress!
      if h.literalCount > 0 {
        FSE.buildLiteralDecoder(
          states: FSE.literalStates,
          frequencies: UnsafeBufferPointer(start: base + literalRange.lowerBound, count: FSE.literalSymbols),
          into: &literalTable)
      }
      if hasMatches {
        FSE.buildValueDecoder(
          states: FSE.lStates, frequencies: UnsafeBufferPointer(start: base, count: FSE.lSymbols),
          extraBits: FSE.lExtraBits, bases: FSE.lBase, into: &lTable)
        FSE.buildValueDecoder(
          states: FSE.mStates, frequencies: UnsafeBufferPointer(start: base + mRange.lowerBound, count: FSE.mSymbols),
          extraBits: FSE.mExtraBits, bases: FSE.mBase, into: &mTable)
        FSE.buildValueDecoder(
          states: FSE.dStates, frequencies: UnsafeBufferPointer(start: base + dRange.lowerBound, count: FSE.dSymbols),
          extraBits: FSE.dExtraBits, bases: FSE.dBase, into: &dTable)
      }
    }

    // Literals: four interleaved coders over one stream read backwards. Like Apple's decoder,
    // the reader may look (not consume) as far back as the start of the input.
    let literalEnd = block.start + h.headerSize + h.literalPayload
    guard var bits = BackwardBits(base: src, end: literalEnd, floor: 0, finalBits: h.literalBits) else {
      throw .damagedPayload
    }
    let count = h.literalCount
    let ok = literalTable.withUnsafeBufferPointer { table -> Bool in
      literals.withUnsafeMutableBufferPointer { out -> Bool in
        let t = table.baseAddress!
        let o = out.baseAddress!
        var s0 = h.literalStates.0
        var s1 = h.literalStates.1
        var s2 = h.literalStates.2
        var s3 = h.literalStates.3
        var i = 0
        while i < count {
          guard bits.refill() else { return false }
          var e = t[s0]
          o[i] = UInt8(truncatingIfNeeded: e >> 8)
          s0 = (Int(e >> 16) + Int(bits.pull(Int(e & 0xff)))) & (FSE.literalStates - 1)
          e = t[s1]
          o[i + 1] = UInt8(truncatingIfNeeded: e >> 8)
          s1 = (Int(e >> 16) + Int(bits.pull(Int(e & 0xff)))) & (FSE.literalStates - 1)
          e = t[s2]
          o[i + 2] = UInt8(truncatingIfNeeded: e >> 8)
          s2 = (Int(e >> 16) + Int(bits.pull(Int(e & 0xff)))) & (FSE.literalStates - 1)
          e = t[s3]
          o[i + 3] = UInt8(truncatingIfNeeded: e >> 8)
          s3 = (Int(e >> 16) + Int(bits.pull(Int(e & 0xff)))) & (FSE.literalStates - 1)
          i += 4
        }
        return true
      }
    }
    guard ok else { throw .damagedPayload }

    // L, M, D triples: read backwards from the end of their own payload, never before its start.
    let lmdStart = literalEnd
    guard var lmd = BackwardBits(base: src, end: lmdStart + h.lmdPayload, floor: lmdStart, finalBits: h.lmdBits)
    else { throw .damagedPayload }
    let blockEnd = produced + h.rawBytes
    var out = produced
    let dst = self.dst
    let failure: LZFSE.DecodeError? = lTable.withUnsafeBufferPointer { lt in
      mTable.withUnsafeBufferPointer { mt in
        dTable.withUnsafeBufferPointer { dt in
          literals.withUnsafeBufferPointer { litBuffer -> LZFSE.DecodeError? in
            let lit = litBuffer.baseAddress!
            var ls = h.lState
            var ms = h.mState
            var ds = h.dState
            var literalPosition = 0
            var distance = -1
            for _ in 0..<h.matchCount {
              guard lmd.refill() else { return .damagedPayload }
              let l = Self.value(&ls, lt.baseAddress!, &lmd, mask: FSE.lStates - 1)
              let m = Self.value(&ms, mt.baseAddress!, &lmd, mask: FSE.mStates - 1)
              let d = Self.value(&ds, dt.baseAddress!, &lmd, mask: FSE.dStates - 1)
              if d != 0 { distance = d }
              guard l <= count - literalPosition else { return .damagedPayload }
              guard l + m <= blockEnd - out else { return .sizeMismatch }
              guard distance > 0, distance <= out + l else { return .badDistance }
              (dst + out).update(from: lit + literalPosition, count: l)
              literalPosition += l
              out += l
              copyMatch(dst, at: out, distance: distance, length: m)
              out += m
            }
            return nil
          }
        }
      }
    }
    if let failure { throw failure }
    produced = out
  }

  /// Decodes one L, M or D value: its symbol from the state, then state bits and extra bits.
  @inline(__always) static func value(
    _ state: inout Int, _ table: UnsafePointer<UInt64>, _ bits: inout BackwardBits, mask: Int
  ) -> Int {
    let e = table[state]
    let total = Int(e & 0xff)
    let extra = Int((e >> 8) & 0xff)
    let read = bits.pull(total)
    state = (Int((e >> 16) & 0xffff) + Int(read >> UInt64(extra))) & mask
    return Int(e >> 32) + Int(read & ((UInt64(1) << UInt64(extra)) - 1))
  }
}

/// Copies `length` bytes from `distance` back (the ranges may overlap: byte by byte semantics).
@inline(__always) func copyMatch(_ dst: UnsafeMutablePointer<UInt8>, at out: Int, distance: Int, length: Int) {
  if distance >= length {
    (dst + out).update(from: dst + out - distance, count: length)
  } else if distance >= 8 {
    var i = 0
    while i < length {
      let chunk = min(distance, length - i)
      (dst + out + i).update(from: dst + out + i - distance, count: chunk)
      i += chunk
    }
  } else {
    for i in 0..<length { dst[out + i] = dst[out + i - distance] }
  }
}
