/// What `catalog verify` prints of a catalog that verified: its sequence, expiry, what it was
/// verified with, and how many products and versions it lists. Text only: `catalog verify` has
/// no `--json`; a refusal is the caller's to say.
public struct CatalogVerifyReport {
  /// What the catalog was verified with.
  public enum Trusted: Sendable {
    /// One public key, by its id.
    case key(id: String)
    /// The catalog role of a root (the newest of the chain).
    case root(Root)
  }

  /// The catalog, verified (``CatalogFile/verify(contentsOf:trust:)``).
  public var catalog: Catalog
  /// The file as the user named it.
  public var displayPath: String
  /// What it was verified with.
  public var trusted: Trusted

  /// The report of `catalog`, read from the file named `displayPath` and verified with `trusted`.
  public init(_ catalog: Catalog, displayPath: String, trusted: Trusted) {
    self.catalog = catalog
    self.displayPath = displayPath
    self.trusted = trusted
  }

  /// Lines for people, each ending in a newline.
  public var text: String {
    let signedBy: String
    switch trusted {
    case .key(let id): signedBy = "key \(id)"
    case .root(let root):
      signedBy =
        "root version \(root.version) (\(root.roles.catalog.threshold) of \(root.roles.catalog.keyIds.count) catalog keys)"
    }
    let versions = catalog.products.reduce(0) { $0 + $1.versions.count }
    return
      "valid: '\(displayPath)', sequence \(catalog.sequence), expires \(catalog.expires ?? "never"), \(signedBy), \(catalog.products.count) product(s), \(versions) version(s)\n"
  }
}
