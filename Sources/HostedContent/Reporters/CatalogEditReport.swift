/// What `catalog remove`, `rebase` and `renew` print: the change, the sequence before and after,
/// the new expiry and the keys that signed it. Text only: these commands have no `--json`.
public struct CatalogEditReport {
  /// Which edit was made.
  public enum Change: Sendable {
    /// ``CatalogEdit/remove(product:version:from:signer:lifetime:)`` withdrew `version` of
    /// `product`.
    case removed(product: String, version: String)
    /// Every URL moved to a new base.
    case rebased
    /// Signed again with a new expiry.
    case renewed
  }

  /// What the edit wrote.
  public var result: CatalogEdit.Result
  /// Which edit it was.
  public var change: Change
  /// The catalog as the user named it.
  public var displayPath: String
  /// The ids of the keys that signed it (``CatalogSigner/keyIDs``).
  public var keyIDs: [String]

  /// The report of `change`, which wrote `result` to the catalog named `displayPath`, signed
  /// by `keyIDs`.
  public init(_ result: CatalogEdit.Result, change: Change, displayPath: String, keyIDs: [String]) {
    self.result = result
    self.change = change
    self.displayPath = displayPath
    self.keyIDs = keyIDs
  }

  /// Lines for people, each ending in a newline.
  public var text: String {
    let what: String
    switch change {
    case .removed(let product, let version): what = "withdrew \(product) \(version)"
    case .rebased:
      let moved = result.movedURLs
      let count = result.urlCount
      if moved == 0 {
        what = "moved no URL (\(count == 1 ? "the one URL was" : "all \(count) URLs were") already there; signed again)"
      } else if moved == count {
        what = "moved \(moved) URL\(moved == 1 ? "" : "s")"
      } else {
        what = "moved \(moved) of \(count) URLs (the others were already there)"
      }
    case .renewed: what = "renewed"
    }
    return
      "\(what) in \(displayPath): sequence \(result.previousSequence) -> \(result.catalog.sequence), expires \(result.catalog.expires ?? "never"), \(Self.signedBy(keyIDs))\n"
  }

  /// "signed by key 1a2b…" or "signed by keys 1a2b…, 3c4d…": what `publish` and the edits say
  /// of the keys that signed a catalog.
  static func signedBy(_ keyIDs: [String]) -> String {
    "signed by key\(keyIDs.count == 1 ? "" : "s") \(keyIDs.joined(separator: ", "))"
  }
}
