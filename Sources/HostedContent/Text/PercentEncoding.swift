/// RFC 3986: every byte but unreserved characters and `/` percent-encoded, so spaces, `#`, `%`
/// and `?` in a name stay part of the path (SARIF URIs, catalog URLs).
package func percentEncodedPath(_ path: String) -> String {
  let hex = Array("0123456789ABCDEF".utf8)
  var out = ""
  for byte in path.utf8 {
    switch byte {
    case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
      UInt8(ascii: "0")...UInt8(ascii: "9"),
      UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"), UInt8(ascii: "/"):
      out.unicodeScalars.append(Unicode.Scalar(byte))
    default:
      out += "%" + String(decoding: [hex[Int(byte >> 4)], hex[Int(byte & 0xF)]], as: UTF8.self)
    }
  }
  return out
}
