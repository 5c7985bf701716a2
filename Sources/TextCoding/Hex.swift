/// Lower-case hexadecimal, the project's one encoder and decoder: digests in a XAR TOC, in
/// catalogs and install records, in messages about bytes, signed-URL signatures.
package enum Hex {
  /// The value of one hex digit (either case), or nil.
  @inline(__always)
  package static func value(_ byte: UInt8) -> UInt8? {
    switch byte {
    case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
    case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte - UInt8(ascii: "a") + 10
    case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte - UInt8(ascii: "A") + 10
    default: return nil
    }
  }

  /// The bytes `text` spells in hex (two digits a byte, nothing else; upper-case digits only
  /// when `lowerCaseOnly` is false); nil otherwise.
  package static func bytes(_ text: some StringProtocol, lowerCaseOnly: Bool = false) -> [UInt8]? {
    let digits = Array(text.utf8)
    guard digits.count % 2 == 0 else { return nil }
    var out: [UInt8] = []
    out.reserveCapacity(digits.count / 2)
    var i = 0
    while i < digits.count {
      if lowerCaseOnly,
        digits[i] >= UInt8(ascii: "A") && digits[i] <= UInt8(ascii: "F")
          || digits[i + 1] >= UInt8(ascii: "A") && digits[i + 1] <= UInt8(ascii: "F")
      {
        return nil
      }
      guard let high = value(digits[i]), let low = value(digits[i + 1]) else { return nil }
      out.append(high << 4 | low)
      i += 2
    }
    return out
  }
}

/// Lower-case hex of `bytes`.
package func hexString(_ bytes: some Sequence<UInt8>) -> String {
  let bytes = Array(bytes)
  var out = [UInt8]()
  out.reserveCapacity(bytes.count * 2)
  bytes.withUnsafeBytes { appendHex($0, to: &out) }
  return String(decoding: out, as: UTF8.self)
}

/// Appends `bytes` in lower-case hex to `out`.
package func appendHex(_ bytes: UnsafeRawBufferPointer, to out: inout [UInt8]) {
  let digits: StaticString = "0123456789abcdef"
  digits.withUTF8Buffer { digits in
    for b in bytes {
      out.append(digits[Int(b >> 4)])
      out.append(digits[Int(b & 15)])
    }
  }
}
