/// When two names are the same file's name on the devices and disks a package meets: the one
/// definition that `duplicate-path`, `path-safety`, `no-external-symlink` (through
/// ``SymlinkResolver``), the unpack sink and `install` use.
///
/// APFS and HFS+ volumes are case-insensitive and normalization-insensitive by default: APFS
/// compares names after Unicode's full case folding and canonical decomposition. NTFS is
/// case-insensitive too. So two names are one here when their ``key(_:)``s are equal:
/// `NFD(toCasefold(NFD(name)))`, Unicode's *canonical caseless match* (Unicode 15, D145), with
/// the full case folding of CaseFolding.txt (status C and F, ``caseFoldingVersion``) and the
/// canonical decompositions of UnicodeData.txt of the same version, both generated into
/// CaseFoldingTable.swift (the combining classes are the standard library's). Then
/// `Level`, `level` and `LEVEL` are one name, as are `ſ` (U+017F) and `s`, `K` (U+212A, KELVIN
/// SIGN) and `k`, `µ` (U+00B5) and `μ`, `ς` and `σ`, `ß` and `ss`, `ﬁ` and `fi`, and any NFC and
/// NFD spellings of a name.
///
/// A file system that folds less (simple folding only, or no normalization) sees some of these as
/// two names. Treating them as one is the safe side: two entries that are one name here are a
/// `duplicate-path` error, so a package passes only if it means the same on every such system.
package enum NameEquivalence {
  /// The form `name` (a component or a whole path: `/` folds to itself) is compared in: equal
  /// keys, equal names. Names of ASCII characters only take a fast path (lower-case A to Z,
  /// nothing else changes); the key of a name that is already its own key is the name itself.
  package static func key(_ name: String) -> String {
    var upper = false
    for byte in name.utf8 {
      if byte >= 0x80 { return unicodeKey(name) }
      if byte &- 0x41 < 26 { upper = true }
    }
    // For ASCII, `lowercased()` is exactly this folding (and the standard library's fast path).
    return upper ? name.lowercased() : name
  }

  /// True when `a` and `b` are the same name.
  package static func areEquivalent(_ a: String, _ b: String) -> Bool {
    a.utf8.elementsEqual(b.utf8) || key(a).utf8.elementsEqual(key(b).utf8)
  }

  /// How two equivalent names differ.
  package enum Difference: String, Sendable {
    /// Byte for byte the same.
    case none
    /// Canonically equivalent (NFC and NFD, say), folded or not.
    case normalization = "Unicode normalization"
    /// Equal once case-folded, with no normalization.
    case `case` = "case"
    /// Equal only once case-folded and normalized.
    case caseAndNormalization = "case and Unicode normalization"
  }

  /// How `a` and `b` differ, for two names with equal keys.
  package static func difference(_ a: String, _ b: String) -> Difference {
    if a.utf8.elementsEqual(b.utf8) { return .none }
    if a == b { return .normalization }  // Swift's String equality is canonical equivalence
    if caseFolded(a).utf8.elementsEqual(caseFolded(b).utf8) { return .case }
    return .caseAndNormalization
  }

  /// `name` with every character replaced by its full case folding, not normalized.
  package static func caseFolded(_ name: String) -> String {
    var scalars = String.UnicodeScalarView()
    appendFolded(name.unicodeScalars, to: &scalars)
    return String(scalars)
  }

  private static func unicodeKey(_ name: String) -> String {
    var scalars: [UInt32] = []
    scalars.reserveCapacity(name.utf8.count)
    var changed = false
    decompose(name.unicodeScalars.lazy.map(\.value), into: &scalars)
    var folded: [UInt32] = []
    folded.reserveCapacity(scalars.count + 4)
    let table = foldings
    for value in scalars {
      if value < 0x80 {
        folded.append(value &- 0x41 < 26 ? value | 0x20 : value)
      } else if let mapping = table[value] {
        changed = true
        folded.append(mapping.packed.0)
        if mapping.count > 1 { folded.append(mapping.packed.1) }
        if mapping.count > 2 { folded.append(mapping.packed.2) }
      } else {
        folded.append(value)
      }
    }
    // Folding can leave a string that is not in NFD (a folding that decomposes, or combining
    // marks out of order): decompose again, unless only ASCII letters changed (an ASCII letter
    // has no decomposition and no combining class, so an NFD string stays one).
    if changed {
      scalars.removeAll(keepingCapacity: true)
      decompose(folded, into: &scalars)
      folded = scalars
    }
    var view = String.UnicodeScalarView()
    for value in folded { view.append(Unicode.Scalar(value)!) }
    return String(view)
  }

  /// Appends the canonical decomposition (NFD) of `values`: each code point's full decomposition
  /// (``decompositionRows``, and Hangul syllables by arithmetic), then runs of combining marks
  /// put in the canonical order (stably, by combining class).
  package static func decompose(_ values: some Sequence<UInt32>, into out: inout [UInt32]) {
    let table = decompositions
    var runStart = -1  // where the current run of nonzero combining classes starts
    func append(_ value: UInt32) {
      guard value >= 0x300 else {  // nothing below U+0300 has a nonzero combining class
        out.append(value)
        runStart = -1
        return
      }
      let ccc = combiningClass(value)
      if ccc == 0 {
        out.append(value)
        runStart = -1
        return
      }
      if runStart < 0 { runStart = out.count }
      // Insert after every mark of the run with a class not above this one.
      var i = out.count
      while i > runStart && combiningClass(out[i - 1]) > ccc { i -= 1 }
      out.insert(value, at: i)
    }
    for value in values {
      if value < 0xC0 {
        out.append(value)
        runStart = -1
      } else if value >= 0xAC00 && value <= 0xD7A3 {
        let index = value - 0xAC00
        out.append(0x1100 + index / 588)
        out.append(0x1161 + (index % 588) / 28)
        if index % 28 != 0 { out.append(0x11A7 + index % 28) }
        runStart = -1
      } else if let mapping = table[value] {
        append(mapping.packed.0)
        if mapping.count > 1 { append(mapping.packed.1) }
        if mapping.count > 2 { append(mapping.packed.2) }
        if mapping.count > 3 { append(mapping.packed.3) }
      } else {
        append(value)
      }
    }
  }

  private static func combiningClass(_ value: UInt32) -> UInt8 {
    Unicode.Scalar(value)?.properties.canonicalCombiningClass.rawValue ?? 0
  }

  /// Appends each scalar's folding.
  private static func appendFolded(_ scalars: String.UnicodeScalarView, to out: inout String.UnicodeScalarView) {
    let table = foldings
    for scalar in scalars {
      if let mapping = table[scalar.value] {
        out.append(Unicode.Scalar(mapping.packed.0)!)
        if mapping.count > 1 { out.append(Unicode.Scalar(mapping.packed.1)!) }
        if mapping.count > 2 { out.append(Unicode.Scalar(mapping.packed.2)!) }
      } else {
        out.append(scalar)
      }
    }
  }

  /// A code point's full canonical decomposition: up to four code points.
  struct Decomposition {
    var packed: (UInt32, UInt32, UInt32, UInt32)
    var count: Int
  }

  /// ``decompositionRows`` by code point, read once.
  static let decompositions: [UInt32: Decomposition] = {
    var table: [UInt32: Decomposition] = [:]
    table.reserveCapacity(2100)
    for row in decompositionRows.split(whereSeparator: { $0 == " " || $0 == "\n" }) {
      let halves = row.split(separator: ":")
      let m = halves[1].split(separator: ",").map { UInt32($0, radix: 16)! }
      table[UInt32(halves[0], radix: 16)!] = Decomposition(
        packed: (m[0], m.count > 1 ? m[1] : 0, m.count > 2 ? m[2] : 0, m.count > 3 ? m[3] : 0), count: m.count)
    }
    return table
  }()

  /// One code point's folding: up to three code points.
  struct Folding {
    var packed: (UInt32, UInt32, UInt32)
    var count: Int

    var scalars: [UInt32] { Array([packed.0, packed.1, packed.2].prefix(count)) }
  }

  /// ``caseFoldingRows`` by code point, read once.
  static let foldings: [UInt32: Folding] = {
    var table: [UInt32: Folding] = [:]
    table.reserveCapacity(1600)
    for row in caseFoldingRows.split(whereSeparator: { $0 == " " || $0 == "\n" }) {
      let halves = row.split(separator: ":")
      let code = UInt32(halves[0], radix: 16)!
      let mapping = halves[1].split(separator: ",").map { UInt32($0, radix: 16)! }
      table[code] = Folding(
        packed: (mapping[0], mapping.count > 1 ? mapping[1] : 0, mapping.count > 2 ? mapping[2] : 0),
        count: mapping.count)
    }
    return table
  }()

  /// How many code points have a folding (the C and F lines of CaseFolding.txt).
  package static var foldingCount: Int { foldings.count }

  /// The full case folding of one code point (itself when it has none), as CaseFolding.txt's
  /// C and F lines give it.
  package static func folding(of scalar: Unicode.Scalar) -> [Unicode.Scalar] {
    guard let mapping = foldings[scalar.value] else { return [scalar] }
    return mapping.scalars.map { Unicode.Scalar($0)! }
  }
}
