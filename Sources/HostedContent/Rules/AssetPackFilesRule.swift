/// `asset-pack-files`: the manifest's file selectors match every file of the asset-pack folder
/// and nothing else: relative paths that exist, a `file` selector on a file and a `directory`
/// selector on a folder, `Manifest.json` itself never selected, no file left out, no symlinks.
package final class AssetPackFilesRule: Rule {
  package static let description = RuleDescription(
    id: "asset-pack-files", name: "Asset-pack files", category: .assetPacks,
    summary:
      "(Asset-pack folders) a file selector that is absolute, holds '..', names nothing or the wrong kind, or selects Manifest.json; a file no selector covers; a symlink.",
    rationale:
      "ba-package packs what the selectors match from the folder it runs in: a selector that escapes or misses packs files that were not meant, or leaves content behind.",
    details: [
      "Every selector is relative, without `..`, `.` or empty parts; a `file` selector names a file and a `directory` selector a folder; nothing selects `Manifest.json`; every other file is covered; no symlinks or hard links."
    ],
    triggering: [
      RuleExample.assetPack("file left out", adding: [.file("extra.txt", "x")], expecting: "extra.txt"),
      RuleExample.assetPack(
        "selector escapes",
        manifest:
          #"{"assetPackID": "levels", "downloadPolicy": {"onDemand": {}}, "fileSelectors": [{"directory": "levels"}, {"file": "intro.txt"}, {"directory": "../secrets"}], "platforms": ["iOS"]}"#,
        expecting: "Manifest.json"),
      RuleExample.assetPack(
        "selector names nothing",
        manifest:
          #"{"assetPackID": "levels", "downloadPolicy": {"onDemand": {}}, "fileSelectors": [{"directory": "levels"}, {"file": "intro.txt"}, {"file": "gone.bin"}], "platforms": ["iOS"]}"#,
        expecting: "Manifest.json"),
      RuleExample.assetPack(
        "file selector on a folder",
        manifest:
          #"{"assetPackID": "levels", "downloadPolicy": {"onDemand": {}}, "fileSelectors": [{"file": "levels"}, {"file": "intro.txt"}], "platforms": ["iOS"]}"#,
        expecting: "Manifest.json"),
      RuleExample.assetPack(
        "manifest selected",
        manifest:
          #"{"assetPackID": "levels", "downloadPolicy": {"onDemand": {}}, "fileSelectors": [{"directory": "."}], "platforms": ["iOS"]}"#,
        expecting: "Manifest.json"),
      RuleExample.assetPack(
        "symlink", adding: [.symlink("levels/latest.json", "1.json")], expecting: "levels/latest.json"),
    ],
    nonTriggering: [
      RuleExample.assetPack("every file selected"),
      RuleExample.assetPack(
        "nested file selector",
        manifest:
          #"{"assetPackID": "levels", "downloadPolicy": {"onDemand": {}}, "fileSelectors": [{"file": "levels/1.json"}, {"file": "intro.txt"}], "platforms": ["iOS"]}"#
      ),
    ])

  private var manifestBytes: [UInt8]?
  private var files: [String] = []
  private var directories: Set<String> = []

  package init(context: RuleContext) {}

  package static func skipReason(_ context: RuleContext) -> String? {
    context.isAssetPack ? nil : "applies to Background Assets asset-pack folders"
  }

  package func inspect(_ inspected: InspectedEntry, into findings: inout [Finding]) {
    let entry = inspected.entry
    switch entry.kind {
    case .file:
      if entry.path == AssetPackManifest.fileName {
        if entry.size <= UInt64(inspected.head.count) { manifestBytes = Array(inspected.head) }
      } else {
        files.append(entry.path)
      }
    case .directory: directories.insert(entry.path)
    case .symlink, .hardLink:
      findings.append(
        finding(
          entry.path, "an asset pack carries no links; '\(entry.path)' is a \(entry.kind.rawValue)",
          hint: "replace it with a copy of the file it points to"))
    default: break  // special-file reports the rest
    }
  }

  /// Why `path` cannot be a selector's path, or nil.
  static func problem(with path: String) -> String? {
    if path.isEmpty { return "a selector's path is empty" }
    if path.hasPrefix("/") {
      return "the selector '\(path)' is absolute; ba-package resolves selectors against the folder it runs in"
    }
    let parts = path.split(separator: "/", omittingEmptySubsequences: false)
    if parts.contains("..") { return "the selector '\(path)' holds '..' and may reach outside the asset-pack folder" }
    if parts.contains(".") || parts.contains("") {
      return "the selector '\(path)' selects the whole folder (or has an empty or '.' part), Manifest.json included"
    }
    return nil
  }

  package func finish(_ summary: InspectionSummary, into findings: inout [Finding]) {
    // A manifest that does not parse is asset-pack-manifest's finding.
    guard let bytes = manifestBytes, let manifest = AssetPackManifest.parse(bytes).manifest else { return }
    var directorySelectors: [String] = []
    var fileSelectors: Set<String> = []
    for selector in manifest.fileSelectors {
      if let problem = AssetPackFilesRule.problem(with: selector.path) {
        findings.append(finding(AssetPackManifest.fileName, problem))
        continue
      }
      switch selector {
      case .file(let path):
        if path == AssetPackManifest.fileName {
          findings.append(finding(AssetPackManifest.fileName, "the selector '\(path)' selects the manifest itself"))
        } else if directories.contains(path) {
          findings.append(
            finding(
              AssetPackManifest.fileName, "the file selector '\(path)' names a folder; use {\"directory\": \"\(path)\"}"
            ))
        } else if !files.contains(path) {
          findings.append(
            finding(AssetPackManifest.fileName, "the file selector '\(path)' names no file in the folder"))
        } else {
          fileSelectors.insert(path)
        }
      case .directory(let path):
        if files.contains(path) {
          findings.append(
            finding(
              AssetPackManifest.fileName, "the directory selector '\(path)' names a file; use {\"file\": \"\(path)\"}"))
        } else if !directories.contains(path) {
          findings.append(
            finding(
              AssetPackManifest.fileName, "the directory selector '\(path)' names no folder in the asset-pack folder"))
        } else {
          directorySelectors.append(path + "/")
        }
      }
    }
    for path in files where !fileSelectors.contains(path) && !directorySelectors.contains(where: { path.hasPrefix($0) })
    {
      findings.append(
        finding(
          path, "no file selector covers '\(path)': ba-package would leave it out",
          hint: "add {\"file\": \"\(path)\"} or a directory selector for its folder, or delete it"))
    }
  }
}
