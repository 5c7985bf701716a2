import Crypto
import Foundation
import TextCoding

/// Who a verified catalog comes from, as a device remembers it (docs/catalog.md, "What a device
/// remembers"): `install` keeps the newest root version and the highest catalog sequence it
/// accepted once per documents folder and publisher, whatever the product, under the names in
/// ``anchors``.
///
/// A publisher is named by what the app ships and what verified, never by what the server says
/// of itself: each root of the verified chain, by the SHA-256 of its canonical `signed` form
/// (`root:<hex>`), and each key that signs catalogs, by its key id (`key:<id>`). Every root of a
/// chain is one the app's shipped root leads to, so an attacker who withholds the newer roots,
/// or adds older real ones, still meets a name the device knows: the shipped root's own, at
/// least. The catalog keys carry the memory across an app update that ships a newer root alone,
/// and from `--public-key` to `--root`.
public struct CatalogPublisher: Sendable, Equatable {
  /// The version of the newest root of the chain; nil for one public key.
  public let rootVersion: Int64?
  /// The names the memory is kept under, sorted.
  public let anchors: [String]

  /// A publisher trusted through one public key (`--public-key`).
  public init(key: CatalogPublicKey) {
    rootVersion = nil
    anchors = ["key:" + key.keyID]
  }

  /// A publisher trusted through a verified chain of roots (``RootFile/verifyChain(_:now:)``,
  /// oldest first): every root of it, and every catalog key any of them lists.
  public init(chain: [Root]) throws {
    guard let newest = chain.last else { throw CatalogError.malformed("no root was given") }
    var names = Set<String>()
    for root in chain {
      names.insert("root:" + hexString(SHA256.hash(data: try JSONValue(encoding: root).canonicalBytes)))
      for id in root.roles.catalog.keyIds { names.insert("key:" + id) }
    }
    rootVersion = newest.version
    anchors = names.sorted()
  }
}
