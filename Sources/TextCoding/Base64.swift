/// Standard base64 (RFC 4648): the project's one codec, for names the TOC stores with
/// `enctype="base64"`, property-list `<data>` and catalog keys and signatures.
package enum Base64 {
  private static let alphabet = Array(
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

  package static func encode(_ bytes: [UInt8]) -> String {
    var out: [UInt8] = []
    out.reserveCapacity((bytes.count + 2) / 3 * 4)
    var i = 0
    while i < bytes.count {
      let b0 = UInt32(bytes[i])
      let b1 = i + 1 < bytes.count ? UInt32(bytes[i + 1]) : 0
      let b2 = i + 2 < bytes.count ? UInt32(bytes[i + 2]) : 0
      let v = b0 << 16 | b1 << 8 | b2
      out.append(alphabet[Int(v >> 18 & 63)])
      out.append(alphabet[Int(v >> 12 & 63)])
      out.append(i + 1 < bytes.count ? alphabet[Int(v >> 6 & 63)] : UInt8(ascii: "="))
      out.append(i + 2 < bytes.count ? alphabet[Int(v & 63)] : UInt8(ascii: "="))
      i += 3
    }
    return String(decoding: out, as: UTF8.self)
  }

  /// Decodes, ignoring whitespace; nil if anything else is not base64. Without
  /// `requirePadding`, a final group may also lack its `=` (as property-list readers accept).
  package static func decode(_ text: String, requirePadding: Bool = true) -> [UInt8]? {
    var values: [UInt8] = []
    var padding = 0
    for c in text.utf8 {
      switch c {
      case UInt8(ascii: "A")...UInt8(ascii: "Z"): values.append(c - 65)
      case UInt8(ascii: "a")...UInt8(ascii: "z"): values.append(c - 97 + 26)
      case UInt8(ascii: "0")...UInt8(ascii: "9"): values.append(c - 48 + 52)
      case UInt8(ascii: "+"): values.append(62)
      case UInt8(ascii: "/"): values.append(63)
      case UInt8(ascii: "="): padding += 1
      case UInt8(ascii: " "), UInt8(ascii: "\n"), UInt8(ascii: "\r"), UInt8(ascii: "\t"): continue
      default: return nil
      }
      if padding > 0 && c != UInt8(ascii: "=") { return nil }
    }
    guard padding <= 2, !requirePadding || (values.count + padding) % 4 == 0 else { return nil }
    var out: [UInt8] = []
    var i = 0
    while i + 1 < values.count {
      let chunk = values[i..<min(i + 4, values.count)]
      var v: UInt32 = 0
      for (k, x) in chunk.enumerated() { v |= UInt32(x) << (18 - 6 * k) }
      out.append(UInt8(v >> 16 & 255))
      if chunk.count > 2 { out.append(UInt8(v >> 8 & 255)) }
      if chunk.count > 3 { out.append(UInt8(v & 255)) }
      i += 4
    }
    return out
  }

  /// As ``decode(_:)``, for text that must be canonical base64: only the 64 letters of the
  /// standard alphabet, a length that is a multiple of four, and `=` only as padding at the end
  /// (no white space, no line breaks): signatures and keys in signed documents, which every
  /// reader must take the same way.
  package static func decodeCanonical(_ text: String) -> [UInt8]? {
    let bytes = Array(text.utf8)
    guard bytes.count % 4 == 0 else { return nil }
    let padding = bytes.reversed().prefix { $0 == UInt8(ascii: "=") }.count
    guard padding <= 2 else { return nil }
    for byte in bytes.dropLast(padding) {
      switch byte {
      case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
        UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "+"), UInt8(ascii: "/"):
        continue
      default: return nil
      }
    }
    return decode(text)
  }

  /// Unpadded base64url (RFC 4648 §5, as JWS uses it, RFC 7515), strictly: only its 64 letters,
  /// no padding, no white space. Decoded straight from the bytes.
  package static func decodeURL(_ text: some Collection<UInt8>) -> [UInt8]? {
    guard text.count % 4 != 1 else { return nil }
    var out: [UInt8] = []
    out.reserveCapacity(text.count * 3 / 4)
    var accumulator: UInt32 = 0
    var bits = 0
    for byte in text {
      let value: UInt8
      switch byte {
      case UInt8(ascii: "A")...UInt8(ascii: "Z"): value = byte - 65
      case UInt8(ascii: "a")...UInt8(ascii: "z"): value = byte - 97 + 26
      case UInt8(ascii: "0")...UInt8(ascii: "9"): value = byte - 48 + 52
      case UInt8(ascii: "-"): value = 62
      case UInt8(ascii: "_"): value = 63
      default: return nil
      }
      accumulator = accumulator << 6 | UInt32(value)
      bits += 6
      if bits >= 8 {
        bits -= 8
        out.append(UInt8(truncatingIfNeeded: accumulator >> UInt32(bits)))
        accumulator &= (1 << UInt32(bits)) - 1
      }
    }
    return out
  }
}
