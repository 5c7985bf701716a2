/// `asset-pack-manifest`: an asset-pack folder's `Manifest.json` says what Apple's `ba-package`
/// needs: a well-formed `assetPackID`, one download policy (`essential` or `prefetch` with their
/// installation events, or an empty `onDemand`), file selectors, and known platforms.
package final class AssetPackManifestRule: Rule {
  package static let description = RuleDescription(
    id: "asset-pack-manifest", name: "Asset-pack manifest", category: .assetPacks,
    summary:
      "(Asset-pack folders) Manifest.json missing, not JSON, or with a bad assetPackID, downloadPolicy (one of essential/prefetch with installationEventTypes, or an empty onDemand), fileSelectors or platforms.",
    rationale:
      "ba-package refuses such a manifest, or packs something other than what was meant; checking on Linux finds it before the Mac step.",
    details: [
      "The manifest is a JSON object; `assetPackID` is 1–64 ASCII letters, digits, `.`, `-`, `_`, starts with a letter or digit and holds no `..` (pkgtool's narrow reading; Apple's tools may accept more); `downloadPolicy` has exactly one of `essential` and `prefetch` (each with a non-empty `installationEventTypes` of `firstInstallation`, `subsequentUpdate`) or `onDemand` (an empty object); `platforms` is a non-empty list of iOS, macOS, tvOS, visionOS; an unknown key is a warning."
    ],
    triggering: [
      RuleExample.assetPack("manifest is not an object", manifest: "[]", expecting: "Manifest.json"),
      RuleExample.assetPack(
        "bad pack ID",
        manifest:
          #"{"assetPackID": "../x", "downloadPolicy": {"onDemand": {}}, "fileSelectors": [{"directory": "levels"}, {"file": "intro.txt"}], "platforms": ["iOS"]}"#,
        expecting: "Manifest.json"),
      RuleExample.assetPack(
        "prefetch without events",
        manifest:
          #"{"assetPackID": "levels", "downloadPolicy": {"prefetch": {}}, "fileSelectors": [{"directory": "levels"}, {"file": "intro.txt"}], "platforms": ["iOS"]}"#
      ),
      RuleExample.assetPack(
        "two policies",
        manifest:
          #"{"assetPackID": "levels", "downloadPolicy": {"onDemand": {}, "essential": {"installationEventTypes": ["firstInstallation"]}}, "fileSelectors": [{"directory": "levels"}, {"file": "intro.txt"}], "platforms": ["iOS"]}"#
      ),
      RuleExample.assetPack(
        "unknown platform",
        manifest:
          #"{"assetPackID": "levels", "downloadPolicy": {"onDemand": {}}, "fileSelectors": [{"directory": "levels"}, {"file": "intro.txt"}], "platforms": ["watchOS"]}"#
      ),
      RuleExample.assetPack("not JSON", manifest: "assetPackID = levels"),
    ],
    nonTriggering: [
      RuleExample.assetPack("prefetch on iOS and macOS"),
      RuleExample.assetPack(
        "on demand",
        manifest:
          #"{"assetPackID": "Levels_2", "downloadPolicy": {"onDemand": {}}, "fileSelectors": [{"directory": "levels"}, {"file": "intro.txt"}], "platforms": ["tvOS"]}"#
      ),
    ])

  private var manifestBytes: [UInt8]?
  private var tooLarge = false

  package init(context: RuleContext) {}

  package static func skipReason(_ context: RuleContext) -> String? {
    context.isAssetPack ? nil : "applies to Background Assets asset-pack folders"
  }

  package func inspect(_ inspected: InspectedEntry, into findings: inout [Finding]) {
    guard inspected.entry.path == AssetPackManifest.fileName else { return }
    guard inspected.entry.kind == .file else {
      findings.append(
        finding(inspected.entry.path, "Manifest.json is a \(inspected.entry.kind.rawValue), it must be a file"))
      return
    }
    if inspected.entry.size > UInt64(inspected.head.count) {
      tooLarge = true
    } else {
      manifestBytes = Array(inspected.head)
    }
  }

  package func finish(_ summary: InspectionSummary, into findings: inout [Finding]) {
    if tooLarge {
      findings.append(finding(AssetPackManifest.fileName, "Manifest.json is larger than 256 KiB"))
      return
    }
    guard let bytes = manifestBytes else {
      if !summary.integrityFailed, !summary.paths.contains(AssetPackManifest.fileName) {
        let what =
          summary.format == .appleArchive
          ? "the archive has no Manifest.json at its root: it is not an asset pack"
          : "the asset-pack folder has no Manifest.json"
        findings.append(finding(nil, what, hint: "pkgtool export background-assets writes one"))
      }
      return
    }
    let parsed = AssetPackManifest.parse(bytes)
    for problem in parsed.problems {
      findings.append(
        finding(AssetPackManifest.fileName, problem, hint: "see docs/migration.md for the manifest's form"))
    }
    for key in parsed.unknownKeys {
      findings.append(
        finding(
          AssetPackManifest.fileName, "Manifest.json has a key ba-package does not know: '\(key)'", severity: .warning))
    }
  }
}
