// The encoder: LZ77 match finding over hash chains (with one-step lazy evaluation), then FSE
// coding of each block's literals and L/M/D triples into `bvx2` blocks. A block that would not
// shrink is stored as `bvx-` instead.

/// Encodes one input buffer into LZFSE blocks (without the end-of-stream marker).
struct StreamEncoder {
  let src: UnsafeBufferPointer<UInt8>
  /// The block being built: its triples and its literal bytes.
  var lValues: [Int] = []
  var mValues: [Int] = []
  var dValues: [Int] = []
  var literals: [UInt8] = []
  /// Input offset where the current block starts, and how far its triples reach.
  var blockStart = 0
  var cursor = 0
  var scratch = [UInt8](repeating: 0, count: 1 << 17)

  /// Match finder settings: hash table size, window (covers the largest distance), how many
  /// earlier positions to try, and the length that is good enough to stop looking.
  static let hashBits = 16
  static let windowBits = 18
  static let maxChain = 24
  static let niceLength = 192
  /// Matches this long are taken at once, without looking for a longer one a byte later.
  static let lazyLength = 32

  init(src: UnsafeBufferPointer<UInt8>) {
    self.src = src
    lValues.reserveCapacity(FSE.maxMatchesPerBlock)
    mValues.reserveCapacity(FSE.maxMatchesPerBlock)
    dValues.reserveCapacity(FSE.maxMatchesPerBlock)
    literals.reserveCapacity(FSE.maxLiteralsPerBlock + 4)
  }

  /// Finds the matches of the whole input and appends its blocks to `out`.
  ///
  /// Positions are kept as 32-bit values: past 2 GiB of input no more matches are found (the
  /// output stays correct, it just compresses less).
  mutating func run(into out: inout [UInt8]) {
    let n = src.count
    guard n > 0, let p = src.baseAddress else { return }
    var head = [Int32](repeating: -1, count: 1 << Self.hashBits)
    var chain = [Int32](repeating: -1, count: 1 << Self.windowBits)
    let windowMask = (1 << Self.windowBits) - 1
    let last = n - 4  // the last position with four bytes to hash
    let literalsLeft = head.withUnsafeMutableBufferPointer { headBuffer in
      chain.withUnsafeMutableBufferPointer { chainBuffer -> Int in
        let head = headBuffer.baseAddress!
        let chain = chainBuffer.baseAddress!
        var literalStart = 0
        var i = 0
        var inserted = 0  // positions below this are in the chains

        @inline(__always) func hash(_ at: Int) -> Int {
          let word = UnsafeRawPointer(p + at).loadUnaligned(as: UInt32.self)
          return Int((word &* 2_654_435_761) >> UInt32(32 - Self.hashBits))
        }

        @inline(__always) func insert(_ at: Int) {
          let h = hash(at)
          chain[at & windowMask] = head[h]
          head[h] = Int32(truncatingIfNeeded: at)
        }

        /// The longest earlier match at `at` (length 0 when none of 4 bytes or more); inserts `at`.
        @inline(__always) func best(_ at: Int) -> (length: Int, distance: Int) {
          let h = hash(at)
          var candidate = Int(head[h])
          chain[at & windowMask] = head[h]
          head[h] = Int32(truncatingIfNeeded: at)
          let maxLength = n - at
          let first = UnsafeRawPointer(p + at).loadUnaligned(as: UInt32.self)
          var bestLength = 3
          var bestDistance = 0
          var steps = Self.maxChain
          while candidate >= 0 && steps > 0 {
            let distance = at - candidate
            if distance > FSE.maxD { break }
            if p[candidate + bestLength] == p[at + bestLength]
              && UnsafeRawPointer(p + candidate).loadUnaligned(as: UInt32.self) == first
            {
              var length = 4
              var mismatch = false
              while length + 8 <= maxLength {
                let a = UnsafeRawPointer(p + at + length).loadUnaligned(as: UInt64.self)
                let b = UnsafeRawPointer(p + candidate + length).loadUnaligned(as: UInt64.self)
                if a != b {
                  length += (a ^ b).trailingZeroBitCount >> 3
                  mismatch = true
                  break
                }
                length += 8
              }
              if !mismatch {
                while length < maxLength && p[at + length] == p[candidate + length] { length += 1 }
              }
              if length > bestLength {
                bestLength = length
                bestDistance = distance
                if length >= Self.niceLength || length == maxLength { break }
              }
            }
            let next = Int(chain[candidate & windowMask])
            if next >= candidate { break }
            candidate = next
            steps -= 1
          }
          return bestDistance == 0 ? (0, 0) : (bestLength, bestDistance)
        }

        while i <= last {
          var (length, distance) = best(i)
          inserted = i + 1
          if length == 0 {
            i += 1
            continue
          }
          // Lazy: a longer match one byte later is worth a literal.
          while i + 1 <= last && length < Self.lazyLength {
            let (nextLength, nextDistance) = best(i + 1)
            inserted = i + 2
            if nextLength > length {
              i += 1
              length = nextLength
              distance = nextDistance
            } else {
              break
            }
          }
          emit(literalCount: i - literalStart, match: length, distance: distance, into: &out)
          let end = i + length
          var k = inserted
          let insertEnd = min(end, last + 1)
          while k < insertEnd {
            insert(k)
            k += 1
          }
          inserted = max(inserted, insertEnd)
          i = end
          literalStart = end
        }
        return n - literalStart
      }
    }
    if literalsLeft > 0 { emit(literalCount: literalsLeft, match: 0, distance: 0, into: &out) }
    flushBlock(into: &out)
  }

  /// Splits a literal run and a match into triples LZFSE can carry, adding them to the block.
  mutating func emit(literalCount: Int, match: Int, distance: Int, into out: inout [UInt8]) {
    var l = literalCount
    var m = match
    while l > FSE.maxL {
      addTriple(FSE.maxL, 0, 0, into: &out)
      l -= FSE.maxL
    }
    while m > FSE.maxM {
      addTriple(l, FSE.maxM, distance, into: &out)
      l = 0
      m -= FSE.maxM
    }
    if l > 0 || m > 0 { addTriple(l, m, distance, into: &out) }
  }

  /// Adds one L/M/D triple (and its literals) to the block, writing the block first when full.
  mutating func addTriple(_ l: Int, _ m: Int, _ d: Int, into out: inout [UInt8]) {
    if lValues.count == FSE.maxMatchesPerBlock || literals.count + l > FSE.maxLiteralsPerBlock {
      flushBlock(into: &out)
    }
    lValues.append(l)
    mValues.append(m)
    dValues.append(d)
    literals.append(contentsOf: UnsafeBufferPointer(rebasing: src[cursor..<(cursor + l)]))
    cursor += l + m
  }

  /// Writes the current block (bvx2, or bvx- when that is not smaller) and starts a new one.
  mutating func flushBlock(into out: inout [UInt8]) {
    guard !lValues.isEmpty else { return }
    let raw = cursor - blockStart
    let size = encodeBlock(rawBytes: raw)
    if size >= raw + 8 {
      appendLE32(&out, BlockMagic.uncompressed)
      appendLE32(&out, UInt32(raw))
      out.append(contentsOf: UnsafeBufferPointer(rebasing: src[blockStart..<cursor]))
    } else {
      out.append(contentsOf: scratch[0..<size])
    }
    lValues.removeAll(keepingCapacity: true)
    mValues.removeAll(keepingCapacity: true)
    dValues.removeAll(keepingCapacity: true)
    literals.removeAll(keepingCapacity: true)
    blockStart = cursor
  }

  /// Encodes the block into `scratch` as bvx2; returns its size.
  mutating func encodeBlock(rawBytes: Int) -> Int {
    while literals.count % 4 != 0 { literals.append(0) }
    let matchCount = lValues.count
    // Distances: a triple without a match takes the previous distance (or 1, always valid as its
    // literals come first); a distance equal to the previous one is written as 0.
    var distances = [Int](repeating: 0, count: matchCount)
    var previous = 0
    for k in 0..<matchCount {
      var d = dValues[k]
      if mValues[k] == 0 { d = previous != 0 ? previous : 1 }
      if d == previous {
        distances[k] = 0
      } else {
        distances[k] = d
        previous = d
      }
    }
    var lCounts = [Int](repeating: 0, count: FSE.lSymbols)
    var mCounts = [Int](repeating: 0, count: FSE.mSymbols)
    var dCounts = [Int](repeating: 0, count: FSE.dSymbols)
    var literalCounts = [Int](repeating: 0, count: FSE.literalSymbols)
    let dSymbolOf = FSE.dSymbolOfValue
    for k in 0..<matchCount {
      lCounts[FSE.lSymbol(lValues[k])] += 1
      mCounts[FSE.mSymbol(mValues[k])] += 1
      dCounts[Int(dSymbolOf[distances[k]])] += 1
    }
    for byte in literals { literalCounts[Int(byte)] += 1 }
    let lFreq = FSE.normalize(lCounts, states: FSE.lStates)
    let mFreq = FSE.normalize(mCounts, states: FSE.mStates)
    let dFreq = FSE.normalize(dCounts, states: FSE.dStates)
    let literalFreq = FSE.normalize(literalCounts, states: FSE.literalStates)
    let lEnc = FSE.buildEncoder(states: FSE.lStates, frequencies: lFreq)
    let mEnc = FSE.buildEncoder(states: FSE.mStates, frequencies: mFreq)
    let dEnc = FSE.buildEncoder(states: FSE.dStates, frequencies: dFreq)
    let literalEnc = FSE.buildEncoder(states: FSE.literalStates, frequencies: literalFreq)
    let literals = self.literals
    let lValues = self.lValues
    let mValues = self.mValues

    return scratch.withUnsafeMutableBufferPointer { buffer -> Int in
      let b = buffer.baseAddress!
      // Frequencies, after the 32 bytes of fixed fields.
      var bits = ForwardBits(buffer: b, position: 32)
      for table in [lFreq, mFreq, dFreq, literalFreq] {
        for f in table {
          let v = Int(f)
          switch v {
          case 0...1: bits.push(2, UInt64(v << 1))
          case 2...3: bits.push(3, UInt64(1 | (v - 2) << 2))
          case 4...7: bits.push(5, UInt64(3 | (v - 4) << 3))
          case 8...23: bits.push(8, UInt64(7 | (v - 8) << 4))
          default: bits.push(14, UInt64(15 | (v - 24) << 4))
          }
          bits.flush()
        }
      }
      _ = bits.finish()
      let headerSize = bits.position

      // Literals, last first, four coders in turn.
      var literalBits = ForwardBits(buffer: b, position: headerSize)
      var s0 = 0
      var s1 = 0
      var s2 = 0
      var s3 = 0
      var k = literals.count
      let ls = FSE.literalStates
      while k > 0 {
        k -= 4
        FSE.encode(&s3, literalEnc[Int(literals[k + 3])], states: ls, into: &literalBits)
        FSE.encode(&s2, literalEnc[Int(literals[k + 2])], states: ls, into: &literalBits)
        FSE.encode(&s1, literalEnc[Int(literals[k + 1])], states: ls, into: &literalBits)
        FSE.encode(&s0, literalEnc[Int(literals[k])], states: ls, into: &literalBits)
        literalBits.flush()
      }
      let literalFinal = literalBits.finish()
      let literalPayload = literalBits.position - headerSize

      // Triples, last first: D, M, L, each extra bits then state bits. Eight zero bytes first
      // keep the decoder's look-behind within this payload.
      let lmdStart = literalBits.position
      for z in 0..<8 { b[lmdStart + z] = 0 }
      var lmdBits = ForwardBits(buffer: b, position: lmdStart + 8)
      var lState = 0
      var mState = 0
      var dState = 0
      var t = matchCount
      while t > 0 {
        t -= 1
        let d = distances[t]
        let dSymbol = Int(dSymbolOf[d])
        lmdBits.push(Int(FSE.dExtraBits[dSymbol]), UInt64(d - Int(FSE.dBase[dSymbol])))
        FSE.encode(&dState, dEnc[dSymbol], states: FSE.dStates, into: &lmdBits)
        let m = mValues[t]
        let mSymbol = FSE.mSymbol(m)
        lmdBits.push(Int(FSE.mExtraBits[mSymbol]), UInt64(m - Int(FSE.mBase[mSymbol])))
        FSE.encode(&mState, mEnc[mSymbol], states: FSE.mStates, into: &lmdBits)
        let l = lValues[t]
        let lSymbol = FSE.lSymbol(l)
        lmdBits.push(Int(FSE.lExtraBits[lSymbol]), UInt64(l - Int(FSE.lBase[lSymbol])))
        FSE.encode(&lState, lEnc[lSymbol], states: FSE.lStates, into: &lmdBits)
        lmdBits.flush()
      }
      let lmdFinal = lmdBits.finish()
      let lmdPayload = lmdBits.position - lmdStart

      // The fixed fields.
      let v0 =
        UInt64(literals.count) | UInt64(literalPayload) << 20 | UInt64(matchCount) << 40
        | UInt64(literalFinal + 7) << 60
      let v1 =
        UInt64(s0) | UInt64(s1) << 10 | UInt64(s2) << 20 | UInt64(s3) << 30 | UInt64(lmdPayload) << 40
        | UInt64(lmdFinal + 7) << 60
      let v2 = UInt64(headerSize) | UInt64(lState) << 32 | UInt64(mState) << 42 | UInt64(dState) << 52
      let fields: [UInt64] = [
        UInt64(BlockMagic.compressedV2) | UInt64(rawBytes) << 32, v0, v1, v2,
      ]
      for w in 0..<4 {
        for byte in 0..<8 {
          b[w * 8 + byte] = UInt8(truncatingIfNeeded: fields[w] >> UInt64(8 * byte))
        }
      }
      return lmdBits.position
    }
  }
}
