/// `content-version-increase`: with `--against OLD`, the version is greater than OLD's and the
/// product is the same.
package final class ContentVersionIncreaseRule: Rule {
  package static let description = RuleDescription(
    id: "content-version-increase", name: "Content version increases", category: .versions,
    summary: "(With --against OLD) a ContentVersion not greater than OLD's, or a different product ID.",
    rationale: "The store refuses an update whose version does not increase, and clients keep the old content.",
    details: [
      "Runs only with `--against OLD`; otherwise reports show it as skipped."
    ],
    triggering: [
      RuleExample.package("same version").with { $0.previous = ("com.example.sample", "1.0") },
      RuleExample.package("lower version").with { $0.previous = ("com.example.sample", "1.0.1") },
      RuleExample.package("other product").with { $0.previous = ("com.example.other", "0.9") },
    ],
    nonTriggering: [
      RuleExample.package("higher version").with { $0.previous = ("com.example.sample", "0.9.9") },
      RuleExample.package("no previous version"),
    ])

  private let previous: ContentInfo?

  package init(context: RuleContext) { previous = context.previous }

  package static func skipReason(_ context: RuleContext) -> String? {
    context.hostedContentOnly ?? (context.previous == nil ? "runs only with --against OLD" : nil)
  }

  package func finish(_ summary: InspectionSummary, into findings: inout [Finding]) {
    guard let previous, let bytes = summary.contentInfoBytes, let info = try? ContentInfo(decoding: bytes) else {
      return
    }
    if info.productIdentifier != previous.productIdentifier {
      findings.append(
        finding(
          ContentInfo.fileName,
          "the product is '\(info.productIdentifier)', the previous package's is '\(previous.productIdentifier)'",
          hint: "compare against a package of the same product"))
    } else if !(info.contentVersion > previous.contentVersion) {
      findings.append(
        finding(
          ContentInfo.fileName,
          "ContentVersion \(info.contentVersion) is not greater than the previous \(previous.contentVersion)",
          hint: "raise it with `pkgtool bump` (next: \(previous.contentVersion.bumped()))"))
    }
  }
}
