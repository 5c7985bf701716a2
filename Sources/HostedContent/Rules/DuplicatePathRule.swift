/// `duplicate-path`: no two entries share a path, even up to case or Unicode normalization.
package final class DuplicatePathRule: Rule {
  package static let description = RuleDescription(
    id: "duplicate-path", name: "Duplicate paths", category: .paths,
    headline: "Two entries with the same path, or paths equal up to case or Unicode normalization.",
    summary:
      "Two entries with the same path, or paths equal up to case (full Unicode case folding) or Unicode normalization (NFC/NFD).",
    rationale:
      "Devices use case-insensitive, normalization-insensitive file systems: one entry would silently overwrite the other, or a later one could replace a checked file.",
    securitySeverity: 5.5,
    details: [
      "Two paths are one when they are equal after Unicode's full case folding (CaseFolding.txt, status C and F) and canonical decomposition (NFD), as APFS compares names: so `Level`/`level`, `stra\u{DF}e`/`STRASSE`, `\u{17F}`/`s` (long s), `\u{212A}`/`k` (Kelvin sign), `\u{B5}`/`\u{3BC}` (micro sign and mu) and the NFC and NFD spellings of a name collide. The message says whether the paths differ by case, by normalization, or by both."
    ],
    triggering: [
      RuleExample.package(
        "same path twice", adding: [.file("Contents/a.txt", "1"), .file("Contents/a.txt#2", "2")],
        expecting: "Contents/a.txt"
      ).with { $0.appliesToFolders = false },
      RuleExample.package(
        "case-only collision", adding: [.file("Contents/Level.json", "1"), .file("Contents/level.json", "2")],
        expecting: "Contents/level.json"),
      RuleExample.package(
        "NFC and NFD collision",
        adding: [.file("Contents/caf\u{E9}.txt", "1"), .file("Contents/cafe\u{301}.txt", "2")],
        expecting: "Contents/cafe\u{301}.txt"),
      RuleExample.package(
        "collision by full case folding (sharp s)",
        adding: [.file("Contents/gross.txt", "1"), .file("Contents/gro\u{DF}.txt", "2")],
        expecting: "Contents/gro\u{DF}.txt"),
    ],
    nonTriggering: [
      RuleExample.package(
        "distinct names",
        adding: [.file("Contents/a.txt", "1"), .file("Contents/b.txt", "2"), .file("Contents/a.txt.bak", "3")])
    ])

  /// The first path of each key (``NameEquivalence/key(_:)``: full case folding and canonical
  /// decomposition): an open-addressing table by the key's hash. A slot holds 32
  /// bits of the hash (low bit set, so 0 is empty) and the path's number in the run's
  /// ``PathIndex``: the paths themselves are stored once, there. 8 bytes a slot, at most half full.
  /// A slot's place comes from the 31 hash bits it keeps, so the table doubles without making
  /// or folding any path again.
  private var slots = [UInt64](repeating: 0, count: 1024)
  private var used = 0
  /// The last new path: the inspector adds an entry's path to the index after the rules have
  /// seen it, so its number is looked up at the next entry (or kept here, if it never comes).
  private var pending: (hash: Int, path: String)?
  /// Paths the index does not have (a driver that does not index); normally empty.
  private var unindexed: [Int32: String] = [:]

  package init(context: RuleContext) {}

  private func settlePending(_ paths: PathIndex) {
    guard let (key, path) = pending else { return }
    growIfNeeded()
    pending = nil
    if let number = paths.number(of: path) {
      place(number, hash: key)
    } else {
      let number = -1 - Int32(unindexed.count)
      unindexed[number] = path
      place(number, hash: key)
    }
  }

  private static func tag(_ hash: Int) -> UInt64 { UInt64(UInt32(truncatingIfNeeded: hash >> 32) | 1) << 32 }

  /// Where probing for `tag` starts: from the tag's bits (not its low bit, which is always set).
  private static func home(_ tag: UInt64, mask: Int) -> Int { Int(truncatingIfNeeded: tag >> 33) & mask }

  private func place(_ number: Int32, hash: Int) {
    place(DuplicatePathRule.tag(hash) | UInt64(UInt32(bitPattern: number)))
  }

  private func place(_ value: UInt64) {
    let mask = slots.count - 1
    var slot = DuplicatePathRule.home(value & 0xFFFF_FFFF_0000_0000, mask: mask)
    while slots[slot] != 0 { slot = (slot + 1) & mask }
    slots[slot] = value
    used += 1
  }

  /// Doubles the table; each slot moves by the hash bits it holds.
  private func growIfNeeded() {
    guard (used + 1) * 2 > slots.count else { return }
    let old = slots
    slots = [UInt64](repeating: 0, count: old.count * 2)
    used = 0
    for value in old where value != 0 { place(value) }
  }

  private func path(_ number: Int32, in paths: PathIndex) -> String {
    number >= 0 ? paths.path(number) : unindexed[number] ?? ""
  }

  package func inspect(_ inspected: InspectedEntry, into findings: inout [Finding]) {
    guard !inspected.entry.isWrapperMember else { return }
    settlePending(inspected.paths)
    let path = inspected.entry.path
    var key = NameEquivalence.key(path)
    // The key is already normalized: hash its bytes (String's own hash normalizes again).
    let hash = key.withUTF8 { bytes in
      var hasher = Hasher()
      hasher.combine(bytes: UnsafeRawBufferPointer(bytes))
      return hasher.finalize()
    }
    let mask = slots.count - 1
    var slot = DuplicatePathRule.home(DuplicatePathRule.tag(hash), mask: mask)
    var match: String?
    while slots[slot] != 0 {
      let value = slots[slot]
      if value & 0xFFFF_FFFF_0000_0000 == DuplicatePathRule.tag(hash) {
        let first = self.path(Int32(bitPattern: UInt32(truncatingIfNeeded: value)), in: inspected.paths)
        if NameEquivalence.key(first).utf8.elementsEqual(key.utf8) {
          match = first
          break
        }
      }
      slot = (slot + 1) & mask
    }
    if let first = match {
      if first.utf8.elementsEqual(path.utf8) {
        findings.append(
          finding(path, "the path appears more than once in the package", hint: "keep one entry per path"))
        return
      }
      let kind = NameEquivalence.difference(first, path).rawValue
      findings.append(
        finding(
          path,
          "the path collides with '\(first)' on case- and normalization-insensitive file systems (differs only by \(kind))",
          hint: "rename one of them"))
    } else {
      pending = (hash, path)
    }
  }
}
