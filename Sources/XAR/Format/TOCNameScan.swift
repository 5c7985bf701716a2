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
  /// Bytes not yet judged: the declaration while it is incomplete, then the last few bytes of
  /// a piece, which could begin a pattern that the next piece ends.
  private var pending: [UInt8] = []
  private var sawDeclaration = false
  private var decided: Verdict?
  /// Inside a `<name>` element (its text read so far, up to its `</name>`), and where its text
  /// started, counted from the document's first byte.
  private var inName = false
  private var nameStart = 0
  /// The document's bytes before `pending`.
  private var passed = 0
  /// The longest text of one `<name>` element judged; past it, "may".
  private static let maxNameText = 64 * 1024
  /// The bytes at which a pattern can start (`&`, `<`, `b` and the name's first byte).
  private let starts: [Bool]

  private static let base64 = Array("base64".utf8)
  private static let nameOpen = Array("<name".utf8)
  private static let nameClose = Array("</name>".utf8)

  package init(name: String) {
    self.name = Array(name.utf8)
    var starts = [Bool](repeating: false, count: 256)
    for byte in [UInt8(ascii: "&"), UInt8(ascii: "<"), UInt8(ascii: "b")] + self.name.prefix(1) {
      starts[Int(byte)] = true
    }
    self.starts = starts
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
    // One pass over the bytes, stopping only at those a pattern can start with. A position
    // is judged once the longest pattern from it could be whole; the bytes from the first
    // position not judged wait for the next piece.
    let lookahead = max(name.count, Self.nameClose.count)
    let (verdict, judged) = pending.withUnsafeBytes { scan($0, from: start, final: final, lookahead: lookahead) }
    if let verdict {
      decided = verdict
      pending = []
      return
    }
    if final {
      decided = inName ? .may : .cannot  // a `<name>` cut by the document's end
      pending = []
      return
    }
    passed += judged
    pending.removeFirst(judged)
  }

  /// Scans `bytes` from `start`; "may" as soon as a pattern is found, else nil and how far the
  /// bytes were judged.
  private mutating func scan(_ bytes: UnsafeRawBufferPointer, from start: Int, final: Bool, lookahead: Int) -> (
    Verdict?, Int
  ) {
    let count = bytes.count
    guard count > start, let base = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return (nil, start) }
    let end = final ? count : count - (lookahead - 1)
    let name = self.name
    let first = name.first
    func matches(_ pattern: [UInt8], at p: Int) -> Bool {
      guard p + pattern.count <= count else { return false }
      for k in 0..<pattern.count where base[p + k] != pattern[k] { return false }
      return true
    }
    func byte(_ p: Int) -> UInt8? { p < count ? base[p] : nil }
    var inName = self.inName
    var nameStart = self.nameStart
    let passed = self.passed
    defer {
      self.inName = inName
      self.nameStart = nameStart
    }
    var i = start
    let (base64, nameOpen, nameClose, maxNameText) = (Self.base64, Self.nameOpen, Self.nameClose, Self.maxNameText)
    let lt = SIMD16<UInt8>(repeating: UInt8(ascii: "<"))
    let amp = SIMD16<UInt8>(repeating: UInt8(ascii: "&"))
    let bee = SIMD16<UInt8>(repeating: UInt8(ascii: "b"))
    let firstVector = SIMD16<UInt8>(repeating: first ?? UInt8(ascii: "<"))
    return starts.withUnsafeBufferPointer { starts in
      while i < end {
        // 16 bytes at a time up to the next one a pattern can start with.
        if i &+ 16 <= end {
          let v = UnsafeRawPointer(base + i).loadUnaligned(as: SIMD16<UInt8>.self)
          let hit = (v .== lt) .| (v .== amp) .| (v .== bee) .| (v .== firstVector)
          let lanes = unsafeBitCast(hit, to: SIMD2<UInt64>.self)
          if lanes[0] != 0 {
            i &+= lanes[0].trailingZeroBitCount >> 3
          } else if lanes[1] != 0 {
            i &+= 8 &+ lanes[1].trailingZeroBitCount >> 3
          } else {
            i &+= 16
            continue
          }
        }
        let b = base[i]
        if !starts[Int(b)] {
          i &+= 1
          continue
        }
        if b == UInt8(ascii: "&") && byte(i + 1) == UInt8(ascii: "#") { return (.may, i) }
        if b == UInt8(ascii: "b") && matches(base64, at: i) { return (.may, i) }
        if b == first && matches(name, at: i) { return (.may, i) }
        if b == UInt8(ascii: "<") {
          let next = byte(i + 1)
          if next == UInt8(ascii: "!") || next == UInt8(ascii: "?") { return (.may, i) }
          if inName {
            // The element's text ends here: only its end tag may follow (a child element,
            // skipped, would join the text around it).
            guard matches(nameClose, at: i), passed + i - nameStart <= maxNameText else { return (.may, i) }
            inName = false
            i += nameClose.count
            continue
          }
          if matches(nameOpen, at: i) {
            guard let after = byte(i + nameOpen.count) else { return (.may, i) }  // cut off
            if !Self.isNameCharacter(after) {
              guard after == UInt8(ascii: ">") else { return (.may, i) }  // attributes, or an empty element
              inName = true
              nameStart = passed + i + nameOpen.count + 1
              i += nameOpen.count + 1
              continue
            }
            // A longer element name (`<names>`).
          }
        }
        i += 1
      }
      if inName && passed + i - nameStart > maxNameText { return (.may, i) }
      return (nil, max(start, min(i, count)))
    }
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
