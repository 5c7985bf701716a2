// Finite state entropy coding as LZFSE uses it: the symbol alphabets and their extra bits, the
// frequency tables, the state machines of decoder and encoder, and the two bit streams (the
// encoder writes forwards, the decoder reads the same bits backwards from the end).

/// The constants of the LZFSE format and the FSE machinery both directions share.
enum FSE {
  /// Number of states of the literal-length (L) coder.
  static let lStates = 64
  /// Number of states of the match-length (M) coder.
  static let mStates = 64
  /// Number of states of the match-distance (D) coder.
  static let dStates = 256
  /// Number of states of each of the four literal coders.
  static let literalStates = 1024
  /// Number of symbols of each alphabet.
  static let lSymbols = 20
  static let mSymbols = 20
  static let dSymbols = 64
  static let literalSymbols = 256
  /// All frequencies of a block header, in the order they are stored: L, M, D, literals.
  static let allSymbols = lSymbols + mSymbols + dSymbols + literalSymbols

  /// A block holds at most this many matches and (after padding to a multiple of 4) literals.
  static let maxMatchesPerBlock = 10_000
  static let maxLiteralsPerBlock = 40_000
  /// Largest L, M and D one L/M/D triple can carry.
  static let maxL = 315
  static let maxM = 2359
  static let maxD = 262_139

  /// Extra (raw) bits of each L symbol; the symbol's base follows from these.
  static let lExtraBits: [UInt8] = Array(repeating: 0, count: 16) + [2, 3, 5, 8]
  /// Extra bits of each M symbol.
  static let mExtraBits: [UInt8] = Array(repeating: 0, count: 16) + [3, 5, 8, 11]
  /// Extra bits of each D symbol: four symbols per bit count 0...15.
  static let dExtraBits: [UInt8] = (0..<64).map { UInt8($0 / 4) }

  static let lBase = bases(lExtraBits)
  static let mBase = bases(mExtraBits)
  static let dBase = bases(dExtraBits)

  /// Each symbol's base value: the first symbol starts at 0, every next one where the range of
  /// the previous one (its base plus 2^extra bits) ends.
  static func bases(_ extra: [UInt8]) -> [Int32] {
    var result: [Int32] = []
    var next: Int32 = 0
    for bits in extra {
      result.append(next)
      next += Int32(1) << Int32(bits)
    }
    return result
  }

  /// The symbol of each D value below 2^18, for the encoder.
  static let dSymbolOfValue: [UInt8] = {
    var table = [UInt8](repeating: 0, count: maxD + 1)
    for symbol in 0..<dSymbols {
      let low = Int(dBase[symbol])
      let high = min(maxD, low + (1 << Int(dExtraBits[symbol])) - 1)
      if low <= high { for value in low...high { table[value] = UInt8(symbol) } }
    }
    return table
  }()

  /// The L symbol of a literal length in 0...315.
  @inline(__always) static func lSymbol(_ value: Int) -> Int {
    if value < 16 { return value }
    if value < 20 { return 16 }
    if value < 28 { return 17 }
    if value < 60 { return 18 }
    return 19
  }

  /// The M symbol of a match length in 0...2359.
  @inline(__always) static func mSymbol(_ value: Int) -> Int {
    if value < 16 { return value }
    if value < 24 { return 16 }
    if value < 56 { return 17 }
    if value < 312 { return 18 }
    return 19
  }

  /// `floor(log2(states)) - floor(log2(frequency))`: how many bits a state of a symbol with this
  /// frequency reads at most.
  @inline(__always) static func shift(states: Int, frequency: Int) -> Int {
    frequency.leadingZeroBitCount - states.leadingZeroBitCount
  }

  /// Calls `entry(index, symbol, bits, next)` for each of the `states` decoder states, in order:
  /// a symbol of frequency f holds f consecutive states, the first of which read `k` bits (the
  /// shift) and the rest `k - 1`, and `next` is the base the bits read are added to. The
  /// frequencies must sum to `states` (the caller checked); no more than `states` are made.
  @inline(__always) static func forEachState(
    states: Int, frequencies: UnsafeBufferPointer<UInt16>, _ entry: (Int, Int, Int, Int) -> Void
  ) {
    var index = 0
    for symbol in 0..<frequencies.count {
      let f = Int(frequencies[symbol])
      if f == 0 { continue }
      let k = shift(states: states, frequency: f)
      let firstShort = ((2 * states) >> k) - f
      for j in 0..<f where index < states {
        if j < firstShort {
          entry(index, symbol, k, ((f + j) << k) - states)
        } else {
          entry(index, symbol, k - 1, (j - firstShort) << (k - 1))
        }
        index += 1
      }
    }
  }

  /// Fills `table` (one entry per state) for the literal coder: bits to read in the low byte,
  /// the symbol in the next byte, the base of the next state in the high half.
  static func buildLiteralDecoder(
    states: Int, frequencies: UnsafeBufferPointer<UInt16>, into table: UnsafeMutablePointer<UInt32>
  ) {
    forEachState(states: states, frequencies: frequencies) { index, symbol, bits, next in
      table[index] = UInt32(bits) | UInt32(symbol) << 8 | UInt32(truncatingIfNeeded: next) << 16
    }
  }

  /// Fills `table` for an L, M or D coder: each entry packs the bits to read (state bits plus
  /// extra bits) in bits 0-7, the extra bits in 8-15, the next state's base in 16-31 and the
  /// symbol's base value in the high 32 bits.
  static func buildValueDecoder(
    states: Int, frequencies: UnsafeBufferPointer<UInt16>, extraBits: [UInt8], bases: [Int32],
    into table: UnsafeMutablePointer<UInt64>
  ) {
    forEachState(states: states, frequencies: frequencies) { index, symbol, bits, next in
      let extra = UInt64(extraBits[symbol])
      let base = UInt64(UInt32(bitPattern: bases[symbol]))
      table[index] = (UInt64(bits) + extra) | extra << 8 | UInt64(next & 0xffff) << 16 | base << 32
    }
  }

  /// Scales symbol counts to frequencies summing to `states` into `freq` (as many as
  /// `counts`): every symbol that occurs gets at least 1. All zero when nothing occurs.
  /// Deterministic.
  static func normalize(_ counts: UnsafeBufferPointer<Int>, states: Int, into freq: UnsafeMutableBufferPointer<UInt16>)
  {
    let total = counts.reduce(0, +)
    var sum = 0
    for symbol in 0..<counts.count {
      let count = counts[symbol]
      guard count > 0 else {
        freq[symbol] = 0
        continue
      }
      let scaled = max(1, (count * states + total / 2) / total)
      freq[symbol] = UInt16(scaled)
      sum += scaled
    }
    guard total > 0 else { return }
    // Give the difference to (or take it from) the most frequent symbols, which it costs least.
    while sum != states {
      var largest = 0
      for symbol in 1..<freq.count where freq[symbol] > freq[largest] { largest = symbol }
      let most = Int(freq[largest])
      if sum < states {
        freq[largest] = UInt16(most + states - sum)
        sum = states
      } else {
        let take = min(sum - states, max(1, most / 4), most - 1)
        freq[largest] = UInt16(most - take)
        sum -= take
      }
    }
  }

  /// The encoder's view of one symbol: a state `s` of the coder (0 ..< states) reads
  /// `k - 1` bits below `threshold` and `k` bits from it on, and the state before it is
  /// `delta + ((s + states) >> bits)`; for L, M and D, the symbol's extra bits and base value
  /// too. Unused symbols keep zeros.
  struct EncoderEntry {
    var k: Int32 = 0
    var threshold: Int32 = 0
    var delta: Int32 = 0
    var extraBits: Int32 = 0
    var base: Int32 = 0
  }

  /// One encoder entry per symbol into `table` (unused symbols get zeros). `states` must be the
  /// coder's state count and the frequencies sum to it; `extraBits` and `bases` are the
  /// alphabet's (none for literals).
  static func buildEncoder(
    states: Int, frequencies: UnsafeBufferPointer<UInt16>, extraBits: [UInt8] = [], bases: [Int32] = [],
    into table: UnsafeMutablePointer<EncoderEntry>
  ) {
    var offset = 0
    for symbol in 0..<frequencies.count {
      let f = Int(frequencies[symbol])
      guard f > 0 else {
        table[symbol] = EncoderEntry()
        continue
      }
      let k = shift(states: states, frequency: f)
      // The symbol's first state (offset) less f: the state reached is offset plus the
      // position of `s + states` among the f values it maps to.
      table[symbol] = EncoderEntry(
        k: Int32(k), threshold: Int32((f << k) - states), delta: Int32(offset - f),
        extraBits: extraBits.isEmpty ? 0 : Int32(extraBits[symbol]), base: bases.isEmpty ? 0 : bases[symbol])
      offset += f
    }
  }

  /// Encodes a symbol: writes the low bits of `state` the decoder will read back, and moves
  /// `state` to the state whose decoding yields the symbol and then that old state.
  @inline(__always) static func encode(
    _ state: inout Int, _ entry: EncoderEntry, states: Int, into out: inout ForwardBits
  ) {
    let s = state
    let bits = Int(entry.k) &- (s < Int(entry.threshold) ? 1 : 0)
    out.push(bits, UInt64(truncatingIfNeeded: s & ((1 &<< bits) &- 1)))
    state = Int(entry.delta) &+ ((s &+ states) &>> bits)
  }
}

/// Bits written forwards into a byte buffer (least significant first); the decoder reads them
/// back from the end.
struct ForwardBits {
  var accumulator: UInt64 = 0
  var count = 0
  let buffer: UnsafeMutablePointer<UInt8>
  var position: Int

  init(buffer: UnsafeMutablePointer<UInt8>, position: Int) {
    self.buffer = buffer
    self.position = position
  }

  /// Appends the `n` low bits of `value` (which has no higher bits). At most 64 bits may be
  /// pending between flushes.
  @inline(__always) mutating func push(_ n: Int, _ value: UInt64) {
    accumulator |= value &<< UInt64(truncatingIfNeeded: count)
    count &+= n
  }

  /// Writes the whole bytes pending. Stores eight bytes at once: the buffer must have eight
  /// bytes of room past what is written.
  @inline(__always) mutating func flush() {
    let bytes = count &>> 3
    UnsafeMutableRawPointer(buffer + position).storeBytes(of: accumulator.littleEndian, as: UInt64.self)
    accumulator = bytes == 8 ? 0 : accumulator &>> UInt64(truncatingIfNeeded: bytes &<< 3)
    position &+= bytes
    count &-= bytes &<< 3
  }

  /// Writes what is left, padding the last byte with zeros; returns the number of bits of that
  /// last byte left unused, negated (0 through -7), which the block header records.
  mutating func finish() -> Int {
    flush()
    guard count > 0 else { return 0 }
    buffer[position] = UInt8(truncatingIfNeeded: accumulator)
    position += 1
    let unused = 8 - count
    accumulator = 0
    count = 0
    return -unused
  }
}

/// Bits read backwards from the end of a byte range, the way Apple's decoder does on 64-bit
/// machines: the accumulator holds 56 to 63 bits after each refill, and a refill that would need
/// bytes before `floor` fails (the decoder refuses such a block, as the reference does).
struct BackwardBits {
  var accumulator: UInt64 = 0
  var count = 0
  let base: UnsafePointer<UInt8>
  var next: Int
  let floor: Int

  /// Starts reading at `end` (exclusive); `finalBits` (-7 through 0 from a v2 header) tells how
  /// many bits of the last byte are unused. Nil when the stream is malformed there.
  init?(base: UnsafePointer<UInt8>, end: Int, floor: Int, finalBits: Int) {
    self.base = base
    self.floor = floor
    let bytes = finalBits != 0 ? 8 : 7
    guard finalBits >= -8, finalBits <= 0, end - floor >= bytes else { return nil }
    next = end - bytes
    var a: UInt64 = 0
    for i in 0..<bytes { a |= UInt64(base[next + i]) << UInt64(8 * i) }
    accumulator = a
    count = bytes * 8 + finalBits
    guard count >= 56, count < 64, accumulator >> UInt64(count) == 0 else { return nil }
  }

  /// Loads whole bytes until 56 to 63 bits are held; false when that would read before `floor`.
  @inline(__always) mutating func refill() -> Bool {
    let bits = (63 - count) & ~7
    let bytes = bits >> 3
    guard next - bytes >= floor else { return false }
    next -= bytes
    var incoming: UInt64 = 0
    for i in 0..<bytes { incoming |= UInt64(base[next + i]) &<< UInt64(8 * i) }
    accumulator = (accumulator &<< UInt64(bits)) | incoming
    count += bits
    return true
  }

  /// Takes the next `n` bits (at most those held; the callers' refills guarantee it).
  @inline(__always) mutating func pull(_ n: Int) -> UInt64 {
    count -= n
    let result = accumulator &>> UInt64(count)
    accumulator &= (UInt64(1) &<< UInt64(count)) &- 1
    return result
  }
}
