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

  /// Lower-cased paths; Swift compares strings by canonical equivalence, so NFC and NFD meet here.
  private var folded: [String: String] = [:]

  package init(context: RuleContext) {}

  package func inspect(_ inspected: InspectedEntry, into findings: inout [Finding]) {
    guard !inspected.entry.isWrapperMember else { return }
    let path = inspected.entry.path
    let key = path.lowercased()
    if let first = folded[key] {
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
      folded[key] = path
    }
  }
}
