import SystemIO

/// `asset-pack-stale-output`: a file in an asset pack that looks like an earlier `ba-package`
/// output (an Apple Archive) or a stray copy of `Manifest.json`, which the selectors would pack
/// into the new pack without a word.
package final class AssetPackStaleOutputRule: Rule {
  package static let description = RuleDescription(
    id: "asset-pack-stale-output", name: "Stale packaging output", category: .assetPacks,
    headline: "(Asset packs) an old Apple Archive or a copy of a Manifest.json inside the pack's folder.",
    summary:
      "(Asset packs) an Apple Archive (a .aar by name, or AA01/YAA1/AEA1/pbz* by its first bytes) or a copy of an asset-pack Manifest.json other than the pack's own.",
    rationale:
      "ba-package packs whatever the selectors match; an old .aar left in a selected folder (an earlier -o target) or a Manifest.json copy goes into the new pack silently, doubling its size or shipping stale data.",
    severity: .warning,
    details: [
      "Apple's `ba-package template` manifest says the selectors' paths are relative and resolved against the folder `ba-package` runs in, and that a directory selector recursively includes the contents of its folder (the comments of the `ba-package template` manifest attached to an Apple Developer Forums post, developer.apple.com/forums/content/attachment/6eeeed59-0ed8-40c7-bee7-b12b919411c7; \"Creating managed asset packs\", developer.apple.com/documentation/backgroundassets/creating-managed-asset-packs). Nothing in Apple's documentation says it leaves out an earlier archive or another manifest, so pkgtool assumes it does not.",
      "Reports, in an asset-pack folder or `.aar`: a file named `*.aar` or `*.aea` (any case), or whose first bytes are those of an Apple Archive (`AA01`, `YAA1`, `pbzx`/`pbze`/`pbzz`/`pbz4`) or an encrypted one (`AEA1`); and a file other than the root `Manifest.json` whose first bytes hold both `\"assetPackID\"` and `\"fileSelectors\"` (a copy of an asset-pack manifest, whatever its name: `Contents/Manifest.json`, `Manifest copy.json`, `Manifest.json.bak`). A game's own `manifest.json` without those keys is content and is not reported.",
      "A warning: the file may be meant. Delete it, or move it out of the asset-pack folder, and export or run ba-package again.",
    ],
    triggering: [
      RuleExample.assetPack(
        "an earlier archive in a selected folder",
        adding: [.file("levels/levels.aar", bytes: Array("AA01".utf8) + [0, 0])],
        expecting: "levels/levels.aar"),
      RuleExample.assetPack(
        "an archive by its bytes", adding: [.file("levels/old.bin", bytes: Array("YAA1".utf8) + [0, 0])],
        expecting: "levels/old.bin"),
      RuleExample.assetPack(
        "a manifest copy", adding: [.file("levels/Manifest copy.json", RuleExample.assetPackManifest)],
        expecting: "levels/Manifest copy.json"),
    ],
    nonTriggering: [
      RuleExample.assetPack("only the pack's own manifest"),
      RuleExample.assetPack(
        "a level list named manifest.json", adding: [.file("levels/manifest.json", #"{"levels": 3}"#)]),
    ])

  package init(context: RuleContext) {}

  package static func skipReason(_ context: RuleContext) -> String? {
    context.isAssetPack ? nil : "applies to Background Assets asset packs"
  }

  /// First bytes of Apple Archive streams and of Apple Encrypted Archives.
  static let archiveMagics: [[UInt8]] = ["AA01", "YAA1", "AEA1", "pbzx", "pbze", "pbzz", "pbz4"].map { Array($0.utf8) }

  /// True when `head` holds both `"assetPackID"` and `"fileSelectors"`: an asset-pack manifest.
  static func holdsManifestKeys(_ head: ArraySlice<UInt8>) -> Bool {
    func contains(_ needle: [UInt8]) -> Bool { ByteSearch.first(needle, in: head) != nil }
    return contains(Array(#""assetPackID""#.utf8)) && contains(Array(#""fileSelectors""#.utf8))
  }

  package func inspect(_ inspected: InspectedEntry, into findings: inout [Finding]) {
    let entry = inspected.entry
    guard entry.kind == .file, entry.path != AssetPackManifest.fileName else { return }
    let name = (entry.path.split(separator: "/").last.map(String.init) ?? entry.path).lowercased()
    if name.hasSuffix(".aar") || name.hasSuffix(".aea")
      || AssetPackStaleOutputRule.archiveMagics.contains(where: { inspected.head.starts(with: $0) })
    {
      findings.append(
        finding(
          entry.path,
          "'\(entry.path)' is an Apple Archive, perhaps an earlier ba-package output: the selectors would pack it into the new asset pack",
          hint: "delete it or move it out of the asset-pack folder, then package again"))
    } else if AssetPackStaleOutputRule.holdsManifestKeys(inspected.head) {
      findings.append(
        finding(
          entry.path,
          "'\(entry.path)' is a copy of an asset-pack Manifest.json: the selectors would pack it into the asset pack as content",
          hint: "delete it or move it out of the asset-pack folder; only the root Manifest.json describes the pack"))
    }
  }
}
