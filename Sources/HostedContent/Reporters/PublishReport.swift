/// What `publish` prints: what was added to the catalog (or that nothing was new), its sequence,
/// expiry and signing keys; when a package was refused, the findings of each refused package,
/// and the refusal itself is the caller's to say (nothing was written).
public struct PublishReport: OperationReport {
  /// What the publish did.
  public var result: Publish.Result
  /// The catalog as the user named it (`-o`).
  public var catalogPath: String
  /// The ids of the keys that signed it (``CatalogSigner/keyIDs``).
  public var keyIDs: [String]
  /// Whether warnings counted as errors.
  public var strict: Bool

  /// The report of `result`, written to the catalog named `catalogPath` and signed by `keyIDs`.
  public init(_ result: Publish.Result, catalogPath: String, keyIDs: [String], strict: Bool) {
    self.result = result
    self.catalogPath = catalogPath
    self.keyIDs = keyIDs
    self.strict = strict
  }

  /// The `--json` object.
  public struct Document: Encodable {
    var catalog: String
    var written: Bool
    var sequence: Int64
    var added: [String]
    var products: Int
  }

  /// What `--json` encodes.
  public var document: Document {
    Document(
      catalog: catalogPath, written: result.written, sequence: result.catalog.sequence, added: result.added,
      products: result.catalog.products.count)
  }

  /// Lines for people, each ending in a newline. When a package was refused: the findings of
  /// each refused package, which the command prints with `--json` and `--quiet` too.
  public var text: String {
    if !result.refused.isEmpty {
      return result.refused.map { findingLines($0.inspection, displayPath: $0.path, strict: strict) }.joined()
    }
    guard result.written else {
      return "\(catalogPath) already lists these packages, byte for byte; nothing written\n"
    }
    let what =
      result.added.isEmpty
      ? "nothing new; signed again to continue --previous" : "published " + result.added.joined(separator: ", ")
    return
      "\(what) in \(catalogPath) (sequence \(result.catalog.sequence), expires \(result.catalog.expires ?? "never"), \(CatalogEditReport.signedBy(keyIDs)))\n"
  }
}
