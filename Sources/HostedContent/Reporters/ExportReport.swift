import SystemIO

/// What `export background-assets` prints: the findings over the package and over the asset
/// pack, then (when it was written) each link copied and each junk file left out, what was
/// exported where, and what to do next; a refusal is the caller's to say (it ends the command).
public struct ExportReport: OperationReport {
  /// What the export did.
  public var result: ExportBackgroundAssets.Result
  /// The package (or project) as the user named it, for the findings' lines.
  public var displayPath: String
  /// The asset pack as the user named it (`-o`), for the asset-pack findings' lines.
  public var outputPath: String
  /// Whether warnings counted as errors.
  public var strict: Bool

  /// The report of `result`, exported from `displayPath` to `outputPath`.
  public init(_ result: ExportBackgroundAssets.Result, displayPath: String, outputPath: String, strict: Bool) {
    self.result = result
    self.displayPath = displayPath
    self.outputPath = outputPath
    self.strict = strict
  }

  /// The `--json` object.
  public struct Document: Encodable {
    var output: String?
    var written: Bool
    var assetPackID: String?
    var policy: String?
    var files: Int
    var replacedSymlinks: [String]
    var replacedHardLinks: [String]
    var leftOutJunk: [String]
    /// With -o NAME.aar: the archive's size and SHA-256.
    var archiveSize: UInt64?
    var archiveSHA256: String?
    var findings: [Finding]
  }

  /// What `--json` encodes: the findings over the package, then those over the asset pack.
  public var document: Document {
    Document(
      output: result.output, written: result.output != nil, assetPackID: result.manifest?.assetPackID,
      policy: result.manifest?.policy.rawValue, files: result.fileCount,
      replacedSymlinks: result.replacedSymlinks, replacedHardLinks: result.replacedHardLinks,
      leftOutJunk: result.leftOutJunk, archiveSize: result.archiveSize, archiveSHA256: result.archiveSHA256,
      findings: result.inspection.findings + (result.assetPackInspection?.findings ?? []))
  }

  /// Lines for people, each ending in a newline. When nothing was written, only the findings:
  /// what the command prints of a refused export with `--quiet` too.
  public var text: String {
    var out = ""
    if !result.inspection.findings.isEmpty {
      out += findingLines(result.inspection, displayPath: displayPath, strict: strict)
    }
    if let check = result.assetPackInspection, !check.findings.isEmpty {
      out += findingLines(check, displayPath: outputPath, strict: strict)
    }
    guard let written = result.output, let manifest = result.manifest else { return out }
    for link in result.replacedSymlinks {
      out += "copied: \(link.debugEscapedForTerminal) (a symlink in the package)\n"
    }
    for link in result.replacedHardLinks {
      out += "copied: \(link.debugEscapedForTerminal) (a hard link in the package)\n"
    }
    for junk in result.leftOutJunk { out += "left out: \(junk.debugEscapedForTerminal) (junk)\n" }
    let pack = "\(manifest.assetPackID) (\(manifest.policy.rawValue), \(manifest.platforms.joined(separator: ", ")))"
    if let size = result.archiveSize, let sha = result.archiveSHA256 {
      out +=
        "exported \(pack) as \(written): Contents/ (\(result.fileCount) files) and Manifest.json, \(size) bytes, sha256 \(sha)\nnext: upload it with Transporter (docs/migration.md)\n"
    } else {
      out +=
        "exported \(pack) into \(written)/: Contents/ (\(result.fileCount) files) and Manifest.json\nnext, on a Mac: cd \(written) && xcrun ba-package Manifest.json -o ../\(Paths.name(of: written)).aar\n"
    }
    return out
  }
}
