/// An entry `unpack --keep-going` did not write, and why.
public struct SkippedEntry: Sendable, Equatable, Codable {
  /// The entry's path in the package.
  public var path: String
  /// Why it was not written, in words.
  public var reason: String

  /// An entry left out for `reason`.
  public init(path: String, reason: String) {
    self.path = path
    self.reason = reason
  }
}

/// What a run of the rules over a source found.
public struct InspectionResult: Sendable {
  /// The format the input was read as.
  public var format: PackageFormat
  /// The input's path.
  public var location: String
  /// The package file's size (nil for folders).
  public var packageSize: UInt64?
  /// Every finding, in the order found.
  public var findings: [Finding]
  /// The package's `ContentInfo`, when it could be read.
  public var contentInfo: ContentInfo?
  /// Entries of every kind.
  public var entryCount: Int
  /// How many entries are files.
  public var fileCount = 0
  /// How many of those files are empty.
  public var emptyFileCount = 0
  /// Sum of file sizes, saturating.
  public var contentSize: UInt64
  /// Every entry, when asked for (`info --files`, `diff`).
  public var entries: [PackageEntry]
  /// True when the package could not be read to the end.
  public var integrityFailed: Bool
  /// Entries `--keep-going` did not write, each with why: a rule found an error in it, its data
  /// did not read back (a checksum, a cut), the sink refused it, or reading stopped before it.
  /// Every entry of the package is either written or listed here, never both.
  public var skippedEntries: [SkippedEntry] = []
  /// The entry whose reading failed half way (its partial output was taken back), if any.
  public var incompleteEntry: String?
  /// An asset pack's ID, as its `Manifest.json` declares it (a folder or an `.aar`); nil for
  /// a hosted-content package, whose product is in ``contentInfo``.
  public var assetPackID: String?
  /// A content project's own files beside `Contents/` (README, LICENSE, `.gitignore`, …), which
  /// `build` leaves out. They are listed in the report's summary, not reported as findings, so a
  /// project fresh from `init` validates with no finding at all.
  public var projectFiles: [String] = []
  /// Rules that did not run, by id, with the reason (`content-version-increase` without
  /// `--against`; every rule but `archive-integrity` when the file is not a package).
  public var skippedRules: [String: String] = [:]
  /// True when the package's index was refused once the entries were read (a plain XAR whose
  /// TOC, read as it streamed, failed its closing checks): the result is then that of a file
  /// whose index cannot be read, whatever the entries showed.
  package var indexRefused = false
  /// An asset pack's `Manifest.json`, when it was read at the root and has no problem.
  package var assetPackManifest: AssetPackManifest?

  /// A result, as an inspection makes it.
  public init(
    format: PackageFormat, location: String, packageSize: UInt64?, findings: [Finding], contentInfo: ContentInfo?,
    entryCount: Int, contentSize: UInt64, entries: [PackageEntry], integrityFailed: Bool
  ) {
    self.format = format
    self.location = location
    self.packageSize = packageSize
    self.findings = findings
    self.contentInfo = contentInfo
    self.entryCount = entryCount
    self.contentSize = contentSize
    self.entries = entries
    self.integrityFailed = integrityFailed
  }

  /// Errors, plus warnings when `strict`.
  public func failed(strict: Bool) -> Bool {
    findings.contains { $0.severity.effective(strict: strict) == .error }
  }
}
