/// `asset-pack-files`: the manifest's file selectors match every file of the asset-pack folder
/// and nothing else: relative paths that exist, a `file` selector on a file and a `directory`
/// selector on a folder (1.x), or a `fileSource` under a `sourceRoot` inside the folder copied to
/// a distinct relative `fileDestination` (2.x); `Manifest.json` itself never selected, no file
/// left out, no symlinks.
package final class AssetPackFilesRule: Rule {
  package static let description = RuleDescription(
    id: "asset-pack-files", name: "Asset-pack files", category: .assetPacks,
    headline:
      "(Asset-pack folders) a file selector that escapes the folder or misses, a shared destination, an uncovered file.",
    summary:
      "(Asset-pack folders) a file selector that is absolute, holds '..', names nothing or the wrong kind, or selects Manifest.json; a 2.x sourceRoot outside the folder, a fileDestination that is not a plain relative path or that two selectors share; a file no selector covers; a symlink.",
    rationale:
      "ba-package packs what the selectors match from the folder it runs in: a selector that escapes or misses packs files that were not meant, or leaves content behind.",
    details: [
      "Every selector is relative, without `..`, `.` or empty parts; a `file` selector names a file and a `directory` selector a folder; nothing selects `Manifest.json`; every other file is covered; no symlinks or hard links.",
      "A 2.x manifest (`sourceRoot` with `{\"fileSource\": …, \"fileDestination\": …}` selectors) is resolved the same way, each `fileSource` under `sourceRoot`: `sourceRoot` is `.` or a folder of the asset-pack folder, never absolute and never with `..`; a `fileSource` names a file or a folder (a folder and everything in it); a `fileDestination` is a relative path inside the pack without `..`, `.` or empty parts, not `Manifest.json`, and no two selectors write the same destination (one copy would replace the other).",
      "An `.aar` is read as the folder it was made from (pkgtool's own exports keep the same paths: `sourceRoot` `.` and `Contents` to `Contents`).",
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
      RuleExample.assetPack(
        "2.x sourceRoot escapes",
        manifest:
          #"{"assetPackID": "levels", "downloadPolicy": {"onDemand": {}}, "sourceRoot": "../elsewhere", "fileSelectors": [{"fileSource": "levels", "fileDestination": "levels"}, {"fileSource": "intro.txt", "fileDestination": "intro.txt"}], "platforms": ["iOS"]}"#,
        expecting: "Manifest.json"),
      RuleExample.assetPack(
        "2.x absolute sourceRoot",
        manifest:
          #"{"assetPackID": "levels", "downloadPolicy": {"onDemand": {}}, "sourceRoot": "/Users/me/pack", "fileSelectors": [{"fileSource": "levels", "fileDestination": "levels"}, {"fileSource": "intro.txt", "fileDestination": "intro.txt"}], "platforms": ["iOS"]}"#,
        expecting: "Manifest.json"),
      RuleExample.assetPack(
        "2.x destination escapes",
        manifest:
          #"{"assetPackID": "levels", "downloadPolicy": {"onDemand": {}}, "sourceRoot": ".", "fileSelectors": [{"fileSource": "levels", "fileDestination": "../levels"}, {"fileSource": "intro.txt", "fileDestination": "intro.txt"}], "platforms": ["iOS"]}"#,
        expecting: "Manifest.json"),
      RuleExample.assetPack(
        "2.x two selectors, one destination",
        manifest:
          #"{"assetPackID": "levels", "downloadPolicy": {"onDemand": {}}, "sourceRoot": ".", "fileSelectors": [{"fileSource": "levels", "fileDestination": "data"}, {"fileSource": "intro.txt", "fileDestination": "data"}], "platforms": ["iOS"]}"#,
        expecting: "Manifest.json"),
      RuleExample.assetPack(
        "2.x source missing under sourceRoot",
        manifest:
          #"{"assetPackID": "levels", "downloadPolicy": {"onDemand": {}}, "sourceRoot": "levels", "fileSelectors": [{"fileSource": "intro.txt", "fileDestination": "intro.txt"}], "platforms": ["iOS"]}"#,
        expecting: "Manifest.json"),
    ],
    nonTriggering: [
      RuleExample.assetPack("every file selected"),
      RuleExample.assetPack(
        "2.x selectors under sourceRoot",
        manifest:
          #"{"assetPackID": "levels", "downloadPolicy": {"onDemand": {}}, "sourceRoot": ".", "language": "ja", "fileSelectors": [{"fileSource": "levels", "fileDestination": "levels"}, {"fileSource": "intro.txt", "fileDestination": "text/intro.txt"}], "platforms": ["iOS"]}"#
      ),
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
    switch RelativePathFlaw(of: path) {
    case .empty?: return "a selector's path is empty"
    case .absolute?:
      return "the selector '\(path)' is absolute; ba-package resolves selectors against the folder it runs in"
    case .parent?: return "the selector '\(path)' holds '..' and may reach outside the asset-pack folder"
    case .emptyOrDotPart?:
      return "the selector '\(path)' selects the whole folder (or has an empty or '.' part), Manifest.json included"
    case nil: return nil
    }
  }

  package func finish(_ summary: InspectionSummary, into findings: inout [Finding]) {
    // A manifest that does not parse is asset-pack-manifest's finding.
    guard let bytes = manifestBytes, let manifest = AssetPackManifest.parse(bytes).manifest else { return }
    var directorySelectors: [String] = []
    var fileSelectors: Set<String> = []
    // 2.x: the selectors' paths are relative to sourceRoot, itself relative to the manifest.
    var root = ""
    if manifest.form == .v2 {
      let sourceRoot = manifest.sourceRoot ?? "."
      if let problem = AssetPackFilesRule.problem(withSourceRoot: sourceRoot) {
        findings.append(finding(AssetPackManifest.fileName, problem))
        return
      }
      if sourceRoot != "." {
        let trimmed = sourceRoot.hasSuffix("/") ? String(sourceRoot.dropLast()) : sourceRoot
        guard directories.contains(trimmed) else {
          findings.append(
            finding(AssetPackManifest.fileName, "sourceRoot '\(sourceRoot)' names no folder in the asset-pack folder"))
          return
        }
        root = trimmed + "/"
      }
    }
    var destinations: [String: String] = [:]
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
      case .copy(let source, let destination):
        if let problem = AssetPackFilesRule.problem(withDestination: destination) {
          findings.append(finding(AssetPackManifest.fileName, problem))
          continue
        }
        if let earlier = destinations[destination] {
          findings.append(
            finding(
              AssetPackManifest.fileName,
              "the selectors for '\(earlier)' and '\(source)' both write '\(destination)' in the pack; one would replace the other"
            ))
          continue
        }
        destinations[destination] = source
        let path = root + source
        if path == AssetPackManifest.fileName {
          findings.append(
            finding(AssetPackManifest.fileName, "the fileSource '\(source)' selects the manifest itself"))
        } else if files.contains(path) {
          fileSelectors.insert(path)
        } else if directories.contains(path) {
          directorySelectors.append(path + "/")
        } else {
          findings.append(
            finding(
              AssetPackManifest.fileName,
              "the fileSource '\(source)' names no file or folder under sourceRoot '\(manifest.sourceRoot ?? ".")'"))
        }
      }
    }
    for path in files where !fileSelectors.contains(path) && !directorySelectors.contains(where: { path.hasPrefix($0) })
    {
      let add =
        manifest.form == .v2
        ? "add a fileSource/fileDestination selector for it or its folder"
        : "add {\"file\": \"\(path)\"} or a directory selector for its folder"
      findings.append(
        finding(
          path, "no file selector covers '\(path)': ba-package would leave it out", hint: add + ", or delete it"))
    }
  }

  /// Why `sourceRoot` cannot be a 2.x manifest's source root, or nil: it must be relative and
  /// stay inside the asset-pack folder ("." is the folder itself).
  static func problem(withSourceRoot sourceRoot: String) -> String? {
    if sourceRoot.isEmpty { return "sourceRoot is empty; use \".\" for the manifest's folder" }
    if sourceRoot.hasPrefix("/") {
      return "sourceRoot '\(sourceRoot)' is absolute; it must be a folder relative to Manifest.json"
    }
    let parts = sourceRoot.split(separator: "/", omittingEmptySubsequences: true)
    if parts.contains("..") {
      return "sourceRoot '\(sourceRoot)' holds '..' and may reach outside the asset-pack folder"
    }
    if sourceRoot != "." && parts.contains(".") {
      return "sourceRoot '\(sourceRoot)' has a '.' part; name the folder plainly"
    }
    return nil
  }

  /// Why `destination` cannot be a 2.x selector's `fileDestination`, or nil: a relative path
  /// inside the pack, without `..`, `.` or empty parts, and not the manifest's own name.
  static func problem(withDestination destination: String) -> String? {
    switch RelativePathFlaw(of: destination) {
    case .empty?: return "a fileDestination is empty"
    case .absolute?: return "the fileDestination '\(destination)' is absolute; it must be a path inside the pack"
    case .parent?: return "the fileDestination '\(destination)' holds '..' and would leave the pack"
    case .emptyOrDotPart?:
      return "the fileDestination '\(destination)' has an empty or '.' part; name the path inside the pack plainly"
    case nil: break
    }
    if destination == AssetPackManifest.fileName {
      return "the fileDestination '\(destination)' would replace the pack's own Manifest.json"
    }
    return nil
  }
}

/// What keeps a manifest path from being a plain relative path inside the pack, in the order
/// the checks ask: empty, absolute, a `..` part, an empty or `.` part.
enum RelativePathFlaw {
  case empty, absolute, parent, emptyOrDotPart

  init?(of path: String) {
    if path.isEmpty {
      self = .empty
      return
    }
    if path.hasPrefix("/") {
      self = .absolute
      return
    }
    let parts = path.split(separator: "/", omittingEmptySubsequences: false)
    if parts.contains("..") {
      self = .parent
    } else if parts.contains(".") || parts.contains("") {
      self = .emptyOrDotPart
    } else {
      return nil
    }
  }
}
