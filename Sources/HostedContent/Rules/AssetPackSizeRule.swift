/// `asset-pack-size`: an asset pack whose declared content alone passes Apple's 200 GB total for
/// all of an app's Apple-hosted asset packs.
package final class AssetPackSizeRule: Rule {
  package static let description = RuleDescription(
    id: "asset-pack-size", name: "Asset-pack size", category: .assetPacks,
    headline:
      "(Asset packs) the files add up to more than the 200 GB App Store Connect allows for all of an app's asset packs.",
    summary:
      "(Asset packs) the files' declared sizes add up to more than the 200 GB App Store Connect allows for all of an app's Apple-hosted asset packs together.",
    rationale:
      "App Store Connect counts the largest uploaded version of each asset pack against one 200 GB total per app; a pack that alone is near or over it leaves no room for the others, or cannot be uploaded.",
    severity: .warning,
    details: [
      "Adds the declared sizes (each file entry's `size`: the folder's file sizes, or the sizes an `.aar` declares) without overflow and warns when the sum is over 200,000,000,000 bytes, or over `--asset-pack-room` (the part of the 200 GB the app's other packs leave for this one).",
      "The figures are Apple's: App Store Connect Help, \"Apple-hosted asset pack size limits\" (developer.apple.com/help/app-store-connect/reference/apple-hosted-asset-pack-size-limits): the asset pack total is 200 GB per app (for each asset pack, the largest of its versions eligible for TestFlight or the App Store; the packs' largest sizes are added; an email comes at 80%), and an app has at most 100 asset packs. \"Creating managed asset packs\" says Apple-Hosted Background Assets hosts up to 200GB of compressed assets. Apple states no separate limit for one pack, so one pack is measured against the per-app total.",
      "A warning, not an error: Apple counts compressed bytes and `ba-package` compresses, so a pack whose declared (uncompressed) size is over may still fit; the total across packs and the count of packs need the whole app and are not checked here. The reading itself still stops at `--max-size` (size-limit).",
    ],
    triggering: [
      RuleExample.assetPack(
        "over a 20-byte limit (the example lowers 200 GB)",
        adding: [
          .file("levels/2.json", String(repeating: "x", count: 40))
        ]
      ).with { $0.options.assetPackLimit = 20 }
    ],
    nonTriggering: [RuleExample.assetPack("a small pack")])

  private let limit: UInt64
  private var declared: UInt64 = 0

  package init(context: RuleContext) { limit = context.options.assetPackLimit }

  package static func skipReason(_ context: RuleContext) -> String? {
    context.isAssetPack ? nil : "applies to Background Assets asset packs"
  }

  package func inspect(_ inspected: InspectedEntry, into findings: inout [Finding]) {
    guard inspected.entry.kind == .file else { return }
    let (sum, overflow) = declared.addingReportingOverflow(inspected.entry.size)
    declared = overflow ? .max : sum
  }

  package func finish(_ summary: InspectionSummary, into findings: inout [Finding]) {
    guard declared > limit else { return }
    let size = declared == .max ? "more than \(groupedDigits(UInt64.max))" : groupedDigits(declared)
    let over =
      limit == ValidationOptions.appleHostedAssetPackTotal
      ? "the \(groupedDigits(limit)) bytes App Store Connect allows for all of an app's Apple-hosted asset packs together (compressed)"
      : "--asset-pack-room (\(groupedDigits(limit)) bytes left of the 200 GB App Store Connect allows for all of an app's Apple-hosted asset packs)"
    findings.append(
      finding(
        nil,
        "the asset pack's files declare \(size) bytes, over \(over)",
        hint: "split the content into several asset packs, or host it yourself (Managed Background Assets)"))
  }
}
