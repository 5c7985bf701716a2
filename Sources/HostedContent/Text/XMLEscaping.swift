/// Escapes text for XML that pkgtool writes by hand (plists, JUnit reports): `&`, `<`, `>`,
/// and in attributes also quotes. Control characters XML cannot carry are written as visible
/// `\u{…}` escapes when `showControls` is set.
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
      if showControls && c.value < 0x20 && c != "\n" && c != "\t" {
        out += "\\u{\(String(c.value, radix: 16))}"
      } else {
        out.unicodeScalars.append(c)
      }
    }
  }
  return out
}
