import Foundation
import SystemIO

/// Changes to a published catalog, in place (docs/catalog.md): withdraw a version, move every
/// URL to a new base, or sign it again with a fresh expiry. Each one verifies the catalog with
/// the signing key, takes the folder lock `publish` takes, re-signs with `sequence` + 1 and a new
/// ``Catalog/expires``, and replaces the file atomically: it changes whole or not at all.
///
/// An edit never silently signs with fewer keys than the catalog carried: a signature whose key
/// is not among the signer's keys is dropped only when the signer's roots show the newest root's
/// catalog threshold is still met, or when the caller names that key in `droppingSignatures`
/// (`--drop-signature`). Otherwise nothing is written, and the error names the keys: a renew
/// with the old key alone after a rotation would leave a catalog every client of the root refuses.
public enum CatalogEdit {
  /// What an edit wrote.
  public struct Result: Sendable {
    /// The catalog as written.
    public var catalog: Catalog
    /// The sequence before the edit.
    public var previousSequence: Int64
    /// For a rebase: how many URLs changed (0 when every one was already under the base URL:
    /// the catalog is then only signed again, as `renew` does).
    public var movedURLs = 0
    /// For a rebase: how many URLs the catalog lists.
    public var urlCount = 0
  }

  /// Withdraws `version` of `product`: its entry leaves the catalog (and the product, when it
  /// was its last version), so no client that trusts the catalog installs those bytes again.
  public static func remove(
    product: String, version: String, from path: String, key: CatalogSigningKey,
    lifetime: Int64 = Catalog.defaultLifetime
  ) throws -> Result {
    try remove(product: product, version: version, from: path, signer: CatalogSigner(keys: [key]), lifetime: lifetime)
  }

  /// As ``remove(product:version:from:key:lifetime:)``, signed by every key of `signer`;
  /// `droppingSignatures` names the key ids whose signatures may go (``CatalogEdit``).
  public static func remove(
    product: String, version: String, from path: String, signer: CatalogSigner,
    lifetime: Int64 = Catalog.defaultLifetime, droppingSignatures: [String] = []
  ) throws -> Result {
    try amend(
      path, signer: signer, lifetime: lifetime, command: "catalog remove", dropping: droppingSignatures
    ) { catalog in
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

  /// As ``rebase(_:baseURL:key:lifetime:)``, signed by every key of `signer`;
  /// `droppingSignatures` names the key ids whose signatures may go (``CatalogEdit``).
  public static func rebase(
    _ path: String, baseURL: String, signer: CatalogSigner, lifetime: Int64 = Catalog.defaultLifetime,
    droppingSignatures: [String] = []
  ) throws -> Result {
    let base = try Publish.checkedBaseURL(baseURL)
    var moved = 0
    var count = 0
    var result = try amend(
      path, signer: signer, lifetime: lifetime, command: "catalog rebase", dropping: droppingSignatures
    ) { catalog in
      for p in catalog.products.indices {
        for v in catalog.products[p].versions.indices {
          let url = catalog.products[p].versions[v].url
          guard let slash = url.lastIndex(of: "/"), slash < url.index(before: url.endIndex) else {
            throw OperationError("the URL '\(url)' has no file name to keep", code: .catalogRefused)
          }
          let rebased = base + url[slash...]
          count += 1
          if rebased != url { moved += 1 }
          catalog.products[p].versions[v].url = rebased
        }
      }
    }
    result.movedURLs = moved
    result.urlCount = count
    return result
  }

  /// Signs the catalog again, unchanged but for `sequence` + 1 and a new expiry: what a
  /// scheduled job runs well before the catalog expires.
  public static func renew(_ path: String, key: CatalogSigningKey, lifetime: Int64 = Catalog.defaultLifetime) throws
    -> Result
  {
    try renew(path, signer: CatalogSigner(keys: [key]), lifetime: lifetime)
  }

  /// As ``renew(_:key:lifetime:)``, signed by every key of `signer`: also how a catalog moves to
  /// the catalog keys of a new root version (with the roots, so the threshold shows).
  /// `droppingSignatures` names the key ids whose signatures may go (``CatalogEdit``).
  public static func renew(
    _ path: String, signer: CatalogSigner, lifetime: Int64 = Catalog.defaultLifetime,
    droppingSignatures: [String] = []
  ) throws -> Result {
    try amend(path, signer: signer, lifetime: lifetime, command: "catalog renew", dropping: droppingSignatures) { _ in }
  }

  /// Verify, check no signature is lost unawares, change, sequence + 1, new expiry, sign,
  /// replace: under the lock publish takes.
  static func amend(
    _ path: String, signer: CatalogSigner, lifetime: Int64, command: String, dropping: [String],
    change: (inout Catalog) throws -> Void
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
    try checkSignaturesKept(path, signer: signer, dropping: dropping, command: command)
    let previous = catalog.sequence
    try change(&catalog)
    try Publish.signAgain(&catalog, signer: signer, lifetime: lifetime, to: path)
    return Result(catalog: catalog, previousSequence: previous)
  }

  /// Throws unless every key that signed the catalog at `path` signs again, or the roots show the
  /// newest root's catalog threshold is met without the others (``CatalogSigner/checkThreshold()``
  /// has run), or `dropping` names each key that would no longer sign. A `dropping` id that names
  /// no signature of the catalog, or a key that signs, is refused: a typo must not pass for consent.
  static func checkSignaturesKept(_ path: String, signer: CatalogSigner, dropping: [String], command: String) throws {
    let had = Set(try CatalogFile.unverified(contentsOf: path).keyIDs)
    let signing = Set(signer.keyIDs)
    for id in dropping where signing.contains(id) {
      throw OperationError(
        "--drop-signature \(id) names a key that signs the new catalog (--key)",
        hint: "give --drop-signature only for a key whose signature is to go", code: .invalidArgument)
    }
    for id in dropping where !had.contains(id) {
      throw OperationError(
        "--drop-signature \(id): '\(path)' carries no signature by key \(id)",
        hint: "its signatures are by key\(had.count == 1 ? "" : "s") \(had.sorted().joined(separator: ", "))",
        code: .invalidArgument)
    }
    let dropped = had.subtracting(signing).subtracting(dropping).sorted()
    guard !dropped.isEmpty, signer.roots.isEmpty else { return }
    let keys = "key\(dropped.count == 1 ? "" : "s") \(dropped.joined(separator: ", "))"
    throw OperationError(
      "\(command) would drop the signature\(dropped.count == 1 ? "" : "s") of \(keys) from '\(path)': it would carry \(had.intersection(signing).count) of its \(had.count) signatures, and clients that need them would refuse it",
      hint:
        "sign with \(dropped.count == 1 ? "that key" : "those keys") too (--key), give --root to show the root's catalog threshold is still met, or --drop-signature \(dropped.joined(separator: " --drop-signature ")) to drop \(dropped.count == 1 ? "it" : "them")",
      code: .catalogRefused)
  }
}
