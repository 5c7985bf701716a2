/// The one escape of what pkgtool shows of a name or a text that may come from a hostile
/// package: a control character is written as a visible `\u{…}` escape, so it can neither
/// rewrite a terminal nor split a line of a report.
package enum DisplayEscaping {
  /// What is escaped besides the C0 controls (U+0000–U+001F) and DEL.
  package struct Policy: Sendable {
    /// The C1 controls (U+0080–U+009F), which some terminals obey (CSI is U+009B).
    package var c1Controls: Bool
    /// Line feed and tab kept as they are (multi-line text), not escaped.
    package var keepsLinesAndTabs: Bool

    /// One line for the terminal: C0, DEL and C1 escaped.
    package static let terminalLine = Policy(c1Controls: true, keepsLinesAndTabs: false)
    /// Text of several lines for the terminal: as ``terminalLine``, newline and tab kept.
    package static let terminalText = Policy(c1Controls: true, keepsLinesAndTabs: true)
    /// A codec's message (the XAR writer's, the TOC's names): C0 and DEL escaped.
    package static let message = Policy(c1Controls: false, keepsLinesAndTabs: false)
  }

  /// Whether the scalar `value` is escaped under `policy`.
  @inline(__always)
  package static func escapes(_ value: UInt32, _ policy: Policy) -> Bool {
    if value < 0x20 { return !(policy.keepsLinesAndTabs && (value == 0x0A || value == 0x09)) }
    return value == 0x7F || (policy.c1Controls && (0x80..<0xA0).contains(value))
  }

  /// The visible form of the scalar `value`: `\u{1b}`.
  package static func escape(_ value: UInt32) -> String { "\\u{\(String(value, radix: 16))}" }

  /// `text` with what `policy` escapes written as escapes.
  package static func escaped(_ text: String, _ policy: Policy) -> String {
    // Most text has nothing to escape: leave it as it is. (A C1 control starts with 0xC2 in
    // UTF-8; so do other characters, which the full pass then keeps.)
    guard
      text.utf8.contains(where: {
        ($0 < 0x20 && !(policy.keepsLinesAndTabs && ($0 == 0x0A || $0 == 0x09))) || $0 == 0x7F
          || (policy.c1Controls && $0 == 0xC2)
      })
    else { return text }
    var out = ""
    out.unicodeScalars.reserveCapacity(text.unicodeScalars.count)
    for scalar in text.unicodeScalars {
      if escapes(scalar.value, policy) {
        out += escape(scalar.value)
      } else {
        out.unicodeScalars.append(scalar)
      }
    }
    return out
  }
}

extension String {
  /// The string with control characters (C0 and DEL) shown as escapes, safe to print on one
  /// line: the codecs' messages.
  package var debugEscaped: String { DisplayEscaping.escaped(self, .message) }

  /// Control characters (C0, DEL and C1) escaped, so a hostile name cannot rewrite the terminal.
  package var debugEscapedForTerminal: String { DisplayEscaping.escaped(self, .terminalLine) }
}
