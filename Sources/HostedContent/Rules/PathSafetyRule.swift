/// `path-safety`: every path is relative, plain and printable, and no entry lies under a symlink.
public final class PathSafetyRule: Rule {
  /// Longest name (one component) accepted, in UTF-8 bytes.
  public static let maxNameBytes = 255
  /// Longest path accepted, in UTF-8 bytes.
  public static let maxPathBytes = 1024

  public static let description = RuleDescription(
    id: "path-safety", name: "Path safety",
    summary: "Absolute paths, '..' or '.' or empty components, NUL or control characters, non-UTF-8, over-long names or paths, entries stored under a symlink.",
    rationale: "Such paths let an unpacker write outside its destination or create names the device's file system cannot hold.",
    triggering: [
      RuleExample.package("dot-dot component", adding: [.file("Contents/../../evil.txt", "x")], expecting: "Contents/../../evil.txt").with { $0.appliesToFolders = false },
      RuleExample.package("control character", adding: [.file("Contents/bad\u{7}name.txt", "x")], expecting: "Contents/bad\u{7}name.txt"),
      RuleExample.package("over-long name", adding: [.file("Contents/" + String(repeating: "n", count: 300), "x")]).with { $0.appliesToFolders = false },
      RuleExample.package("file under a symlinked folder", adding: [.directory("Contents/real"), .symlink("Contents/link", "real"), .file("Contents/link/x.txt", "x")], expecting: "Contents/link/x.txt").with { $0.appliesToFolders = false },
    ],
    nonTriggering: [
      RuleExample.package("ordinary names", adding: [.file("Contents/level 1/Überblick-ß.json", "{}"), .file("Contents/.hidden-ok", "x")]),
    ])

  private var resolver = SymlinkResolver()
  private var paths: [String] = []

  public init(context: RuleContext) {}

  /// Why `path` is unsafe, or nil.
  public static func problem(with path: String, validUTF8: Bool = true) -> String? {
    if !validUTF8 { return "the name is not valid UTF-8" }
    if path.isEmpty { return "the path is empty" }
    if path.hasPrefix("/") { return "the path is absolute" }
    if path.utf8.count > maxPathBytes { return "the path is longer than \(maxPathBytes) bytes" }
    for scalar in path.unicodeScalars where scalar.value < 0x20 || scalar.value == 0x7F {
      return scalar.value == 0 ? "the path holds a NUL character" : "the path holds a control character (U+\(String(scalar.value, radix: 16, uppercase: true)))"
    }
    for component in path.split(separator: "/", omittingEmptySubsequences: false) {
      if component.isEmpty { return "the path has an empty component ('//' or a trailing '/')" }
      if component == "." || component == ".." { return "the path has a '\(component)' component" }
      if component.utf8.count > maxNameBytes { return "a name is longer than \(maxNameBytes) bytes" }
    }
    return nil
  }

  public func inspect(_ inspected: InspectedEntry, into findings: inout [Finding]) {
    let entry = inspected.entry
    resolver.add(entry)
    paths.append(entry.path)
    if let problem = PathSafetyRule.problem(with: entry.path, validUTF8: entry.pathIsValidUTF8) {
      findings.append(finding(entry.path, problem, hint: "use plain relative names inside Contents/"))
    }
  }

  public func finish(_ summary: InspectionSummary, into findings: inout [Finding]) {
    for path in paths {
      if let link = resolver.symlinkedAncestor(of: path) {
        findings.append(finding(path, "the entry lies under the symlink '\(link)': writing it would follow the link", hint: "store the file at its real path"))
      }
    }
  }
}
