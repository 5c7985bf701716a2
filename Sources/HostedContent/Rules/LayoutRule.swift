/// `layout`: the root holds exactly `ContentInfo.plist` (a file) and `Contents/` (a folder).
package final class LayoutRule: Rule {
  package static let description = RuleDescription(
    id: "layout", name: "Package layout", category: .layout,
    headline: "Anything at the root other than ContentInfo.plist and Contents/, or no Contents/ folder.",
    summary:
      "Anything at the root other than ContentInfo.plist (a file) and Contents/ (a directory); a missing Contents/; in a flat package, any outer member but Distribution, NAME.pkg/{Bom,PackageInfo,Payload} and Resources/.",
    rationale:
      "The client unpacks the root into a cache folder and the app copies Contents/; anything else at the root is lost or confuses the app.",
    details: [
      "For a flat package, also checks the outer archive: only `Distribution`, `NAME.pkg/` with `Bom`, `PackageInfo` and `Payload`, and `Resources/` may be there. Every outer member is also seen by `path-safety`, `no-executable` and `special-file`, and its data is read to the end so a checksum or size lie is an `archive-integrity` finding.",
      "In a content project, the project's own files beside `Contents/` (README, LICENSE, CHANGELOG, NOTICE, AUTHORS, COPYING, `.gitignore`, `.gitattributes`, `.editorconfig`), which `build` leaves out, are listed in the report's summary (`build leaves out README.md`), not reported; the rule warns about anything else at the root (content put in the wrong place, say `levels.json` beside `Contents/`).",
    ],
    triggering: [
      RuleExample.package("extra file at the root", adding: [.file("notes.txt", "hi")], expecting: "notes.txt"),
      RuleExample.package(
        "Contents is a file", adding: [.file("Contents", "not a folder")], removing: ["Contents/readme.txt"],
        expecting: "Contents"),
      RuleExample.package("no Contents folder", removing: ["Contents", "Contents/readme.txt"]),
      RuleExample.package(
        "ContentInfo.plist is a folder", adding: [.directory("ContentInfo.plist")], expecting: "ContentInfo.plist"),
    ],
    nonTriggering: [
      RuleExample.package("standard layout"),
      RuleExample.package("empty Contents", removing: ["Contents/readme.txt"]),
    ])

  private var sawContents = false
  private var reported: Set<String> = []
  /// A root folder that holds the project itself (`MyBook/ContentInfo.plist`): a zip made of
  /// the project folder rather than of what is inside it.
  private var wrapper: String?

  package init(context: RuleContext) {}

  package static func skipReason(_ context: RuleContext) -> String? { context.hostedContentOnly }

  /// Why a flat package's outer member is not one productbuild writes; nil when it is.
  static func wrapperProblem(_ entry: PackageEntry) -> String? {
    let parts = entry.components
    let allowed: Bool
    switch parts.count {
    case 1:
      allowed =
        (parts[0] == "Distribution" && entry.kind == .file)
        || (parts[0].hasSuffix(".pkg") && parts[0] != ".pkg" && entry.kind == .directory)
        || (parts[0] == "Resources" && entry.kind == .directory)
    case 2 where parts[0].hasSuffix(".pkg"):
      allowed = ["Bom", "PackageInfo", "Payload"].contains(parts[1]) && entry.kind == .file
    default:
      allowed = parts[0] == "Resources" && (entry.kind == .file || entry.kind == .directory)
    }
    return allowed
      ? nil
      : "the flat package holds '\(entry.path)' (a \(entry.kind.rawValue)) outside its payload; only Distribution, NAME.pkg/{Bom,PackageInfo,Payload} and Resources/ belong there"
  }

  package func inspect(_ inspected: InspectedEntry, into findings: inout [Finding]) {
    let entry = inspected.entry
    if entry.isWrapperMember {
      if let problem = LayoutRule.wrapperProblem(entry) {
        findings.append(
          finding(
            entry.path, problem,
            hint: "export the package again with productbuild --content, or build a plain package with pkgtool build"))
      }
      return
    }
    let root = String(entry.rootName)
    let isRootEntry = !entry.path.utf8.contains(UInt8(ascii: "/"))
    switch root {
    case "Contents":
      sawContents = true
      if isRootEntry && entry.kind != .directory {
        findings.append(
          finding(
            entry.path, "Contents is a \(entry.kind.rawValue), it must be a folder",
            hint: "put the content files in a folder named Contents"))
      }
    case ContentInfo.fileName:
      if isRootEntry && entry.kind != .file {
        findings.append(finding(entry.path, "ContentInfo.plist is a \(entry.kind.rawValue), it must be a file"))
      } else if !isRootEntry && reported.insert(root).inserted {
        findings.append(finding(root, "ContentInfo.plist is a folder, it must be a file"))
      }
    default:
      if reported.insert(root).inserted {
        findings.append(
          finding(
            root, "'\(root)' is at the package root, where only ContentInfo.plist and Contents/ belong",
            hint: "move it into Contents/ or leave it out"))
      }
      // `ROOT/ContentInfo.plist` or `ROOT/Contents/`: the project folder was archived whole. The
      // finding made at ROOT's first entry (moving it into Contents/ would be the wrong way) is
      // told again in these words; it keeps its place, so --keep-going skips the same entries.
      let parts = entry.components
      if wrapper == nil, parts.count == 2, parts[1] == ContentInfo.fileName || parts[1] == "Contents",
        let index = findings.lastIndex(where: { $0.ruleID == Self.description.id && $0.path == root })
      {
        wrapper = root
        findings[index] = finding(
          root,
          "'\(root)' is the project folder itself: its ContentInfo.plist and Contents/ are inside it, one level below the package root",
          hint:
            "package what is inside the folder, not the folder: pkgtool build \(root) (--format zip for the delivery zip), or cd \(root) && zip -r ../\(root).zip ContentInfo.plist Contents"
        )
      }
    }
  }

  /// Names at a project's root that are the project's own files, not content: `build` leaves
  /// them out, and saying so is a note, not a warning.
  static func isProjectFile(_ name: String) -> Bool {
    let lower = name.lowercased()
    let stem = lower.split(separator: ".", maxSplits: 1).first.map(String.init) ?? lower
    return ["readme", "license", "licence", "changelog", "notice", "authors", "copying"].contains(stem)
      || [".gitignore", ".gitattributes", ".editorconfig", ".pkgtoolignore"].contains(lower)
  }

  package func finish(_ summary: InspectionSummary, into findings: inout [Finding]) {
    // A project's root: build leaves out everything but ContentInfo.plist and Contents/. The
    // project's own files are listed in the report's summary (`InspectionResult.projectFiles`),
    // not findings; anything else may be content put in the wrong place.
    for left in summary.leftOut where left.reason == .outsideContent && !LayoutRule.isProjectFile(left.path) {
      findings.append(
        finding(
          left.path, "'\(left.path)' is at the project root, outside Contents/; build leaves it out of the package",
          hint: "move it into Contents/ if the app needs it, or delete it", severity: .warning))
    }
    guard !summary.integrityFailed, !sawContents, wrapper == nil else { return }
    findings.append(
      finding(nil, "the package has no Contents/ folder", hint: "put the content files in a folder named Contents"))
  }
}
