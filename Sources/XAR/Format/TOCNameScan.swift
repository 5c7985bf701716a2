import SystemIO

/// Whether a TOC could name an entry `name`, judged from the TOC's XML bytes alone, without
/// parsing them: much faster than the parse, so a reader can know early that no entry has that
/// name while the parser is still far from the end.
///
/// The answer is conservative. "Cannot" is given only when the bytes leave no way for the
/// parser (``TOCParser`` over libxml2) to make that name:
/// - the document is UTF-8: it starts with an XML declaration that names no other encoding;
/// - no character reference (`&#`), CDATA section, comment or DOCTYPE (`<!`), or processing
///   instruction (`<?`) past the declaration: each could spell the name, or split it;
/// - no `base64` (a name stored with `enctype="base64"`);
/// - every `<name>` element holds text alone, up to its `</name>` (a child element would be
///   skipped and the text around it joined);
/// - and `name` appears nowhere in the bytes.
///
/// Anything else gives "may", and the caller waits for the parse. Feed the document in pieces
/// of any size (``feed(_:)``), then ``finish()``.
package struct TOCNameScan {
  /// The answer so far.
  package enum Verdict: Equatable, Sendable {
    /// Some entry may have the name (or the bytes are of a kind the scan does not judge).
    case may
    /// No entry of a TOC with these bytes can have the name.
    case cannot
  }

  private let name: [UInt8]
  /// Bytes not yet judged (a pattern or a `<name>` element may straddle two pieces).
  private var pending: [UInt8] = []
  private var sawDeclaration = false
  private var decided: Verdict?
  /// The most bytes held back for one unfinished `<name>` element; past it, "may".
  private static let maxHeld = 64 * 1024

  private static let forbidden: [[UInt8]] = ["&#", "<!", "<?", "base64"].map { Array($0.utf8) }
  private static let nameOpen = Array("<name".utf8)
  private static let nameClose = Array("</name>".utf8)

  package init(name: String) {
    self.name = Array(name.utf8)
  }

  /// Judges the next bytes of the document; nil while no answer is certain yet.
  @discardableResult
  package mutating func feed(_ bytes: UnsafeRawBufferPointer) -> Verdict? {
    guard decided == nil else { return decided }
    pending.append(contentsOf: bytes)
    judge(final: false)
    return decided
  }

  /// The answer, once the whole document was fed.
  package mutating func finish() -> Verdict {
    if decided == nil { judge(final: true) }
    return decided ?? .cannot
  }

  private mutating func judge(final: Bool) {
    var start = 0
    if !sawDeclaration {
      guard let end = declarationEnd(final: final) else { return }
      sawDeclaration = true
      start = end
    }
    // Every pattern whole in the bytes is looked for; the last bytes, which could begin one
    // that the next piece ends, are looked at again with it.
    let longest = max(name.count, Self.forbidden.map(\.count).max()!, Self.nameClose.count)
    let limit = final ? pending.count : max(start, pending.count - (longest - 1))
    var keepFrom = limit
    let verdict: Verdict? = pending.withUnsafeBytes { bytes in
      for pattern in Self.forbidden + [name] where ByteSearch.first(pattern, in: bytes, from: start) != nil {
        return .may
      }
      // Each `<name` element: text alone up to its `</name>`.
      var at = start
      while let open = ByteSearch.first(Self.nameOpen, in: bytes, from: at) {
        let after = open + Self.nameOpen.count
        guard after < bytes.count else {
          if final { return .may }
          keepFrom = open
          return nil
        }
        let next = bytes[after]
        if Self.isNameCharacter(next) {
          at = after  // a longer element name (`<names>`)
          continue
        }
        guard next == UInt8(ascii: ">") else { return .may }  // attributes, or an empty element
        guard let close = ByteSearch.first([UInt8(ascii: "<")], in: bytes, from: after + 1),
          close + Self.nameClose.count <= bytes.count
        else {
          if final { return .may }
          keepFrom = open
          return nil
        }
        guard bytes[close..<(close + Self.nameClose.count)].elementsEqual(Self.nameClose) else { return .may }
        at = close + Self.nameClose.count
      }
      return nil
    }
    if let verdict {
      decided = verdict
      pending = []
      return
    }
    if final {
      decided = .cannot
      pending = []
      return
    }
    keepFrom = min(keepFrom, limit)
    guard pending.count - keepFrom <= Self.maxHeld else {
      decided = .may
      pending = []
      return
    }
    pending.removeFirst(keepFrom)
  }

  /// Where the XML declaration ends, once it is whole; sets "may" for a document that does not
  /// start with one, or names an encoding other than UTF-8.
  private mutating func declarationEnd(final: Bool) -> Int? {
    let opening = Array("<?xml".utf8)
    guard pending.count >= opening.count || final else { return nil }
    guard pending.starts(with: opening),
      let close = pending.withUnsafeBytes({ ByteSearch.first(Array("?>".utf8), in: $0, from: opening.count) })
    else {
      if pending.count > 4096 || final || !pending.starts(with: opening.prefix(pending.count)) { decided = .may }
      return nil
    }
    let declaration = pending[..<close]
    if let e = ByteSearch.first(Array("encoding".utf8), in: declaration) {
      // `encoding = "UTF-8"` (or 'utf-8'): the only value judged.
      var i = e + "encoding".utf8.count
      func skipSpace() { while i < close, [0x20, 0x09, 0x0A, 0x0D].contains(declaration[i]) { i += 1 } }
      skipSpace()
      guard i < close, declaration[i] == UInt8(ascii: "=") else {
        decided = .may
        return nil
      }
      i += 1
      skipSpace()
      guard i < close, declaration[i] == UInt8(ascii: "\"") || declaration[i] == UInt8(ascii: "'") else {
        decided = .may
        return nil
      }
      let quote = declaration[i]
      let valueStart = i + 1
      guard let valueEnd = declaration[valueStart...].firstIndex(of: quote),
        String(decoding: declaration[valueStart..<valueEnd], as: UTF8.self).lowercased() == "utf-8"
      else {
        decided = .may
        return nil
      }
    }
    return close + 2
  }

  private static func isNameCharacter(_ byte: UInt8) -> Bool {
    switch byte {
    case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
      UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "."),
      UInt8(ascii: ":"), 0x80...0xFF:
      return true
    default:
      return false
    }
  }
}
