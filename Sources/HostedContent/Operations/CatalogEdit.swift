import Foundation
import SystemIO

/// Changes to a published catalog, in place (docs/catalog.md): withdraw a version, move every
/// URL to a new base, or sign it again with a fresh expiry. Each one verifies the catalog with
/// the signing key, takes the folder lock `publish` takes, re-signs with `sequence` + 1 and a new
/// ``Catalog/expires``, and replaces the file atomically: it changes whole or not at all.
public enum CatalogEdit {
  /// What an edit wrote.
  public struct Result: Sendable {
    /// The catalog as written.
    public var catalog: Catalog
    /// The sequence before the edit.
    public var previousSequence: Int64
  }

  /// Withdraws `version` of `product`: its entry leaves the catalog (and the product, when it
  /// was its last version), so no client that trusts the catalog installs those bytes again.
  public static func remove(
    product: String, version: String, from path: String, key: CatalogSigningKey,
    lifetime: Int64 = Catalog.defaultLifetime
  ) throws -> Result {
    try remove(product: product, version: version, from: path, signer: CatalogSigner(keys: [key]), lifetime: lifetime)
  }

  /// As ``remove(product:version:from:key:lifetime:)``, signed by every key of `signer`.
  public static func remove(
    product: String, version: String, from path: String, signer: CatalogSigner,
    lifetime: Int64 = Catalog.defaultLifetime
  ) throws -> Result {
    try amend(path, signer: signer, lifetime: lifetime, command: "catalog remove") { catalog in
      guard let p = catalog.products.firstIndex(where: { $0.productIdentifier == product }) else {
        throw OperationError(
          "'\(path)' lists no product \(product)",
          hint: "the products are \(catalog.products.map(\.productIdentifier).joined(separator: ", "))",
          code: .inputUnsuitable)
      }
      guard let v = catalog.products[p].versions.firstIndex(where: { $0.contentVersion == version }) else {
        throw OperationError(
          "'\(path)' lists no version \(version) of \(product)",
          hint: "its versions are \(catalog.products[p].versions.map(\.contentVersion).joined(separator: ", "))",
          code: .inputUnsuitable)
      }
      catalog.products[p].versions.remove(at: v)
      if catalog.products[p].versions.isEmpty { catalog.products.remove(at: p) }
    }
  }

  /// Moves every URL to `baseURL`, keeping each file name (the URL's last path component):
  /// for a move to another server or CDN. `baseURL` is checked as `publish --base-url` is.
  public static func rebase(
    _ path: String, baseURL: String, key: CatalogSigningKey, lifetime: Int64 = Catalog.defaultLifetime
  ) throws -> Result {
    try rebase(path, baseURL: baseURL, signer: CatalogSigner(keys: [key]), lifetime: lifetime)
  }

  /// As ``rebase(_:baseURL:key:lifetime:)``, signed by every key of `signer`.
  public static func rebase(
    _ path: String, baseURL: String, signer: CatalogSigner, lifetime: Int64 = Catalog.defaultLifetime
  ) throws -> Result {
    let base = try Publish.checkedBaseURL(baseURL)
    return try amend(path, signer: signer, lifetime: lifetime, command: "catalog rebase") { catalog in
      for p in catalog.products.indices {
        for v in catalog.products[p].versions.indices {
          let url = catalog.products[p].versions[v].url
          guard let slash = url.lastIndex(of: "/"), slash < url.index(before: url.endIndex) else {
            throw OperationError("the URL '\(url)' has no file name to keep", code: .catalogRefused)
          }
          catalog.products[p].versions[v].url = base + url[slash...]
        }
      }
    }
  }

  /// Signs the catalog again, unchanged but for `sequence` + 1 and a new expiry: what a
  /// scheduled job runs well before the catalog expires.
  public static func renew(_ path: String, key: CatalogSigningKey, lifetime: Int64 = Catalog.defaultLifetime) throws
    -> Result
  {
    try renew(path, signer: CatalogSigner(keys: [key]), lifetime: lifetime)
  }

  /// As ``renew(_:key:lifetime:)``, signed by every key of `signer`: also how a catalog moves to
  /// the catalog keys of a new root version.
  public static func renew(_ path: String, signer: CatalogSigner, lifetime: Int64 = Catalog.defaultLifetime) throws
    -> Result
  {
    try amend(path, signer: signer, lifetime: lifetime, command: "catalog renew") { _ in }
  }

  /// Verify, change, sequence + 1, new expiry, sign, replace: under the lock publish takes.
  static func amend(
    _ path: String, signer: CatalogSigner, lifetime: Int64, command: String, change: (inout Catalog) throws -> Void
  ) throws -> Result {
    try signer.checkThreshold()
    let lock = try OperationError.turn(in: Paths.parent(of: path), for: command, timeout: 120)
    defer { withExtendedLifetime(lock) {} }
    var catalog: Catalog
    do { catalog = try signer.existing(path) } catch let error as CatalogError {
      throw OperationError(
        "the catalog '\(path)' cannot be changed: \(error)", hint: "sign with the key that signed it",
        code: .catalogRefused)
    }
    let previous = catalog.sequence
    try change(&catalog)
    try Publish.signAgain(&catalog, signer: signer, lifetime: lifetime, to: path)
    return Result(catalog: catalog, previousSequence: previous)
  }
}
