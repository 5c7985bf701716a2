/// What `build` prints: the findings, then the package written (product, files and how they
/// were stored, sizes, SHA-256, what was left out); with `verbose` or `dryRun` every path left
/// out, with `dryRun` every entry, with `verbose` every entry added.
public struct BuildReport: OperationReport {
  /// What the build did.
  public var result: Build.Result
  /// The project as the user named it, for the findings' lines.
  public var displayPath: String
  /// The format written.
  public var format: Build.Format
  /// Whether warnings counted as errors.
  public var strict: Bool
  /// `--compression none`: every file was stored.
  public var storedOnly = false
  /// `--verbose`.
  public var verbose = false
  /// `--dry-run`.
  public var dryRun = false

  /// The report of `result`, built from the project named `displayPath`.
  public init(_ result: Build.Result, displayPath: String, format: Build.Format, strict: Bool) {
    self.result = result
    self.displayPath = displayPath
    self.format = format
    self.strict = strict
  }

  /// The `--json` object.
  public struct Document: Encodable {
    var output: String?
    var written: Bool
    var productIdentifier: String?
    var contentVersion: String?
    var format: String
    var files: Int
    var storedFiles: Int
    var storedUnshrunkFiles: Int
    var storedIncompressibleFiles: Int
    var storedIncompressibleBytes: UInt64
    var deflatedForSignatureFiles: Int
    var contentSize: UInt64
    var packageSize: UInt64?
    var sha256: String?
    var leftOut: [String]
    var leftOutCount: Int
    var excluded: [String]
    var findings: [Finding]
  }

  /// What `--json` encodes.
  public var document: Document {
    Document(
      output: result.output ?? result.plannedOutput, written: result.output != nil,
      productIdentifier: result.inspection.contentInfo?.productIdentifier,
      contentVersion: result.inspection.contentInfo?.contentVersion.description, format: format.rawValue,
      files: result.fileCount, storedFiles: result.storedFiles, storedUnshrunkFiles: result.storedUnshrunkFiles,
      storedIncompressibleFiles: result.storedIncompressibleFiles,
      storedIncompressibleBytes: result.storedIncompressibleBytes,
      deflatedForSignatureFiles: result.deflatedForSignatureFiles,
      contentSize: result.inspection.contentSize, packageSize: result.packageSize, sha256: result.sha256,
      leftOut: result.leftOut.map(\.path), leftOutCount: result.leftOut.count,
      excluded: result.leftOut.filter { $0.reason == .excluded }.map(\.path), findings: result.inspection.findings)
  }

  /// Lines for people, each ending in a newline.
  public var text: String {
    var out = ""
    if verbose || dryRun {
      for left in result.leftOut {
        out += "left out: \(left.path.debugEscapedForTerminal) (\(Self.describe(left.reason)))\n"
      }
    }
    if dryRun {
      for entry in result.entries {
        out +=
          "\(entry.kind == .directory ? "d" : entry.kind == .symlink ? "l" : "-") \(entry.path)\(entry.kind == .symlink ? " -> \(entry.linkTarget ?? "")" : "")\n"
      }
    }
    if !result.inspection.findings.isEmpty || dryRun {
      out += findingLines(result.inspection, displayPath: displayPath, strict: strict)
    }
    if let written = result.output {
      if verbose {
        for entry in result.entries { out += "added: \(entry.path)\n" }
      }
      let info = result.inspection.contentInfo
      out += "built \(written)\n"
      out += "  product  \(info?.productIdentifier ?? "?") \(info?.contentVersion.description ?? "?")\n"
      if storedOnly {
        let signature = result.deflatedForSignatureFiles
        out +=
          signature == 0
          ? "  files    \(result.fileCount) (all stored: --compression none)\n"
          : "  files    \(result.fileCount) (\(result.fileCount - signature) stored: --compression none; \(signature) deflated as \(signature == 1 ? "its" : "their") bytes hold a zip signature)\n"
      } else {
        // An empty file has nothing to deflate: no sink counts it as stored, nor is it deflated.
        let empty = result.inspection.emptyFileCount
        let deflated =
          result.fileCount - result.storedFiles - result.storedUnshrunkFiles - result.storedIncompressibleFiles - empty
        let unshrunk =
          result.storedUnshrunkFiles == 0
          ? "" : ", \(result.storedUnshrunkFiles) stored as deflating made them no smaller"
        let incompressible =
          result.storedIncompressibleFiles == 0
          ? ""
          : ", \(result.storedIncompressibleFiles) stored as a sample would not shrink"
            + " (\(groupedDigits(result.storedIncompressibleBytes)) bytes)"
        let signature =
          result.deflatedForSignatureFiles == 0
          ? ""
          : "; of the deflated, \(result.deflatedForSignatureFiles) \(result.deflatedForSignatureFiles == 1 ? "holds" : "hold") a zip signature and cannot be stored"
        out +=
          "  files    \(result.fileCount) (\(deflated) deflated, \(result.storedFiles) stored as already compressed\(unshrunk)\(incompressible)\(empty == 0 ? "" : ", \(empty) empty")\(signature))\n"
      }
      out += "  content  \(describeBytes(result.inspection.contentSize))\n"
      out += "  package  \(describeBytes(result.packageSize ?? 0))\n"
      out += "  sha256   \(result.sha256 ?? "")\n"
      if !result.leftOut.isEmpty {
        out += "  left out \(Self.leftOutSummary(result.leftOut))\n"
      }
    }
    return out
  }

  /// Why a path was left out, in a word or three.
  public static func describe(_ reason: LeftOutPath.Reason) -> String {
    switch reason {
    case .junk: return "junk"
    case .outsideContent: return "outside Contents/"
    case .excluded: return "excluded by a pattern"
    case .ignoreFile: return "the ignore file"
    }
  }

  /// "5 entries (3 excluded by a pattern, 2 junk)": how many, and why.
  public static func leftOutSummary(_ leftOut: [LeftOutPath]) -> String {
    let order: [LeftOutPath.Reason] = [.excluded, .junk, .outsideContent, .ignoreFile]
    let parts = order.compactMap { reason -> String? in
      let n = leftOut.filter { $0.reason == reason }.count
      return n == 0 ? nil : "\(n) \(describe(reason))"
    }
    return "\(leftOut.count) \(leftOut.count == 1 ? "entry" : "entries") (\(parts.joined(separator: ", ")))"
  }
}
