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
  var scratch = [UInt8](repeating: 0, count: StreamEncoder.maxBlockBytes)

  /// Match finder settings: the table has `1 << bucketBits` buckets of `ways` entries (a power
  /// of two; 512 KiB in all, which stays in a core's cache); the length that is good enough to
  /// stop looking.
  static let bucketBits = 11
  static let ways = 32
  static let niceLength = 192
  /// Matches this long are taken at once, without looking for a longer one a byte later.
  static let lazyLength = 32
  /// After every `1 << skipShift` bytes without a match the search moves one byte further, up
  /// to `maxSkip` bytes skipped per step.
  static let skipShift = 7
  static let maxSkip = 8

  init(src: UnsafeBufferPointer<UInt8>) {
    self.src = src
    lValues.reserveCapacity(FSE.maxMatchesPerBlock)
    mValues.reserveCapacity(FSE.maxMatchesPerBlock)
    dValues.reserveCapacity(FSE.maxMatchesPerBlock)
    literals.reserveCapacity(FSE.maxLiteralsPerBlock + 4)
  }

  /// Finds the matches of the whole input and appends its blocks to `out`.
  ///
  /// The table keeps, for each hash of four input bytes, the last ``ways`` positions that had it
  /// together with those four bytes: a candidate is rejected without reading the input at it
  /// (which would miss the cache), and each position costs one cache line of the table.
  /// Positions are kept as 32-bit values: past 2 GiB of input no more matches are found (the
  /// output stays correct, it just compresses less).
  mutating func run(into out: inout [UInt8]) {
    let n = src.count
    guard n > 0, let p = src.baseAddress else { return }
    let ways = Self.ways
    let slots = ways << Self.bucketBits
    // Each entry: the position in the low 32 bits (Int32.min when empty: too far to be used),
    // the four bytes at it in the high ones. Each bucket is a ring: `next` says where its next
    // entry goes, so the newest is just before it and the oldest at it.
    let table = UnsafeMutablePointer<UInt64>.allocate(capacity: slots)
    defer { table.deallocate() }
    table.initialize(repeating: UInt64(UInt32(bitPattern: Int32.min)), count: slots)
    let next = UnsafeMutablePointer<UInt8>.allocate(capacity: 1 << Self.bucketBits)
    defer { next.deallocate() }
    next.initialize(repeating: 0, count: 1 << Self.bucketBits)
    let last = n - 4  // the last position with four bytes to hash
    var literalStart = 0
    var i = 0
    var inserted = 0  // positions below this are in the table

    @inline(__always) func load32(_ at: Int) -> UInt32 {
      UnsafeRawPointer(p + at).loadUnaligned(as: UInt32.self)
    }

    @inline(__always) func bucket(_ word: UInt32) -> Int {
      Int((word &* 2_654_435_761) >> UInt32(32 - Self.bucketBits))
    }

    /// Puts `at` in its bucket in place of the oldest entry.
    @inline(__always) func insert(_ at: Int, _ word: UInt32, into h: Int) {
      let slot = Int(next[h])
      table[h &* ways &+ slot] = UInt64(UInt32(truncatingIfNeeded: at)) | UInt64(word) << 32
      next[h] = UInt8(truncatingIfNeeded: (slot &+ 1) & (ways - 1))
    }

    /// The longest earlier match at `at` (length 0 when none of 4 bytes or more); inserts `at`.
    @inline(__always) func best(_ at: Int) -> (length: Int, distance: Int) {
      let first = load32(at)
      let h = bucket(first)
      let b = table + h &* ways
      let newest = Int(next[h]) &+ ways &- 1
      let maxLength = n - at
      var bestLength = 3
      var bestDistance = 0
      var w = 0
      while w < ways {
        let entry = b[(newest &- w) & (ways - 1)]
        w += 1
        let candidate = Int(Int32(truncatingIfNeeded: entry))
        let distance = at - candidate
        // Newest first: the rest are farther still.
        if distance > FSE.maxD { break }
        if UInt32(truncatingIfNeeded: entry >> 32) != first { continue }
        if bestLength > 3 && p[candidate + bestLength] != p[at + bestLength] { continue }
        var length = 4
        var mismatch = false
        while length + 8 <= maxLength {
          let a = UnsafeRawPointer(p + at + length).loadUnaligned(as: UInt64.self)
          let c = UnsafeRawPointer(p + candidate + length).loadUnaligned(as: UInt64.self)
          if a != c {
            length += (a ^ c).trailingZeroBitCount >> 3
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
      insert(at, first, into: h)
      return bestDistance == 0 ? (0, 0) : (bestLength, bestDistance)
    }

    while i <= last {
      var (length, distance) = best(i)
      inserted = i + 1
      if length == 0 {
        // Long runs without a match (compressed media) are searched sparser and sparser.
        i += 1 + min((i - literalStart) >> Self.skipShift, Self.maxSkip)
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
        let word = load32(k)
        insert(k, word, into: bucket(word))
        k += 1
      }
      inserted = max(inserted, insertEnd)
      i = end
      literalStart = end
    }
    let literalsLeft = n - literalStart
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
    var previous = 0
    for k in 0..<matchCount {
      var d = dValues[k]
      if mValues[k] == 0 { d = previous != 0 ? previous : 1 }
      if d == previous {
        dValues[k] = 0
      } else {
        dValues[k] = d
        previous = d
      }
    }
    return lValues.withUnsafeBufferPointer { l in
      mValues.withUnsafeBufferPointer { m in
        dValues.withUnsafeBufferPointer { d in
          literals.withUnsafeBufferPointer { literals in
            scratch.withUnsafeMutableBufferPointer { out in
              Self.encodeBlock(
                rawBytes: rawBytes, l: l.baseAddress!, m: m.baseAddress!, d: d.baseAddress!, matchCount: matchCount,
                literals: literals, into: out.baseAddress!)
            }
          }
        }
      }
    }
  }

  /// The most a bvx2 block takes: its header (32 bytes of fields, at most 360 frequencies of
  /// 14 bits), literals of at most 10 bits each, eight zero bytes, triples of at most 54 bits
  /// (L 6 + 8, M 6 + 11, D 8 + 15), and eight bytes of room for the last word-wide store.
  static let maxBlockBytes =
    32 + (FSE.allSymbols * 14 + 7) / 8 + (FSE.maxLiteralsPerBlock + 4) * 10 / 8 + 8 + FSE.maxMatchesPerBlock * 54 / 8
    + 1 + 8

  /// Encodes one block of `matchCount` triples (distances already as written: 0 for a repeat)
  /// and its `literals` (a multiple of 4) into `b`; returns its size.
  static func encodeBlock(
    rawBytes: Int, l: UnsafePointer<Int>, m: UnsafePointer<Int>, d: UnsafePointer<Int>, matchCount: Int,
    literals: UnsafeBufferPointer<UInt8>, into b: UnsafeMutablePointer<UInt8>
  ) -> Int {
    // Symbol counts (the literals' in four tables, so that runs of one byte do not wait on
    // themselves), then frequencies: all 360 in one buffer, L, M, D, literals.
    let counts = UnsafeMutablePointer<Int>.allocate(capacity: FSE.allSymbols + 3 * FSE.literalSymbols)
    defer { counts.deallocate() }
    counts.initialize(repeating: 0, count: FSE.allSymbols + 3 * FSE.literalSymbols)
    let lCounts = counts
    let mCounts = lCounts + FSE.lSymbols
    let dCounts = mCounts + FSE.mSymbols
    let literalCounts = dCounts + FSE.dSymbols
    FSE.dSymbolOfValue.withUnsafeBufferPointer { dSymbolOf in
      for k in 0..<matchCount {
        lCounts[FSE.lSymbol(l[k])] &+= 1
        mCounts[FSE.mSymbol(m[k])] &+= 1
        dCounts[Int(dSymbolOf[d[k]])] &+= 1
      }
    }
    var k = 0
    while k < literals.count {
      literalCounts[Int(literals[k])] &+= 1
      literalCounts[FSE.literalSymbols + Int(literals[k + 1])] &+= 1
      literalCounts[2 * FSE.literalSymbols + Int(literals[k + 2])] &+= 1
      literalCounts[3 * FSE.literalSymbols + Int(literals[k + 3])] &+= 1
      k += 4
    }
    for symbol in 0..<FSE.literalSymbols {
      for table in 1..<4 { literalCounts[symbol] &+= literalCounts[table * FSE.literalSymbols + symbol] }
    }
    let frequencies = UnsafeMutableBufferPointer<UInt16>.allocate(capacity: FSE.allSymbols)
    defer { frequencies.deallocate() }
    let lFreq = UnsafeMutableBufferPointer(rebasing: frequencies[0..<FSE.lSymbols])
    let mFreq = UnsafeMutableBufferPointer(rebasing: frequencies[FSE.lSymbols..<(FSE.lSymbols + FSE.mSymbols)])
    let dFreq = UnsafeMutableBufferPointer(
      rebasing: frequencies[(FSE.lSymbols + FSE.mSymbols)..<(FSE.allSymbols - FSE.literalSymbols)])
    let literalFreq = UnsafeMutableBufferPointer(
      rebasing: frequencies[(FSE.allSymbols - FSE.literalSymbols)..<FSE.allSymbols])
    FSE.normalize(UnsafeBufferPointer(start: lCounts, count: FSE.lSymbols), states: FSE.lStates, into: lFreq)
    FSE.normalize(UnsafeBufferPointer(start: mCounts, count: FSE.mSymbols), states: FSE.mStates, into: mFreq)
    FSE.normalize(UnsafeBufferPointer(start: dCounts, count: FSE.dSymbols), states: FSE.dStates, into: dFreq)
    FSE.normalize(
      UnsafeBufferPointer(start: literalCounts, count: FSE.literalSymbols), states: FSE.literalStates,
      into: literalFreq)
    let encoders = UnsafeMutablePointer<FSE.EncoderEntry>.allocate(capacity: FSE.allSymbols)
    defer { encoders.deallocate() }
    let lEnc = encoders
    let mEnc = lEnc + FSE.lSymbols
    let dEnc = mEnc + FSE.mSymbols
    let literalEnc = dEnc + FSE.dSymbols
    FSE.buildEncoder(
      states: FSE.lStates, frequencies: UnsafeBufferPointer(lFreq), extraBits: FSE.lExtraBits,
      bases: FSE.lBase, into: lEnc)
    FSE.buildEncoder(
      states: FSE.mStates, frequencies: UnsafeBufferPointer(mFreq), extraBits: FSE.mExtraBits,
      bases: FSE.mBase, into: mEnc)
    FSE.buildEncoder(
      states: FSE.dStates, frequencies: UnsafeBufferPointer(dFreq), extraBits: FSE.dExtraBits,
      bases: FSE.dBase, into: dEnc)
    FSE.buildEncoder(states: FSE.literalStates, frequencies: UnsafeBufferPointer(literalFreq), into: literalEnc)

    // Frequencies, after the 32 bytes of fixed fields.
    var bits = ForwardBits(buffer: b, position: 32)
    for f in frequencies {
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
    _ = bits.finish()
    let headerSize = bits.position

    // Literals, last first, four coders in turn.
    var literalBits = ForwardBits(buffer: b, position: headerSize)
    var s0 = 0
    var s1 = 0
    var s2 = 0
    var s3 = 0
    k = literals.count
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
    FSE.dSymbolOfValue.withUnsafeBufferPointer { dSymbolOf in
      var t = matchCount
      while t > 0 {
        t -= 1
        let dValue = d[t]
        let dEntry = dEnc[Int(dSymbolOf[dValue])]
        lmdBits.push(Int(dEntry.extraBits), UInt64(truncatingIfNeeded: dValue &- Int(dEntry.base)))
        FSE.encode(&dState, dEntry, states: FSE.dStates, into: &lmdBits)
        let mValue = m[t]
        let mEntry = mEnc[FSE.mSymbol(mValue)]
        lmdBits.push(Int(mEntry.extraBits), UInt64(truncatingIfNeeded: mValue &- Int(mEntry.base)))
        FSE.encode(&mState, mEntry, states: FSE.mStates, into: &lmdBits)
        let lValue = l[t]
        let lEntry = lEnc[FSE.lSymbol(lValue)]
        lmdBits.push(Int(lEntry.extraBits), UInt64(truncatingIfNeeded: lValue &- Int(lEntry.base)))
        FSE.encode(&lState, lEntry, states: FSE.lStates, into: &lmdBits)
        lmdBits.flush()
      }
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
    let fields = [UInt64(BlockMagic.compressedV2) | UInt64(rawBytes) << 32, v0, v1, v2]
    for (w, field) in fields.enumerated() {
      UnsafeMutableRawPointer(b + w * 8).storeBytes(of: field.littleEndian, as: UInt64.self)
    }
    return lmdBits.position
  }
}
