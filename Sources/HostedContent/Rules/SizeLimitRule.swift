/// `size-limit`: the package file and its unpacked content stay within `--max-size`
/// (2,000,000,000 bytes by default).
public final class SizeLimitRule: Rule {
  public static let description = RuleDescription(
    id: "size-limit", name: "Size limit",
    summary: "Package file or unpacked content over the limit (2,000,000,000 bytes unless --max-size says otherwise).",
    rationale: "Hosted content is limited to 2 GB per package; devices must also have room to unpack it.",
    triggering: [
      RuleExample.package("content over a 1000-byte limit", adding: [.file("Contents/big.txt", String(repeating: "x", count: 2000))]).with { $0.options.maxSize = 1000 },
    ],
    nonTriggering: [RuleExample.package("small content").with { $0.options.maxSize = 100_000 }])

  private let limit: UInt64

  public init(context: RuleContext) { limit = context.options.maxSize }

  public func finish(_ summary: InspectionSummary, into findings: inout [Finding]) {
    if let size = summary.packageSize, size > limit {
      findings.append(finding(nil, "the package file is \(size) bytes, over the limit of \(limit)", hint: "split the content into several products"))
    }
    if summary.contentSize > limit {
      findings.append(finding(nil, "the unpacked content is \(summary.contentSize == .max ? "more than \(UInt64.max)" : String(summary.contentSize)) bytes, over the limit of \(limit)", hint: "split the content into several products"))
    }
  }
}
