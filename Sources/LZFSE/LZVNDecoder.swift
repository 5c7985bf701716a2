// LZVN, the byte-oriented LZ format of `bvxn` blocks (Apple's choice for small inputs).

/// Decodes the LZVN opcodes in `src[from..<to]` into `dst[at..<end]` and returns where the output
/// ended. Matches may reach back to the start of the whole output (earlier blocks). The payload
/// must end with the 8-byte end-of-stream opcode exactly at `to`, and fill the output exactly
/// (which must not be empty).
func decodeLZVN(
  src: UnsafePointer<UInt8>, from: Int, to: Int, dst: UnsafeMutablePointer<UInt8>, at: Int, end: Int
) throws(LZFSE.DecodeError) -> Int {
  // Apple's decoder does not even start a block that declares no output: it refuses it.
  guard end > at else { throw .sizeMismatch }
  var s = from
  var o = at
  var distance = 0
  while true {
    guard s < to else { throw .damagedPayload }
    let op = Int(src[s])
    var literal = 0
    var match = 0
    var length = 1
    switch op {
    case 0x06:
      // End of stream: 8 bytes, the block's last.
      guard to - s == 8 else { throw .damagedPayload }
      guard o == end else { throw .sizeMismatch }
      return o
    case 0x0e, 0x16:
      // No operation.
      guard to - s > 1 else { throw .damagedPayload }
      s += 1
      continue
    case 0x1e, 0x26, 0x2e, 0x36, 0x3e, 0x70...0x7f, 0xd0...0xdf:
      throw .damagedPayload
    case 0xe0:
      guard to - s > 2 else { throw .damagedPayload }
      length = 2
      literal = Int(src[s + 1]) + 16
    case 0xe1...0xef:
      literal = op & 0xf
    case 0xf0:
      guard to - s > 2 else { throw .damagedPayload }
      length = 2
      match = Int(src[s + 1]) + 16
    case 0xf1...0xff:
      match = op & 0xf
    case 0xa0...0xbf:
      // Medium distance: 101LLMMM DDDDDDMM DDDDDDDD.
      length = 3
      literal = (op >> 3) & 3
      guard to - s > length + literal else { throw .damagedPayload }
      let next = load16(src, s + 1)
      match = (((op & 7) << 2) | (next & 3)) + 3
      distance = next >> 2
    default:
      // LLMMMDDD: small distance (DDD 0-5, one more byte), previous distance (110), large (111).
      literal = op >> 6
      match = ((op >> 3) & 7) + 3
      switch op & 7 {
      case 6:
        length = 1
      case 7:
        length = 3
        guard to - s > length + literal else { throw .damagedPayload }
        distance = load16(src, s + 1)
      default:
        length = 2
        guard to - s > length + literal else { throw .damagedPayload }
        distance = ((op & 7) << 8) | Int(src[s + 1])
      }
    }
    // Every opcode must leave at least one byte (the next opcode) after its literal.
    guard to - s > length + literal else { throw .damagedPayload }
    guard literal + match <= end - o else { throw .sizeMismatch }
    if literal > 0 {
      (dst + o).update(from: src + s + length, count: literal)
      o += literal
    }
    s += length + literal
    if match > 0 {
      guard distance > 0, distance <= o else { throw .badDistance }
      copyMatch(dst, at: o, distance: distance, length: match)
      o += match
    }
  }
}
