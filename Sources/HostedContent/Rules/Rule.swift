import XAR

/// A check over a package's entries. One rule per file; each carries its own description, and
/// that description is the documentation, the `rules` listing and the test data.
///
/// A rule never prints and never throws for a finding: it appends ``Finding`` values. Rules that
/// need the whole picture keep small records in ``inspect(_:into:)`` and decide in
/// ``finish(_:into:)``.
public protocol Rule: AnyObject {
  /// What the rule checks, with examples that must and must not trigger it.
  static var description: RuleDescription { get }
  /// A fresh rule for one run.
  init(context: RuleContext)
  /// Looks at one entry as it passes.
  func inspect(_ entry: InspectedEntry, into findings: inout [Finding])
  /// Decides what needs every entry.
  func finish(_ summary: InspectionSummary, into findings: inout [Finding])
  /// Why the rule does not run with this context (say, `--against` is missing), or nil when it
  /// runs. Reports show such a rule as skipped, not passed.
  static func skipReason(_ context: RuleContext) -> String?
}

extension Rule {
  /// Nothing per entry, by default.
  public func inspect(_ entry: InspectedEntry, into findings: inout [Finding]) {}
  /// Nothing at the end, by default.
  public func finish(_ summary: InspectionSummary, into findings: inout [Finding]) {}
  /// Runs always, by default.
  public static func skipReason(_ context: RuleContext) -> String? { nil }

  /// A finding of this rule at its default severity.
  public func finding(_ path: String?, _ message: String, hint: String? = nil, severity: Severity? = nil) -> Finding {
    Self.finding(path, message, hint: hint, severity: severity)
  }

  /// The same, for a rule's static factories of findings about facts found after the run (a
  /// sink's second line of defence).
  public static func finding(_ path: String?, _ message: String, hint: String? = nil, severity: Severity? = nil)
    -> Finding
  {
    Finding(
      ruleID: description.id, severity: severity ?? description.severity, path: path,
      message: message, hint: hint)
  }
}

/// The description a rule carries.
public struct RuleDescription: Sendable {
  /// Stable, kebab-case: `no-executable`.
  public let id: String
  /// A short title.
  public let name: String
  /// Where the rule stands in the catalog (and in docs/rules.md).
  public let category: RuleCategory
  /// What it rejects, in full: one paragraph.
  public let summary: String
  /// What it rejects in one line of at most ``headlineLimit`` characters: the title a code-scanning
  /// dashboard shows for an alert (SARIF's `shortDescription`). When a rule gives none, the summary
  /// stands for it if it fits, else the summary's words up to the limit and an ellipsis.
  public var headline: String {
    if let givenHeadline, Self.fitsHeadline(givenHeadline) { return givenHeadline }
    let line = summary.split(whereSeparator: \.isNewline).joined(separator: " ")
    if Self.fitsHeadline(line) { return line }
    var out = ""
    for word in line.split(separator: " ") {
      guard out.count + word.count + 2 <= Self.headlineLimit else { break }
      out += out.isEmpty ? String(word) : " " + word
    }
    return out + "…"
  }
  /// The longest ``headline``, in characters: GitHub shows it as an alert's title.
  public static let headlineLimit = 120
  private let givenHeadline: String?
  /// Why it matters.
  public let rationale: String
  /// The severity of its findings, unless a finding says otherwise.
  public let severity: Severity
  /// For rules that guard the device against a hostile package: how bad a finding is, 0–10
  /// (CVSS-like), as GitHub code scanning reads `security-severity`. Nil for the others.
  public let securitySeverity: Double?
  /// What a reader of docs/rules.md should know beyond the summary: Markdown paragraphs.
  public let details: [String]
  /// Packages this rule must report.
  public let triggering: [RuleExample]
  /// Packages this rule must accept.
  public let nonTriggering: [RuleExample]

  private static func fitsHeadline(_ text: String) -> Bool {
    text.count <= headlineLimit && !text.contains(where: \.isNewline)
  }

  /// A description; `triggering` and `nonTriggering` are checked by the test suite. `headline`
  /// is the one-line form of `summary` (at most 120 characters), needed when the summary is longer.
  public init(
    id: String, name: String, category: RuleCategory, headline: String? = nil, summary: String, rationale: String,
    severity: Severity = .error, securitySeverity: Double? = nil, details: [String] = [], triggering: [RuleExample],
    nonTriggering: [RuleExample]
  ) {
    self.givenHeadline = headline
    self.securitySeverity = securitySeverity
    self.id = id
    self.name = name
    self.category = category
    self.details = details
    self.summary = summary
    self.rationale = rationale
    self.severity = severity
    self.triggering = triggering
    self.nonTriggering = nonTriggering
  }
}

/// The groups of the catalog, in the order rules run and are listed.
public enum RuleCategory: Int, CaseIterable, Comparable, Sendable {
  /// Whether the file is a package that reads the same in every reader.
  case archive
  /// What sits at the package's root, and its `ContentInfo.plist`.
  case layout
  /// Names and paths.
  case paths
  /// What the content may hold.
  case content
  /// Sizes.
  case limits
  /// Versions across updates.
  case versions
  /// Files that should not ship.
  case hygiene
  /// Background Assets asset-pack folders.
  case assetPacks

  /// A heading for the group.
  public var title: String {
    switch self {
    case .archive: return "The archive"
    case .layout: return "Layout and ContentInfo.plist"
    case .paths: return "Names and paths"
    case .content: return "What the content may hold"
    case .limits: return "Size"
    case .versions: return "Versions"
    case .hygiene: return "Hygiene"
    case .assetPacks: return "Asset-pack folders (Background Assets)"
    }
  }

  /// Orders categories as the catalog lists them.
  public static func < (a: RuleCategory, b: RuleCategory) -> Bool { a.rawValue < b.rawValue }
}

/// What rules are told about the run.
public struct RuleContext: Sendable {
  /// What the user asked for.
  public var options: ValidationOptions
  /// The package's file name, for packages (nil for folders).
  public var packageFileName: String?
  /// The `ContentInfo` of `--against`, if given.
  public var previous: ContentInfo?
  /// The format of the source being inspected (set by the inspector before the rules start).
  public var sourceFormat: PackageFormat?

  /// True when the input is a Background Assets asset pack (a source folder, or an Apple Archive
  /// of one), where the hosted-content rules (layout, content-info, size, versions, symlinks
  /// into Contents/) do not apply and the asset-pack rules do.
  public var isAssetPack: Bool { sourceFormat == .assetPack || sourceFormat == .appleArchive }

  /// The skip reason of a hosted-content rule on an asset pack.
  public var hostedContentOnly: String? { isAssetPack ? "applies to hosted-content packages, not asset packs" : nil }

  /// A context for one run.
  public init(
    options: ValidationOptions = ValidationOptions(), packageFileName: String? = nil, previous: ContentInfo? = nil
  ) {
    self.options = options
    self.packageFileName = packageFileName
    self.previous = previous
  }
}

/// Options a user sets for validation.
public struct ValidationOptions: Sendable, Equatable {
  /// The largest package file and the largest unpacked content, in bytes.
  public var maxSize: UInt64 = ValidationOptions.defaultMaxSize
  /// The product ID the package must carry, if given.
  public var productIdentifier: String?
  /// Treat warnings as errors.
  public var strict = false
  /// The size `asset-pack-size` measures an asset pack against: Apple's per-app total for
  /// Apple-hosted asset packs (200 GB); lower only in tests and examples.
  package var assetPackLimit: UInt64 = ValidationOptions.appleHostedAssetPackTotal

  /// 200 GB, read strictly: App Store Connect's total for all of an app's Apple-hosted asset packs.
  public static let appleHostedAssetPackTotal: UInt64 = 200_000_000_000

  /// 2 GB, read strictly: 2,000,000,000 bytes.
  public static let defaultMaxSize: UInt64 = 2_000_000_000

  /// Options; by default a 2 GB limit, any product, warnings as warnings.
  public init(
    maxSize: UInt64 = ValidationOptions.defaultMaxSize, productIdentifier: String? = nil, strict: Bool = false
  ) {
    self.maxSize = maxSize
    self.productIdentifier = productIdentifier
    self.strict = strict
  }
}

/// An entry as rules see it: the entry and the first bytes of its data.
public struct InspectedEntry {
  /// The entry.
  public var entry: PackageEntry
  /// Up to the first 256 KiB of a file's data (empty for other kinds): a view of the read
  /// buffer, valid during ``Rule/inspect(_:into:)``.
  public var head: ArraySlice<UInt8>
  /// Every path seen before this entry.
  package var paths: PathIndex

  package init(entry: PackageEntry, head: ArraySlice<UInt8> = [], paths: PathIndex = PathIndex()) {
    self.entry = entry
    self.head = head
    self.paths = paths
  }
}

/// What the run saw as a whole, given to ``Rule/finish(_:into:)``.
public struct InspectionSummary {
  /// The format the input was read as.
  public var format: PackageFormat
  /// Other formats the same bytes also parse as (a polyglot); empty for an honest file.
  public var otherForms: [PackageFormat] = []
  /// The package file's size (nil for folders).
  public var packageSize: UInt64?
  /// The bytes of `ContentInfo.plist` at the root, if it was there as a file.
  public var contentInfoBytes: [UInt8]?
  /// Entries of every kind.
  public var entryCount: Int
  /// The sum of file sizes, saturating at `UInt64.max`.
  public var contentSize: UInt64
  /// True when reading stopped early because the package is damaged.
  public var integrityFailed: Bool
  /// True when reading stopped early because the content went past `--max-size`
  /// (``contentSize`` then counts only what was read).
  public var contentLimitExceeded = false
  /// True when reading stopped before a folder's file whose size on disk (`stat`) took the
  /// content past `--max-size`: none of its bytes were read (``contentLimitExceeded`` is true
  /// too, and ``contentSize`` counts the file).
  public var contentOverLimitOnDisk = false
  /// Every path seen.
  package var paths: PathIndex
  /// What `build` leaves out of a project folder (empty for packages).
  public var leftOut: [LeftOutPath] = []
  /// Where the package file was cut off, when it was read anyway (`unpack --keep-going`).
  package var truncation: Truncation?
  /// How many entries were not read because their data lies past that cut.
  package var entriesPastTheCut = 0
}
