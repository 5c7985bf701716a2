/// What `migrate` prints: each product's pack and the check of its files, then the download
/// manifest's report; when a package broke a rule, its findings only (the refusal is the
/// caller's to say).
public struct MigrateReport: OperationReport {
  /// What the migration did.
  public var result: Migrate.Result
  /// Whether warnings counted as errors.
  public var strict: Bool

  /// The report of `result`.
  public init(_ result: Migrate.Result, strict: Bool) {
    self.result = result
    self.strict = strict
  }

  /// One pack in `--json`.
  public struct PackDocument: Encodable {
    var source: String
    var productIdentifier: String
    var contentVersion: String
    var assetPackID: String
    var archive: String
    var files: Int
    /// Always true in a written result: a pack whose files differ stops the migration.
    var filesEqualContents: Bool
    var linkCopies: [String]
    var leftOutJunk: [String]
  }

  /// The `--json` object.
  public struct Document: Encodable {
    var written: Bool
    var packs: [PackDocument]
    var passedOver: [String]
    var downloadManifest: DownloadManifestReport.Document?
    var findings: [Finding]
  }

  /// What `--json` encodes.
  public var document: Document {
    Document(
      written: result.manifest?.manifest != nil,
      packs: result.packs.map {
        PackDocument(
          source: $0.source, productIdentifier: $0.productIdentifier, contentVersion: $0.contentVersion,
          assetPackID: $0.assetPackID, archive: $0.archive, files: $0.files, filesEqualContents: true,
          linkCopies: $0.linkCopies, leftOutJunk: $0.leftOutJunk)
      }, passedOver: result.passedOver,
      downloadManifest: result.manifest.map { DownloadManifestReport($0, strict: strict).document },
      findings: result.refused.flatMap { $0.inspection.findings })
  }

  /// Lines for people, each ending in a newline.
  public var text: String {
    var out = ""
    for (file, inspection) in result.refused {
      out += findingLines(inspection, displayPath: file, strict: strict)
    }
    for pack in result.packs {
      out +=
        "\(pack.productIdentifier) \(pack.contentVersion) (\(pack.source)) -> \(pack.archive): \(pack.files) file\(pack.files == 1 ? "" : "s"), each equal to Contents/ (SHA-256)\n"
      for copy in pack.linkCopies { out += "  copied: \(copy) (a link in the package)\n" }
      for junk in pack.leftOutJunk { out += "  left out: \(junk) (junk)\n" }
    }
    for path in result.passedOver {
      out += "passed over: \(path) (an older version of its product, or the same content again)\n"
    }
    if let manifest = result.manifest { out += DownloadManifestReport(manifest, strict: strict).text }
    return out
  }
}
