/// `no-external-symlink`: every symlink, followed through the package's other symlinks, stays
/// inside `Contents/`.
package final class NoExternalSymlinkRule: Rule {
  package static let description = RuleDescription(
    id: "no-external-symlink", name: "No external symlinks", category: .content,
    headline: "A symlink that leads out of Contents/ (directly or through other links), is absolute, or loops.",
    summary:
      "A symlink whose target, followed through other symlinks in the package (names matched case- and normalization-insensitively, as on APFS), leaves Contents/; absolute targets; targets with NUL or control characters; loops. Dangling internal links are warned about.",
    rationale: "A link that leaves the content lets an unpacker or the app read or overwrite files outside its folder.",
    securitySeverity: 8.1,
    details: [
      "Resolves each link as a file system would: relative to the link's folder, through other links in the package, applying `..` after each expansion; it reports absolute targets, chains that leave `Contents/`, and loops (more than 40 hops). A link to a path that is not in the package is a warning.",
      "Matches names as APFS and HFS+ volumes do by default, after Unicode's full case folding and canonical decomposition (see `duplicate-path`): `L/..` goes through a link named `l`, and `s/..` through one named `\u{17F}` (long s), and refuses targets holding NUL or other control characters (the OS cuts a target at NUL).",
      "`unpack` creates symlinks last, and only those that resolve inside `Contents/`; one it refuses that this rule had not reported is reported then.",
    ],
    triggering: [
      RuleExample.package(
        "absolute target", adding: [.symlink("Contents/passwd", "/etc/passwd")], expecting: "Contents/passwd"),
      RuleExample.package(
        "escaping relative target", adding: [.symlink("Contents/up", "../../outside")], expecting: "Contents/up"),
      RuleExample.package(
        "two-hop escape",
        adding: [.symlink("Contents/a", "b/../.."), .directory("Contents/b"), .symlink("Contents/c", "a/../x")],
        expecting: "Contents/c"),
      RuleExample.package(
        "to ContentInfo.plist", adding: [.symlink("Contents/info", "../ContentInfo.plist")], expecting: "Contents/info"),
      RuleExample.package(
        "loop", adding: [.symlink("Contents/x", "y"), .symlink("Contents/y", "x")], expecting: "Contents/x"),
      RuleExample.package(
        "escape through a link named with a folded letter",
        adding: [
          .directory("Contents/d"), .symlink("Contents/d/\u{17F}", ".."), .file("Contents/y", "y"),
          .symlink("Contents/x", "d/s/../../y"),
        ],
        expecting: "Contents/x"),
    ],
    nonTriggering: [
      RuleExample.package(
        "internal link",
        adding: [
          .directory("Contents/levels"), .file("Contents/levels/1.json", "{}"),
          .symlink("Contents/latest.json", "levels/1.json"),
        ]),
      RuleExample.package(
        "chain that stays inside",
        adding: [
          .directory("Contents/d"), .symlink("Contents/d/up", ".."), .symlink("Contents/alias", "d/up/readme.txt"),
        ]),
    ])

  private var resolver: SymlinkResolver?
  /// Each symlink's path and verbatim target, in order.
  private var links: [(path: String, target: String)] = []

  package init(context: RuleContext) {}

  package static func skipReason(_ context: RuleContext) -> String? {
    (context.isAssetPack ? "asset packs carry no symlinks (asset-pack-files refuses them)" : nil)
  }

  package func inspect(_ inspected: InspectedEntry, into findings: inout [Finding]) {
    guard inspected.entry.kind == .symlink, !inspected.entry.isWrapperMember else { return }
    if resolver == nil { resolver = SymlinkResolver(paths: inspected.paths) }
    resolver!.add(inspected.entry)
    links.append((inspected.entry.path, inspected.entry.linkTarget ?? ""))
  }

  /// The finding for a symlink the sink would not create because it leaves `Contents/`, when
  /// this rule had not flagged it (the sink resolves links again, as a second line of defence).
  package static func finding(forRefusedSymlink path: String) -> Finding {
    finding(path, "the symlink does not stay inside Contents/; it was not created", severity: .error)
  }

  package func finish(_ summary: InspectionSummary, into findings: inout [Finding]) {
    guard let resolver else { return }
    for (path, target) in links {
      if SymlinkResolver.hasControlCharacter(target) {
        findings.append(
          finding(
            path,
            "the symlink target \(target.debugDescription) holds a control character (the OS cuts a target at NUL, so it would point elsewhere than it reads)",
            hint: "use a plain relative target inside Contents/"))
        continue
      }
      switch resolver.resolve(path) {
      case .absolute(let t):
        findings.append(
          finding(
            path, "the symlink points to the absolute path '\(t)'", hint: "use a relative target inside Contents/"))
      case .abovePackageRoot:
        findings.append(
          finding(
            path, "the symlink '\(target)' leads outside the package", hint: "point it at a file inside Contents/"))
      case .loop:
        findings.append(
          finding(path, "the symlink '\(target)' never resolves (a loop)", hint: "break the cycle of links"))
      case .inside(let final, let exists):
        if final != "Contents" && !final.hasPrefix("Contents/") {
          findings.append(
            finding(
              path,
              "the symlink '\(target)' leads to '\(final.isEmpty ? "the package root" : final)', outside Contents/",
              hint: "point it at a file inside Contents/"))
        } else if !exists {
          findings.append(
            finding(
              path, "the symlink '\(target)' points to '\(final)', which is not in the package",
              hint: "add the target or remove the link", severity: .warning))
        }
      }
    }
  }
}
