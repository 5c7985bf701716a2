/// `path-safety`: every path is relative, plain and printable, and no entry lies under a symlink
/// or under an entry that is not a folder.
package final class PathSafetyRule: Rule {
  /// Longest name (one component) accepted, in UTF-8 bytes.
  package static let maxNameBytes = 255
  /// Longest path accepted, in UTF-8 bytes.
  package static let maxPathBytes = 1024

  package static let description = RuleDescription(
    id: "path-safety", name: "Path safety", category: .paths,
    headline:
      "A path that is absolute, climbs out with '..', holds control characters or is not UTF-8, or is too long.",
    summary:
      "Absolute paths, '..' or '.' or empty components, NUL or control characters, backslashes, non-UTF-8, over-long names or paths, entries stored under a symlink or under a file.",
    rationale:
      "Such paths let an unpacker write outside its destination or create names the device's file system cannot hold.",
    securitySeverity: 9.1,
    details: [
      "`unpack` checks every name again as it writes; an entry it refuses that no rule had reported is reported under this rule.",
      "An entry lies under a symlink when a folder in its path is the symlink's name as the device matches names: after full Unicode case folding and canonical decomposition (see `duplicate-path`), so `s/x.txt` lies under a link named `\u{17F}` (long s).",
    ],
    triggering: [
      RuleExample.package(
        "dot-dot component", adding: [.file("Contents/../../evil.txt", "x")], expecting: "Contents/../../evil.txt"
      ).with { $0.appliesToFolders = false },
      RuleExample.package(
        "control character", adding: [.file("Contents/bad\u{7}name.txt", "x")], expecting: "Contents/bad\u{7}name.txt"),
      RuleExample.package(
        "backslash", adding: [.file("Contents/..\\..\\evil.txt", "x")], expecting: "Contents/..\\..\\evil.txt"),
      RuleExample.package("over-long name", adding: [.file("Contents/" + String(repeating: "n", count: 300), "x")]).with
      { $0.appliesToFolders = false },
      RuleExample.package(
        "file under a symlinked folder",
        adding: [.directory("Contents/real"), .symlink("Contents/link", "real"), .file("Contents/link/x.txt", "x")],
        expecting: "Contents/link/x.txt"
      ).with { $0.appliesToFolders = false },
      RuleExample.package(
        "file under a symlinked folder spelled with a folded letter",
        adding: [.directory("Contents/real"), .symlink("Contents/\u{17F}", "real"), .file("Contents/s/x.txt", "x")],
        expecting: "Contents/s/x.txt"
      ).with { $0.appliesToFolders = false },
    ],
    nonTriggering: [
      RuleExample.package(
        "ordinary names", adding: [.file("Contents/level 1/Überblick-ß.json", "{}"), .file("Contents/.hidden-ok", "x")])
    ])

  private var symlinks: Set<String> = []
  /// The path numbers (in the run's ``PathIndex``) of entries that are not folders; the last
  /// one is known by its path until it is indexed (after the rules saw it).
  private var nonFolders: [Int32] = []
  private var pendingNonFolder: String?

  private func settlePending(_ paths: PathIndex) {
    guard let path = pendingNonFolder else { return }
    pendingNonFolder = nil
    if let number = paths.number(of: path) { nonFolders.append(number) }
  }

  package init(context: RuleContext) {}

  /// Why `path` is unsafe, or nil.
  package static func problem(with path: String, validUTF8: Bool = true) -> String? {
    if !validUTF8 { return "the name is not valid UTF-8" }
    if path.isEmpty { return "the path is empty" }
    if path.utf8.first == UInt8(ascii: "/") { return "the path is absolute" }
    if path.utf8.count > maxPathBytes { return "the path is longer than \(maxPathBytes) bytes" }
    // One pass over the bytes: control characters, and each component's length and dots.
    var componentLength = 0
    var dots = 0
    for byte in path.utf8 {
      if byte < 0x20 || byte == 0x7F { return controlCharacterProblem(path) }
      if byte == UInt8(ascii: "\\") {
        return
          "the path holds a backslash, which unzip (for archives from Windows) and Windows read as a folder separator"
      }
      if byte == UInt8(ascii: "/") {
        if let problem = componentProblem(componentLength, dots) { return problem }
        componentLength = 0
        dots = 0
        continue
      }
      componentLength += 1
      if byte == UInt8(ascii: ".") { dots += 1 }
    }
    return componentProblem(componentLength, dots)
  }

  private static func componentProblem(_ length: Int, _ dots: Int) -> String? {
    if length == 0 { return "the path has an empty component ('//' or a trailing '/')" }
    if dots == length && length <= 2 { return "the path has a '\(String(repeating: ".", count: length))' component" }
    if length > maxNameBytes { return "a name is longer than \(maxNameBytes) bytes" }
    return nil
  }

  private static func controlCharacterProblem(_ path: String) -> String {
    let scalar = path.unicodeScalars.first { $0.value < 0x20 || $0.value == 0x7F }!
    return scalar.value == 0
      ? "the path holds a NUL character"
      : "the path holds a control character (U+\(String(scalar.value, radix: 16, uppercase: true)))"
  }

  /// The first proper prefix of `path` in `symlinks`.
  static func symlinkedAncestor(of path: String, in symlinks: Set<String>) -> String? {
    var end = path.startIndex
    while let slash = path[end...].firstIndex(of: "/") {
      let prefix = String(path[..<slash])
      if symlinks.contains(SymlinkResolver.fold(prefix)) { return prefix }
      end = path.index(after: slash)
    }
    return nil
  }

  package func inspect(_ inspected: InspectedEntry, into findings: inout [Finding]) {
    let entry = inspected.entry
    if entry.kind == .symlink && !entry.isWrapperMember { symlinks.insert(SymlinkResolver.fold(entry.path)) }
    if !entry.isWrapperMember {
      settlePending(inspected.paths)
      // (Entries under a symlink have a finding of their own, below.)
      if entry.kind != .directory && entry.kind != .symlink { pendingNonFolder = entry.path }
    }
    if let problem = PathSafetyRule.problem(with: entry.path, validUTF8: entry.pathIsValidUTF8) {
      findings.append(finding(entry.path, problem, hint: "use plain relative names inside Contents/"))
    }
  }

  /// The finding for an entry the sink refused to write (`refusal` says why) that no rule had
  /// flagged: the sink checks names again, as a second line of defence.
  package static func finding(forSinkRefusal refusal: String, at path: String) -> Finding {
    finding(path, refusal, severity: .error)
  }

  package func finish(_ summary: InspectionSummary, into findings: inout [Finding]) {
    settlePending(summary.paths)
    for number in nonFolders where summary.paths.isImpliedFolder(number) {
      let path = summary.paths.path(number)
      findings.append(
        finding(
          path, "'\(path.debugEscaped)' is not a folder, but other entries lie under it: no reader can write both",
          hint: "rename the file, or move the entries under it elsewhere"))
    }
    guard !symlinks.isEmpty else { return }
    for path in summary.paths.entryPaths.sorted() {
      if let link = PathSafetyRule.symlinkedAncestor(of: path, in: symlinks) {
        findings.append(
          finding(
            path, "the entry lies under the symlink '\(link)': writing it would follow the link",
            hint: "store the file at its real path"))
      }
    }
  }
}
