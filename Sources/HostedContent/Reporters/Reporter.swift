import Foundation
import SystemIO

/// What a reporter is given: one validation's result and how it was asked for.
public struct ValidationReport: Sendable {
  /// What the rules found.
  public var result: InspectionResult
  /// The path as the user typed it, used in messages.
  public var displayPath: String
  /// Whether warnings count as errors.
  public var strict: Bool
  /// Where SARIF and GitHub file paths are relative to (`--base`); nil: the working directory.
  public var base: String?
  /// The SHA-256 of each file's content, by inner path, when it was computed (SARIF
  /// fingerprints use it).
  public var digests: [String: String] = [:]
  /// Why the input could not be checked at all (the command exits 2); the report then says
  /// so instead of judging.
  public var toolError: String?
  /// The content project the package was built from (``mapEntries(toProject:)``), as the user
  /// named it; nil when no project was given or it is not the package's.
  public private(set) var project: String?
  /// The inner paths of findings that name a file of ``project``.
  public private(set) var projectPaths: Set<String> = []
  /// A page with one anchor per rule id (docs/rules.md, published); SARIF's `helpUri` points
  /// into it. Nil: no `helpUri` (a made-up address would send people nowhere).
  public var documentationURL: String?

  /// The report of `result`, shown as `displayPath`.
  public init(result: InspectionResult, displayPath: String, strict: Bool) {
    self.result = result
    self.displayPath = displayPath
    self.strict = strict
  }

  /// A report for an input that could not be checked: no findings, every rule skipped, and
  /// `error` as the reason.
  public init(unreadable path: String, error: String, strict: Bool) {
    var result = InspectionResult(
      format: .unknown, location: path, packageSize: nil, findings: [], contentInfo: nil, entryCount: 0,
      contentSize: 0, entries: [], integrityFailed: true)
    for d in RuleCatalog.descriptions { result.skippedRules[d.id] = "the input could not be read" }
    self.init(result: result, displayPath: path, strict: strict)
    toolError = error
  }

  /// Findings counted at the severity they are reported at (warnings are errors under `--strict`).
  public var errorCount: Int { result.findings.filter { effectiveSeverity($0) == .error }.count }
  /// Findings reported as warnings.
  public var warningCount: Int { result.findings.filter { effectiveSeverity($0) == .warning }.count }
  /// Findings reported as notes.
  public var noteCount: Int { result.findings.filter { effectiveSeverity($0) == .note }.count }
  /// True when the command should exit non-zero.
  public var failed: Bool { toolError != nil || result.failed(strict: strict) }

  /// The severity a finding is reported at (warnings become errors under `--strict`).
  public func effectiveSeverity(_ finding: Finding) -> Severity {
    finding.severity.effective(strict: strict)
  }

  /// True when the input is a folder on disk, where each inner path is a real file.
  public var isFolder: Bool { result.format == .directory }

  /// The file a finding is about, as a path a person or CI can open: for a folder the real file
  /// inside it (`src/Contents/tool`); for a package built from a ``project``, the project's
  /// file the entry came from (`content/MyBook/Contents/tool`); else the package itself.
  public func filePath(for finding: Finding) -> String {
    guard let inner = finding.path, !inner.isEmpty else { return displayPath }
    if isFolder { return Paths.joinedLexically(displayPath, inner) }
    if let project, projectPaths.contains(inner) { return Paths.joinedLexically(project, inner) }
    return displayPath
  }

  /// Points the findings about this package's entries at the files of the content project
  /// `directory` (`validate PKG --project DIR`): each finding whose entry the project holds at the
  /// same path. Only when the project is the package's: its `ContentInfo.plist` names the same
  /// product and version. Returns that project's identity when it is another (and changes
  /// nothing), nil when the mapping is made. Throws when `directory` is not a content project.
  public mutating func mapEntries(toProject directory: String) throws -> ContentInfo? {
    let info = try ProjectSource(directory: directory).contentInfo
    guard !isFolder, toolError == nil, let own = result.contentInfo else { return nil }
    guard own.productIdentifier == info.productIdentifier, own.contentVersion == info.contentVersion else {
      return info
    }
    project = directory
    projectPaths = Set(
      result.findings.compactMap(\.path).filter {
        !$0.isEmpty && Paths.status(Paths.joinedLexically(directory, $0)) != nil
      })
    return nil
  }

  /// `filePath(for:)` relative to ``base`` when one is set (and the file is under it).
  public func relativeFilePath(for finding: Finding) -> String {
    let path = filePath(for: finding)
    guard let base else { return path }
    return Paths.relative(path, to: base) ?? path
  }

  /// "1 error, 2 warnings" (and ", 1 note" when there are notes).
  public var countsText: String {
    func plural(_ n: Int, _ word: String) -> String { "\(n) \(word)\(n == 1 ? "" : "s")" }
    var text = plural(errorCount, "error") + ", " + plural(warningCount, "warning")
    if noteCount > 0 { text += ", " + plural(noteCount, "note") }
    return text
  }

}

/// Turns ``ValidationReport``s into text for people or machines. One small type per format.
public protocol Reporter {
  /// The `--reporter` value.
  static var identifier: String { get }
  /// One document for every input of one `validate` run.
  static func render(_ reports: [ValidationReport]) -> String
}

extension Reporter {
  /// One input's document.
  public static func render(_ report: ValidationReport) -> String { render([report]) }
}

/// The report formats, one per reporter: the one list of them.
public enum ReportFormat: String, CaseIterable, Sendable {
  /// Lines for people: ``TextReporter``.
  case text
  /// ``JSONReporter``.
  case json
  /// SARIF 2.1.0, for code-scanning services: ``SARIFReporter``.
  case sarif
  /// JUnit XML, for CI test views: ``JUnitReporter``.
  case junit
  /// GitHub Actions workflow commands: ``GitHubReporter``.
  case github

  /// The reporter that writes this format.
  public var reporter: any Reporter.Type {
    switch self {
    case .text: return TextReporter.self
    case .json: return JSONReporter.self
    case .sarif: return SARIFReporter.self
    case .junit: return JUnitReporter.self
    case .github: return GitHubReporter.self
    }
  }
}
