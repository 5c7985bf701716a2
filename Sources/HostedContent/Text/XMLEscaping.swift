/// Escapes text for XML that pkgtool writes by hand (plists, JUnit reports): `&`, `<`, `>`,
/// and in attributes also quotes. Characters XML 1.0 cannot carry at all (C0 controls other than
/// tab, LF and CR; U+FFFE, U+FFFF) never reach the output: with `showControls` they are written
/// as visible `\u{…}` escapes, otherwise replaced by U+FFFD.
func escapeXML(_ text: String, attribute: Bool = false, showControls: Bool = false) -> String {
  var out = ""
  for c in text.unicodeScalars {
    switch c {
    case "&": out += "&amp;"
    case "<": out += "&lt;"
    case ">": out += "&gt;"
    case "\r": out += "&#13;"  // a raw CR would be read back as LF
    case "\"" where attribute: out += "&quot;"
    case "'" where attribute: out += "&apos;"
    default:
      let forbidden = (c.value < 0x20 && c != "\n" && c != "\t") || c.value == 0xFFFE || c.value == 0xFFFF
      if forbidden || (showControls && (c.value == 0x7F || (0x80..<0xA0).contains(c.value))) {
        if showControls {
          out += "\\u{\(String(c.value, radix: 16))}"
        } else {
          out.unicodeScalars.append("\u{FFFD}")
        }
      } else {
        out.unicodeScalars.append(c)
      }
    }
  }
  return out
}
