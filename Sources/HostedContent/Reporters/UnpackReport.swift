/// What `unpack` prints: the findings, then (when the folder was written) each entry
/// `--keep-going` skipped and what was unpacked where; a refusal is the caller's to say (it ends
/// the command).
public struct UnpackReport: OperationReport {
  /// What the unpack did.
  public var result: Unpack.Result
  /// The package as the user named it, for the findings' lines and `--json`.
  public var displayPath: String
  /// Whether warnings counted as errors.
  public var strict: Bool

  /// The report of `result`, whose package was named `displayPath`.
  public init(_ result: Unpack.Result, displayPath: String, strict: Bool) {
    self.result = result
    self.displayPath = displayPath
    self.strict = strict
  }

  /// The `--json` object.
  public struct Document: Encodable {
    var package: String
    var output: String?
    var unpacked: Bool
    var valid: Bool
    /// Every entry not written, with why (only with --keep-going).
    var skipped: [SkippedEntry]
    var productIdentifier: String?
    var contentVersion: String?
    var files: Int
    /// The package's content, as the table of contents declares it.
    var contentSize: UInt64
    /// The bytes of the files written (less than contentSize when --keep-going skipped files).
    var writtenSize: UInt64
    var findings: [Finding]
  }

  /// What `--json` encodes.
  public var document: Document {
    let info = result.inspection.contentInfo
    return Document(
      package: displayPath, output: result.output, unpacked: result.output != nil,
      valid: !result.inspection.failed(strict: strict), skipped: result.inspection.skippedEntries,
      productIdentifier: info?.productIdentifier, contentVersion: info?.contentVersion.description,
      files: result.fileCount, contentSize: result.inspection.contentSize, writtenSize: result.byteCount,
      findings: result.inspection.findings)
  }

  /// Lines for people, each ending in a newline.
  public var text: String {
    var out = ""
    if !result.inspection.findings.isEmpty {
      out += findingLines(result.inspection, displayPath: displayPath, strict: strict)
    }
    guard let written = result.output else { return out }
    let skipped = result.inspection.skippedEntries
    for entry in skipped {
      out += "skipped: \(entry.path.debugEscapedForTerminal): \(entry.reason.debugEscapedForTerminal)\n"
    }
    let info = result.inspection.contentInfo
    let partial =
      result.inspection.failed(strict: strict)
      ? ", \(skipped.count) \(skipped.count == 1 ? "entry" : "entries") skipped" : ""
    out +=
      "unpacked \(info.map { "\($0.productIdentifier) \($0.contentVersion) " } ?? "")into \(written)/ (\(result.fileCount) files, \(describeBytes(result.byteCount))\(partial))\n"
    return out
  }
}
