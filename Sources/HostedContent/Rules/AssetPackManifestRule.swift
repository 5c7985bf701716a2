/// `asset-pack-manifest`: an asset-pack folder's `Manifest.json` says what Apple's `ba-package`
/// needs: a well-formed `assetPackID` (no dots), one download policy (`essential` or `prefetch`
/// with their installation events, or an empty `onDemand`), file selectors of one form (1.x or
/// 2.x), known platforms each named once, and a well-formed `language` if any.
package final class AssetPackManifestRule: Rule {
  package static let description = RuleDescription(
    id: "asset-pack-manifest", name: "Asset-pack manifest", category: .assetPacks,
    headline:
      "(Asset-pack folders) Manifest.json missing, not JSON, or with a bad ID, download policy, selectors or platforms.",
    summary:
      "(Asset-pack folders) Manifest.json missing, not JSON, or with a bad assetPackID (a dot included), downloadPolicy (one of essential/prefetch with installationEventTypes, or an empty onDemand), fileSelectors (1.x and 2.x forms mixed), platforms (unknown or named twice) or language.",
    rationale:
      "ba-package refuses such a manifest, or packs something other than what was meant; checking on Linux finds it before the Mac step.",
    details: [
      "The manifest is a JSON object; `downloadPolicy` has exactly one of `essential` and `prefetch` (each with a non-empty `installationEventTypes` of `firstInstallation`, `subsequentUpdate`) or `onDemand` (an empty object); an unknown key is a warning.",
      "`assetPackID` is 1–64 ASCII letters, digits, `-` and `_`, starting with a letter or digit. A dot is an error: App Store Connect refuses a dot in an asset-pack ID, so a reverse-DNS name such as `com.example.book` cannot be uploaded. Apple's pages consulted do not list the accepted characters: App Store Connect Help identifies a pack by the asset-pack ID set in its manifest and by its app (\"Upload Apple-hosted asset packs\", developer.apple.com/help/app-store-connect/manage-asset-packs/upload-apple-hosted-asset-packs), and Apple's examples are plain names (`Tutorial` in \"Uploading and versioning Apple hosted background assets\", developer.apple.com/documentation/appstoreconnectapi/managing-apple-hosted-background-assets; `AssetPackID1` in \"Apple-hosted asset pack size limits\"). The letters-digits-`-`-`_` set and the 64-byte limit are therefore pkgtool's narrow reading, so that an ID it accepts is safe to hand on.",
      "`platforms` is a non-empty list of iOS, macOS, tvOS, visionOS, each named once: \"Creating managed asset packs\" (developer.apple.com/documentation/backgroundassets/creating-managed-asset-packs) says Apple-Hosted Background Assets is available on all platforms except watchOS, and Managed Background Assets targets iOS, iPadOS (the `iOS` platform), macOS, tvOS and visionOS 26 and later (App Store Connect Help, \"Overview of Apple-hosted asset packs\"). `watchOS` is refused; a platform named twice is an error.",
      "Two forms are read. 1.x: selectors `{\"file\": p}` and `{\"directory\": p}`, relative to the folder `ba-package` runs in. 2.x: a top-level `sourceRoot` (the folder the selectors are relative to) and selectors `{\"fileSource\": p, \"fileDestination\": q}` that copy `p` under `sourceRoot` to `q` in the pack. Selectors of both forms in one manifest, a `sourceRoot` beside 1.x selectors, or 2.x selectors without a `sourceRoot` are errors; asset-pack-files resolves the paths.",
      "`language` (optional) is a BCP-47 tag of a language (ISO 639, 2 or 3 letters), an optional script and an optional region, as \"Reducing download and storage demands with localized asset packs\" describes for the `language` key of Xcode 27's `ba-package template`; variants and extensions are refused.",
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
      RuleExample.assetPack(
        "reverse-DNS pack ID (a dot)",
        manifest:
          #"{"assetPackID": "com.example.levels", "downloadPolicy": {"onDemand": {}}, "fileSelectors": [{"directory": "levels"}, {"file": "intro.txt"}], "platforms": ["iOS"]}"#,
        expecting: "Manifest.json"),
      RuleExample.assetPack(
        "platform named twice",
        manifest:
          #"{"assetPackID": "levels", "downloadPolicy": {"onDemand": {}}, "fileSelectors": [{"directory": "levels"}, {"file": "intro.txt"}], "platforms": ["iOS", "macOS", "iOS"]}"#,
        expecting: "Manifest.json"),
      RuleExample.assetPack(
        "1.x and 2.x selectors mixed",
        manifest:
          #"{"assetPackID": "levels", "downloadPolicy": {"onDemand": {}}, "sourceRoot": ".", "fileSelectors": [{"directory": "levels"}, {"fileSource": "intro.txt", "fileDestination": "intro.txt"}], "platforms": ["iOS"]}"#,
        expecting: "Manifest.json"),
      RuleExample.assetPack(
        "2.x selectors without sourceRoot",
        manifest:
          #"{"assetPackID": "levels", "downloadPolicy": {"onDemand": {}}, "fileSelectors": [{"fileSource": "levels", "fileDestination": "levels"}, {"fileSource": "intro.txt", "fileDestination": "intro.txt"}], "platforms": ["iOS"]}"#,
        expecting: "Manifest.json"),
      RuleExample.assetPack(
        "language with a variant",
        manifest:
          #"{"assetPackID": "levels", "downloadPolicy": {"onDemand": {}}, "sourceRoot": ".", "language": "de-DE-1996", "fileSelectors": [{"fileSource": "levels", "fileDestination": "levels"}, {"fileSource": "intro.txt", "fileDestination": "intro.txt"}], "platforms": ["iOS"]}"#,
        expecting: "Manifest.json"),
    ],
    nonTriggering: [
      RuleExample.assetPack("prefetch on iOS and macOS"),
      RuleExample.assetPack(
        "on demand",
        manifest:
          #"{"assetPackID": "Levels_2", "downloadPolicy": {"onDemand": {}}, "fileSelectors": [{"directory": "levels"}, {"file": "intro.txt"}], "platforms": ["tvOS"]}"#
      ),
      RuleExample.assetPack(
        "2.x form with a language",
        manifest:
          #"{"assetPackID": "levels-ja", "downloadPolicy": {"onDemand": {}}, "sourceRoot": ".", "language": "zh-Hant-TW", "fileSelectors": [{"fileSource": "levels", "fileDestination": "levels"}, {"fileSource": "intro.txt", "fileDestination": "intro.txt"}], "platforms": ["iOS", "visionOS"]}"#
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
