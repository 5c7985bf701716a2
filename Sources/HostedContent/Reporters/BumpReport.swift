/// What `bump` prints: the product and its version before and after, and whether it was a dry
/// run; a refusal (``Bump/NotGreater``) is the caller's to say.
public struct BumpReport: OperationReport {
  /// What the bump did (or would do).
  public var result: Bump.Result
  /// `--dry-run`: nothing was changed.
  public var dryRun: Bool

  /// The report of `result`, a dry run's when `dryRun`.
  public init(_ result: Bump.Result, dryRun: Bool) {
    self.result = result
    self.dryRun = dryRun
  }

  /// The `--json` object.
  public struct Document: Encodable {
    var plist: String
    var productIdentifier: String
    var old: String
    var new: String
    var format: String
    var changed: Bool
  }

  /// What `--json` encodes.
  public var document: Document {
    Document(
      plist: result.plist, productIdentifier: result.productIdentifier, old: result.old.description,
      new: result.new.description, format: result.format.rawValue, changed: !dryRun)
  }

  /// Lines for people, each ending in a newline.
  public var text: String {
    "\(result.productIdentifier): \(result.old) → \(result.new)\(dryRun ? " (dry run: nothing changed)" : "")\n"
  }
}
