/// `duplicate-path`: no two entries share a path, even up to case or Unicode normalization.
package final class DuplicatePathRule: Rule {
  package static let description = RuleDescription(
    id: "duplicate-path", name: "Duplicate paths", category: .paths,
    summary: "Two entries with the same path, or paths equal up to case or Unicode normalization (NFC/NFD).",
    rationale:
      "Devices use case-insensitive, normalization-insensitive file systems: one entry would silently overwrite the other, or a later one could replace a checked file.",
    securitySeverity: 5.5,
    details: [
      "Compares exact bytes, then case-folded paths, then canonical equivalence (NFC/NFD), since devices use case- and normalization-insensitive file systems."
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
    ],
    nonTriggering: [
      RuleExample.package(
        "distinct names",
        adding: [.file("Contents/a.txt", "1"), .file("Contents/b.txt", "2"), .file("Contents/a.txt.bak", "3")])
    ])

  /// The first path of each folded form, by the folded form's hash (Swift hashes strings by
  /// canonical equivalence, so NFC and NFD meet here; a collision of hashes moves on to the next
  /// key). The paths themselves are the run's ``PathIndex``'s, by number: stored once.
  private var folded: [Int: Int32] = [:]
  /// The last new path: the inspector adds an entry's path to the index after the rules have
  /// seen it, so its number is looked up at the next entry (or kept here, if it never comes).
  private var pending: (key: Int, path: String)?
  /// Paths the index does not have (a driver that does not index); normally empty.
  private var unindexed: [Int32: String] = [:]

  package init(context: RuleContext) {}

  private func settlePending(_ paths: PathIndex) {
    guard let (key, path) = pending else { return }
    pending = nil
    if let number = paths.number(of: path) {
      folded[key] = number
    } else {
      let number = -1 - Int32(unindexed.count)
      unindexed[number] = path
      folded[key] = number
    }
  }

  private func path(_ number: Int32, in paths: PathIndex) -> String {
    number >= 0 ? paths.path(number) : unindexed[number] ?? ""
  }

  package func inspect(_ inspected: InspectedEntry, into findings: inout [Finding]) {
    guard !inspected.entry.isWrapperMember else { return }
    settlePending(inspected.paths)
    let path = inspected.entry.path
    let key = path.lowercased()
    var slot = key.hashValue
    var match: String?
    while let number = folded[slot] {
      let first = self.path(number, in: inspected.paths)
      if first.lowercased() == key {
        match = first
        break
      }
      slot &+= 1
    }
    if let first = match {
      if first.utf8.elementsEqual(path.utf8) {
        findings.append(
          finding(path, "the path appears more than once in the package", hint: "keep one entry per path"))
        return
      }
      let kind: String
      if first == path {
        kind = "Unicode normalization"  // canonically equal, different bytes
      } else if Array(first.lowercased().utf8) == Array(key.utf8) {
        kind = "case"
      } else {
        kind = "case and Unicode normalization"
      }
      findings.append(
        finding(
          path,
          "the path collides with '\(first)' on case- and normalization-insensitive file systems (differs only by \(kind))",
          hint: "rename one of them"))
    } else {
      pending = (slot, path)
    }
  }
}
