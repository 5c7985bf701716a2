/// `size-limit`: the package file and its unpacked content stay within `--max-size`
/// (2,000,000,000 bytes by default).
package final class SizeLimitRule: Rule {
  package static let description = RuleDescription(
    id: "size-limit", name: "Size limit", category: .limits,
    summary: "Package file or unpacked content over the limit (2,000,000,000 bytes unless --max-size says otherwise).",
    rationale: "Hosted content is limited to 2 GB per package; devices must also have room to unpack it.",
    details: [
      "Sums sizes without overflow and checks both the package file and the unpacked content against `--max-size` (2,000,000,000 bytes by default); `unpack` also stops writing as soon as the bytes produced pass the limit. In a folder (`build`, `validate DIR`), the files' sizes on disk are added as they are listed, so content over the limit is refused before its bytes are read.",
      "Applies to every kind of input, Background Assets asset-pack folders included: reading stops once the bytes decoded pass `--max-size`, and what was not read is never called valid. The bytes of entries the output refuses or `--keep-going` skips count too, so `unpack` and `install` stop where `validate` stops. With a rule set that leaves this rule out, the stop is still reported as its finding.",
      "Gives one finding for one cause: when the package file, the content, or both are over `--max-size`, one finding names each size that is over (reading stops at the limit, and the finding says so instead of quoting the partial count).",
    ],
    triggering: [
      RuleExample.package(
        "content over a 1000-byte limit", adding: [.file("Contents/big.txt", String(repeating: "x", count: 2000))]
      ).with { $0.options.maxSize = 1000 }
    ],
    nonTriggering: [RuleExample.package("small content").with { $0.options.maxSize = 100_000 }])

  private let limit: UInt64

  package init(context: RuleContext) { limit = context.options.maxSize }

  // Runs on every kind of input, asset packs included: a reading stopped at `--max-size` is
  // never a pass.

  package func finish(_ summary: InspectionSummary, into findings: inout [Finding]) {
    // One finding for one cause: the package is too large, whether its file, its content or
    // both say so.
    var over: [String] = []
    if let size = summary.packageSize, size > limit {
      over.append("the package file is \(groupedDigits(size)) bytes")
    }
    if summary.contentOverLimitOnDisk {
      over.append(
        "the content's files add up to at least \(groupedDigits(summary.contentSize)) bytes by their sizes on disk (reading stopped before the file that passes the limit)"
      )
    } else if summary.contentLimitExceeded {
      over.append("the unpacked content is more than \(groupedDigits(limit)) bytes (reading stopped there)")
    } else if summary.contentSize > limit {
      over.append(
        "the unpacked content is \(summary.contentSize == .max ? "more than \(groupedDigits(UInt64.max))" : groupedDigits(summary.contentSize)) bytes"
      )
    }
    guard !over.isEmpty else { return }
    findings.append(
      finding(
        nil, over.joined(separator: " and ") + ", over the limit of \(groupedDigits(limit)) bytes",
        hint: SizeLimitRule.hint))
  }

  /// The finding for a reading stopped at the limit, for a run whose rule set leaves this rule
  /// out (a stop is an error whatever the rules).
  package static func finding(stoppedAt limit: UInt64) -> Finding {
    Finding(
      ruleID: description.id, severity: .error, path: nil,
      message:
        "the unpacked content is more than \(groupedDigits(limit)) bytes (reading stopped there), over the limit of \(groupedDigits(limit)) bytes",
      hint: hint)
  }

  /// The finding for an export that would write its content past the limit once the package's
  /// symlinks become copies of their targets (an asset pack carries no links).
  package static func finding(derivedSize size: UInt64, limit: UInt64) -> Finding {
    Finding(
      ruleID: description.id, severity: .error, path: nil,
      message:
        "with its symlinks written as copies of their targets, the content would be \(size == .max ? "more than \(groupedDigits(size))" : "at least \(groupedDigits(size))") bytes, over the limit of \(groupedDigits(limit)) bytes; nothing was written",
      hint: "point fewer symlinks at large files, or raise --max-size if this limit is your own")
  }

  /// The finding for standard input (`-`) that held more than `limit` bytes: spooling it
  /// stopped there.
  package static func finding(standardInputOver limit: UInt64) -> Finding {
    Finding(
      ruleID: description.id, severity: .error, path: nil,
      message:
        "the package file is more than \(groupedDigits(limit)) bytes (reading stopped there), over the limit of \(groupedDigits(limit)) bytes",
      hint: hint)
  }

  static let hint = "split the content into several products, or raise --max-size if this limit is your own"

  /// The finding for a package that `build` would write over the limit (its size is known
  /// only once it is written).
  package static func finding(plannedPackageSize size: UInt64, limit: UInt64) -> Finding {
    Finding(
      ruleID: description.id, severity: description.severity, path: nil,
      message:
        "the package file would be \(groupedDigits(size)) bytes, over the limit of \(groupedDigits(limit)) bytes",
      hint: hint)
  }
}
