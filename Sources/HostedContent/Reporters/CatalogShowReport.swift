import Foundation

/// What `catalog show` prints: a catalog's sequence, expiry and signing key ids, then each
/// product with its versions (format, size, URL, SHA-256, lowest app version), none of it
/// verified. In ``text`` a field's line breaks and tabs are shown escaped, so a hostile file
/// cannot add lines that look like pkgtool's.
public struct CatalogShowReport: OperationReport {
  /// The catalog, as the file says (``CatalogFile/unverified(contentsOf:)``).
  public var catalog: Catalog
  /// The ids of the keys whose signatures the file carries.
  public var keyIDs: [String]
  /// The file as the user named it.
  public var displayPath: String

  /// The report of `catalog`, read unverified from the file named `displayPath` and carrying
  /// signatures by `keyIDs`.
  public init(_ catalog: Catalog, keyIDs: [String], displayPath: String) {
    self.catalog = catalog
    self.keyIDs = keyIDs
    self.displayPath = displayPath
  }

  /// The `--json` object.
  public struct Document: Encodable {
    var catalog: Catalog
    var keyIds: [String]
    /// Always false: `catalog show` checks no signature.
    var verified = false
  }

  /// What `--json` encodes.
  public var document: Document { Document(catalog: catalog, keyIds: keyIDs) }

  /// Lines for people, each ending in a newline.
  public var text: String {
    var text =
      "\(displayPath): sequence \(catalog.sequence), expires \(Self.field(catalog.expires ?? "never (no expiry)"))\n"
    text +=
      "signed by key\(keyIDs.count == 1 ? "" : "s") \(keyIDs.map(Self.field).joined(separator: ", ")) (not verified here)\n"
    for product in catalog.products {
      text += "\(Self.field(product.productIdentifier))\n"
      for version in product.versions {
        text +=
          "  \(Self.field(version.contentVersion))  \(Self.field(version.format))  \(version.size) bytes  \(Self.field(version.url))\n"
        text += "      sha256 \(Self.field(version.sha256))"
        text += version.minimumAppVersion.map { "  app \(Self.field($0))+" } ?? ""
        text += "\n"
      }
    }
    if catalog.products.isEmpty { text += "(no products)\n" }
    return text
  }

  /// `text` with its line breaks and tabs escaped (`\n`, `\r`, `\t`).
  static func field(_ text: String) -> String {
    text.replacingOccurrences(of: "\n", with: "\\n").replacingOccurrences(of: "\r", with: "\\r")
      .replacingOccurrences(of: "\t", with: "\\t")
  }
}
