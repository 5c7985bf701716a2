/// `junk-file` (warning): files that operating systems and tools leave behind.
package final class JunkFileRule: Rule {
  package static let description = RuleDescription(
    id: "junk-file", name: "Junk files", category: .hygiene,
    summary:
      ".DS_Store, ._*, __MACOSX/, Thumbs.db, desktop.ini, .git/, editor swap and backup files; build leaves them out.",
    rationale: "They waste space on every device and can leak information about the machine that made the package.",
    severity: .warning,
    details: [
      "A warning in a package; a note in a content project, where `build` leaves junk out."
    ],
    triggering: [
      RuleExample.package(".DS_Store", adding: [.file("Contents/.DS_Store", "junk")], expecting: "Contents/.DS_Store"),
      RuleExample.package(
        "AppleDouble", adding: [.file("Contents/._readme.txt", "junk")], expecting: "Contents/._readme.txt"),
      RuleExample.package(
        "git folder", adding: [.directory("Contents/.git"), .file("Contents/.git/HEAD", "ref")],
        expecting: "Contents/.git"),
      RuleExample.package(
        "vim swap", adding: [.file("Contents/.readme.txt.swp", "x")], expecting: "Contents/.readme.txt.swp"),
    ],
    nonTriggering: [RuleExample.package("dot file that is content", adding: [.file("Contents/.well-known", "x")])])

  package init(context: RuleContext) {}

  /// True if `name` (one path component) is junk.
  package static func isJunk(_ name: Substring) -> Bool {
    if name == ".DS_Store" || name == "Thumbs.db" || name == "desktop.ini" || name == "__MACOSX" || name == ".git"
      || name == ".svn" || name == ".hg" || name == ".Spotlight-V100" || name == ".Trashes" || name == ".fseventsd"
    {
      return true
    }
    if name.hasPrefix("._") { return true }
    if name.hasPrefix(".") && (name.hasSuffix(".swp") || name.hasSuffix(".swo")) { return true }
    if name.hasSuffix("~") || (name.hasPrefix("#") && name.hasSuffix("#") && name.count > 1) { return true }
    return false
  }

  /// The first component of `path` that is junk, as the path up to it; nil if none.
  package static func junkPrefix(of path: String) -> String? {
    // Every junk name starts with '.', '_', '#', 'T' or 'd', or ends with '~': skip the split
    // for the vast majority of paths.
    var candidate = false
    var atStart = true
    for byte in path.utf8 {
      if atStart
        && (byte == UInt8(ascii: ".") || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "#")
          || byte == UInt8(ascii: "T") || byte == UInt8(ascii: "d"))
      {
        candidate = true
        break
      }
      if byte == UInt8(ascii: "~") {
        candidate = true
        break
      }
      atStart = byte == UInt8(ascii: "/")
    }
    guard candidate else { return nil }
    var prefix = ""
    for component in path.split(separator: "/") {
      prefix = prefix.isEmpty ? String(component) : prefix + "/" + component
      if isJunk(component) { return prefix }
    }
    return nil
  }

  private var reported: Set<String> = []

  package func inspect(_ inspected: InspectedEntry, into findings: inout [Finding]) {
    guard !inspected.entry.isWrapperMember else { return }
    let path = inspected.entry.path
    // Report a junk folder once, not each file in it (also when the archive has no entry for
    // the folder itself).
    guard let prefix = JunkFileRule.junkPrefix(of: path), reported.insert(prefix).inserted else { return }
    if prefix != path && reported.contains(where: { prefix.hasPrefix($0 + "/") }) { return }
    let name = prefix.split(separator: "/").last.map(String.init) ?? prefix
    findings.append(
      finding(
        prefix, "'\(name)' is junk left by an operating system or tool", hint: "delete it (pkgtool build leaves it out)"
      ))
  }

  package func finish(_ summary: InspectionSummary, into findings: inout [Finding]) {
    // In a project folder, build leaves junk out: the package will not hold it.
    for left in summary.leftOut where left.reason == .junk {
      let name = left.path.split(separator: "/").last.map(String.init) ?? left.path
      findings.append(finding(left.path, "'\(name)' is junk; build leaves it out of the package", severity: .note))
    }
  }
}
