import Foundation
import SystemIO
import TextCoding

/// A signed list of the packages a team hosts itself: for each product, its versions with URL,
/// size, SHA-256 and ContentVersion (docs/catalog.md). The app (or `pkgtool install --catalog`)
/// trusts a download only when a correctly signed catalog names its exact bytes.
public struct Catalog: Codable, Equatable, Sendable {
  /// The file format; raised when a field changes meaning.
  public var formatVersion: Int
  /// Raised by every publish: a client refuses a catalog older than the last one it used, so a
  /// replayed old catalog cannot bring back an old version.
  public var sequence: Int64
  /// When the catalog stops being trusted, RFC 3339 in UTC (`2026-12-26T09:00:00Z`), inside
  /// the signed part: a client refuses an expired catalog, so an attacker who replays
  /// yesterday's catalog (a freeze) is caught within this time. Nil in catalogs written before
  /// pkgtool wrote it; those are accepted with a note (docs/catalog.md).
  public var expires: String?
  /// Sorted by product identifier.
  public var products: [Product]

  /// One product and its versions.
  public struct Product: Codable, Equatable, Sendable {
    /// The In-App Purchase product identifier.
    public var productIdentifier: String
    /// Sorted by ContentVersion, lowest first.
    public var versions: [Version]
  }

  /// One downloadable version of a product.
  public struct Version: Codable, Equatable, Sendable {
    /// The package's `ContentVersion`.
    public var contentVersion: String
    /// Where the package is downloaded from.
    public var url: String
    /// The package file's size in bytes.
    public var size: Int64
    /// The SHA-256 of the package file, in lower-case hex.
    public var sha256: String
    /// `xar`, `flat-package` or `zip`.
    public var format: String
    /// The lowest app version that can use this content, when given.
    public var minimumAppVersion: String?
  }

  /// The catalog format this library writes and reads.
  public static let currentFormatVersion = 1

  /// A catalog at `sequence` listing `products`.
  public init(sequence: Int64 = 0, products: [Product] = []) {
    formatVersion = Catalog.currentFormatVersion
    self.sequence = sequence
    self.products = products
  }

  /// The default lifetime of a catalog written by publish and `catalog remove`/`rebase`/`renew`.
  public static let defaultLifetime: Int64 = 30 * 86_400

  /// Sets ``expires`` to `lifetime` seconds after `now`.
  public mutating func setExpiry(lifetime: Int64, now: Date = Date()) {
    expires = Catalog.rfc3339(now.addingTimeInterval(TimeInterval(lifetime)))
  }

  /// `date` in RFC 3339, UTC, whole seconds.
  public static func rfc3339(_ date: Date) -> String {
    let formatter = ISO8601DateFormatter()
    formatter.timeZone = TimeZone(identifier: "UTC")
    formatter.formatOptions = [.withInternetDateTime]
    return formatter.string(from: Date(timeIntervalSince1970: date.timeIntervalSince1970.rounded(.down)))
  }

  /// The moment ``expires`` names, or nil when there is none; throws when it is not an RFC 3339
  /// UTC time as pkgtool writes it (``utcTime(_:)``).
  public func expiryDate() throws -> Date? {
    guard let expires else { return nil }
    guard let date = Catalog.utcTime(expires) else {
      throw CatalogError.malformed(
        "the catalog's 'expires' ('\(expires)') is not an RFC 3339 UTC time like 2026-12-26T09:30:00Z")
    }
    return date
  }

  /// `text` as a moment when it is exactly `YYYY-MM-DDTHH:MM:SSZ`, a real date and time, written
  /// as ``rfc3339(_:)`` writes it; nil for anything else. An offset, fractional seconds, a
  /// lower-case letter, `24:00`, February 30 or a five-digit year are refused: every reader of a
  /// signed expiry must find the same moment in it (Python's check reads it the same way).
  public static func utcTime(_ text: String) -> Date? {
    let bytes = Array(text.utf8)
    guard bytes.count == 20 else { return nil }
    for (i, byte) in bytes.enumerated() {
      switch i {
      case 4, 7: guard byte == UInt8(ascii: "-") else { return nil }
      case 10: guard byte == UInt8(ascii: "T") else { return nil }
      case 13, 16: guard byte == UInt8(ascii: ":") else { return nil }
      case 19: guard byte == UInt8(ascii: "Z") else { return nil }
      default: guard byte >= 0x30 && byte <= 0x39 else { return nil }
      }
    }
    let formatter = ISO8601DateFormatter()
    formatter.formatOptions = [.withInternetDateTime]
    // Foundation moves an impossible date on (February 30 to March 2): written back, it differs.
    guard let date = formatter.date(from: text), rfc3339(date) == text else { return nil }
    return date
  }

  /// Throws ``CatalogError/expired(_:)`` when the catalog has expired at `now`. Returns a
  /// one-line note when it carries no expiry (an older catalog, accepted).
  @discardableResult
  public func checkNotExpired(now: Date = Date()) throws -> String? {
    guard let date = try expiryDate() else {
      return "note: the catalog has no expiry (written before pkgtool wrote one); publish or catalog renew gives it one"
    }
    guard now < date else {
      throw CatalogError.expired(
        "the catalog expired at \(expires!) (sequence \(sequence)); the publisher must sign a fresh one (pkgtool catalog renew)"
      )
    }
    return nil
  }

  /// Products sorted by identifier, versions by ContentVersion: the order the file is written in.
  public mutating func sort() {
    products.sort {
      $0.productIdentifier.unicodeScalars.lexicographicallyPrecedes($1.productIdentifier.unicodeScalars) {
        $0.value < $1.value
      }
    }
    for i in products.indices {
      products[i].versions.sort {
        (ContentVersion($0.contentVersion) ?? ContentVersion(components: [0]))
          < (ContentVersion($1.contentVersion) ?? ContentVersion(components: [0]))
      }
    }
  }

  /// The entry for exactly these bytes, if the catalog has one.
  public func version(withSHA256 sha256: String) -> (product: String, version: Version)? {
    for product in products {
      if let version = product.versions.first(where: { $0.sha256 == sha256 }) {
        return (product.productIdentifier, version)
      }
    }
    return nil
  }

  /// The most bytes a download of `url` may take: the size the catalog gives for that URL, or
  /// its largest entry when the URL is not listed (the bytes are checked afterwards anyway).
  public func downloadLimit(forURL url: String) -> Int64 {
    let versions = products.flatMap(\.versions)
    return versions.first { $0.url == url }?.size ?? versions.map(\.size).max() ?? 0
  }

  /// Checks a package already read (its SHA-256, size and plist) against the catalog: the
  /// SHA-256 must be an entry's, and that entry's size, product and version must be the
  /// package's. Throws ``CatalogError`` otherwise.
  public func check(sha256 sha: String, size: UInt64, info: ContentInfo, name: String) throws -> Version {
    let (product, entry) = try listedEntry(sha256: sha, size: size, name: name) { info }
    try checkIdentity(info, against: entry, of: product, name: name)
    return entry
  }

  /// Reads the package at `path` and checks it as ``check(sha256:size:info:name:)`` does.
  public func check(packageAt path: String) throws -> Version {
    let file: FileDescriptor
    do { file = try FileDescriptor.open(regularFile: path) } catch { throw OperationError.wrap(error) }
    return try check(file: file)
  }

  /// As ``check(packageAt:)``, for the package file open as `file`: the bytes hashed are the
  /// bytes read, and an operation that goes on to unpack reads the same descriptor. Messages
  /// name the file `name`, or its path.
  package func check(file: FileDescriptor, name: String? = nil) throws -> Version {
    let path = name ?? file.path
    let size = try file.size()
    let readInfo = { () throws -> ContentInfo in
      do {
        guard let bytes = try ContentInfoLocator.bytes(in: try PackageOpener.open(.file(file))) else {
          throw CatalogError.mismatch("'\(path)' has no ContentInfo.plist")
        }
        return try ContentInfo(decoding: bytes)
      } catch let error as CatalogError {
        throw error
      } catch {
        throw CatalogError.mismatch("'\(path)' cannot be read as a package: \(error)")
      }
    }
    let (product, entry) = try listedEntry(sha256: try PackageDigest.sha256(of: file), size: size, name: path) {
      try? readInfo()
    }
    let info = try readInfo()
    try checkIdentity(info, against: entry, of: product, name: path)
    return entry
  }

  /// The entry for these bytes, whose size must also agree. `identity` gives the package's
  /// product and version (or nil) for the message when the bytes are not listed.
  private func listedEntry(
    sha256 sha: String, size: UInt64, name: String, identity: () -> ContentInfo?
  ) throws -> (product: String, version: Version) {
    guard let (product, entry) = version(withSHA256: sha) else {
      throw CatalogError.notListed(notListed(name: name, sha256: sha, size: size, info: identity()))
    }
    guard UInt64(clamping: entry.size) == size else {
      throw CatalogError.mismatch("'\(name)' is \(size) bytes; the catalog says \(entry.size)")
    }
    return (product, entry)
  }

  /// Why bytes the catalog does not list are refused, in terms of what it does list: a catalog
  /// keeps no record of a withdrawn version, so the bytes of one are told apart from altered
  /// bytes by the version their plist names.
  private func notListed(name: String, sha256 sha: String, size: UInt64, info: ContentInfo?) -> String {
    let start = "'\(name)' (SHA-256 \(sha), \(size) bytes) is not in the catalog"
    guard let info else {
      return start + ": its bytes are none of the versions it lists (a version withdrawn, never published, or altered)"
    }
    let id = info.productIdentifier
    let version = info.contentVersion.description
    guard let listed = products.first(where: { $0.productIdentifier == id }), !listed.versions.isEmpty else {
      return start + ": it lists no version of \(id), whose \(version) this is"
    }
    if listed.versions.contains(where: { ContentVersion($0.contentVersion) == info.contentVersion }) {
      return start + ": its bytes differ from the \(id) \(version) it lists (the package was altered or rebuilt)"
    }
    let versions = listed.versions.map(\.contentVersion).joined(separator: ", ")
    return start + ": it lists \(id) \(versions), not \(version) (withdrawn, or never published)"
  }

  /// The package's plist must name the entry's product and version.
  private func checkIdentity(_ info: ContentInfo, against entry: Version, of product: String, name: String) throws {
    guard info.productIdentifier == product, info.contentVersion.description == entry.contentVersion else {
      throw CatalogError.mismatch(
        "'\(name)' holds \(info.productIdentifier) \(info.contentVersion); the catalog lists these bytes as \(product) \(entry.contentVersion)"
      )
    }
  }
}

/// Why a catalog or a package was refused.
public enum CatalogError: Error, CustomStringConvertible, Equatable {
  /// The catalog file is not a catalog.
  case malformed(String)
  /// No signature of the given key, or one that does not verify.
  case badSignature(String)
  /// Older than the catalog used last (a replay).
  case replayed(String)
  /// The package's bytes are not listed.
  case notListed(String)
  /// Listed, but size, product or version disagree.
  case mismatch(String)
  /// Past its `expires` time (a frozen catalog).
  case expired(String)

  /// The problem, for people.
  public var description: String {
    switch self {
    case .malformed(let s), .badSignature(let s), .replayed(let s), .notListed(let s), .mismatch(let s),
      .expired(let s):
      return s
    }
  }
}

/// A catalog file: the catalog under `signed`, and Ed25519 signatures over the catalog's canonical
/// JSON bytes under `signatures`.
public enum CatalogFile {
  struct Document: Codable {
    var signed: Catalog
    var signatures: [Signature]
  }

  struct Signature: Codable {
    var keyId: String
    var algorithm: String
    /// Standard base64 of the 64-byte signature.
    var signature: String
  }

  /// The envelope a catalog file and a root file share: the `signed` value, and Ed25519
  /// `signatures` over its canonical (RFC 8785) bytes. Read the same way for both.
  struct Envelope {
    /// One item of `signatures`.
    struct Item {
      var keyID: String
      /// The signature's bytes when the algorithm is `ed25519` and the base64 is canonical;
      /// nil otherwise (it never verifies).
      var signature: [UInt8]?
    }
    /// The signed value.
    var signed: JSONValue
    /// What the signatures cover.
    var canonical: [UInt8]
    /// In the file's order.
    var items: [Item]

    /// `value`'s `signed` and `signatures`; `what` names the document in messages ("the
    /// catalog", "'root.2.json'"). Refuses a `signatures` item that is not an object of three
    /// strings (`keyId`, `algorithm`, `signature`): readers that skip such an item and readers
    /// that stop at it would disagree on the file.
    init(_ value: JSONValue, what: String) throws {
      guard let members = value.objectValue, let signed = members["signed"],
        case .array(let signatures)? = members["signatures"]
      else {
        throw CatalogError.malformed("\(what) has no 'signed' object and 'signatures' array")
      }
      var items: [Item] = []
      for (index, item) in signatures.enumerated() {
        guard let fields = item.objectValue, Set(fields.keys) == ["keyId", "algorithm", "signature"],
          case .string(let keyID)? = fields["keyId"], case .string(let algorithm)? = fields["algorithm"],
          case .string(let text)? = fields["signature"]
        else {
          throw CatalogError.malformed(
            "\(what)'s signature \(index + 1) is not an object of 'keyId', 'algorithm' and 'signature' strings")
        }
        items.append(Item(keyID: keyID, signature: algorithm == "ed25519" ? Base64.decodeCanonical(text) : nil))
      }
      self.signed = signed
      canonical = signed.canonicalBytes
      self.items = items
    }

    /// True when `item`'s signature verifies with `key` over ``canonical``.
    func verifies(_ item: Item, with key: CatalogPublicKey) -> Bool {
      item.signature.map { key.isValidSignature($0, for: canonical) } ?? false
    }
  }

  /// The file's bytes: `signed` and `signatures`, keys sorted, indented, so that publishing a
  /// new version changes only the lines it adds.
  public static func encode(_ catalog: Catalog, signedWith key: CatalogSigningKey) throws -> [UInt8] {
    try encode(catalog, signedWith: [key])
  }

  /// As ``encode(_:signedWith:)-(_,CatalogSigningKey)``, with one signature per key (sorted by
  /// key id), for a root whose catalog role needs several.
  public static func encode(_ catalog: Catalog, signedWith keys: [CatalogSigningKey]) throws -> [UInt8] {
    // Past 2^53 - 1 the catalog would be signed but no reader (pkgtool, JavaScript, Python's
    // check) could verify it: refused before anything is written.
    guard catalog.sequence <= JSONValue.largestExactInteger else {
      throw OperationError(
        "the catalog's sequence would be \(catalog.sequence), past 2^53 - 1, which JSON numbers hold exactly",
        hint: "start a new catalog with a new key, and ship that key's .pub to the apps", code: .catalogRefused)
    }
    let signed = try JSONValue(encoding: catalog).canonicalBytes
    let signatures = try keys.sorted { $0.publicKey.keyID < $1.publicKey.keyID }.map {
      Signature(
        keyId: $0.publicKey.keyID, algorithm: "ed25519", signature: Base64.encode(try $0.signature(for: signed)))
    }
    return try JSONText.bytes(Document(signed: catalog, signatures: signatures))
  }

  /// Parses a catalog file and checks its signature with `publicKey`: the catalog, or
  /// ``CatalogError``.
  public static func verify(_ bytes: [UInt8], publicKey: CatalogPublicKey) throws -> Catalog {
    try verify(bytes, trust: CatalogTrust(key: publicKey))
  }

  /// Parses a catalog file and checks that at least `trust.threshold` distinct keys of `trust`
  /// signed it: the catalog, or ``CatalogError``.
  public static func verify(_ bytes: [UInt8], trust: CatalogTrust) throws -> Catalog {
    guard bytes.count <= 64 << 20 else { throw CatalogError.malformed("the catalog is larger than 64 MiB") }
    let value: JSONValue
    do { value = try JSONValue(parsing: bytes) } catch {
      throw CatalogError.malformed("the catalog is not JSON of the expected kind: \(describeDecoding(error))")
    }
    let envelope = try Envelope(value, what: "the catalog")
    let canonical = envelope.canonical
    var seen: [String] = []
    var valid = Set<String>()
    var rootOnly: [String] = []
    for item in envelope.items {
      guard let key = trust.keys[item.keyID] else {
        if trust.rootOnly.contains(item.keyID) { rootOnly.append(item.keyID) }
        continue
      }
      seen.append(item.keyID)
      if envelope.verifies(item, with: key) { valid.insert(item.keyID) }
    }
    guard valid.count >= trust.threshold else {
      let broken = seen.filter { !valid.contains($0) }
      if let key = trust.keys.keys.first, trust.name == "key \(key)" {
        throw CatalogError.badSignature(
          seen.isEmpty
            ? "the catalog carries no signature of key \(key)"
            : "the catalog's signature does not verify with key \(key): it was changed after signing")
      }
      var text =
        "the catalog carries \(valid.count) valid signature(s) by \(trust.name); \(trust.threshold) needed"
      if let first = broken.first { text += "; the signature of key \(first) does not verify: changed after signing" }
      if let first = rootOnly.first { text += "; key \(first) signed it, but the root lists it only to sign roots" }
      throw CatalogError.badSignature(text)
    }
    do {
      let catalog = try JSONDecoder().decode(Catalog.self, from: Data(canonical))
      guard catalog.formatVersion == Catalog.currentFormatVersion else {
        throw CatalogError.malformed(
          "catalog format \(catalog.formatVersion) is not one this pkgtool reads (\(Catalog.currentFormatVersion))")
      }
      var products = Set<String>()
      for product in catalog.products {
        guard products.insert(product.productIdentifier).inserted else {
          throw CatalogError.malformed("the catalog lists the product \(product.productIdentifier) twice")
        }
        var versions = Set<String>()
        for version in product.versions where !versions.insert(version.contentVersion).inserted {
          throw CatalogError.malformed(
            "the catalog lists \(product.productIdentifier) \(version.contentVersion) twice")
        }
      }
      _ = try catalog.expiryDate()
      return catalog
    } catch let error as CatalogError {
      throw error
    } catch {
      throw CatalogError.malformed("the signed catalog does not have the expected fields: \(describeDecoding(error))")
    }
  }

  /// Reads and verifies the catalog file at `path`.
  public static func verify(contentsOf path: String, publicKey: CatalogPublicKey) throws -> Catalog {
    try verify(try bytes(of: path), publicKey: publicKey)
  }

  /// Reads the catalog file at `path` and verifies it with `trust`.
  public static func verify(contentsOf path: String, trust: CatalogTrust) throws -> Catalog {
    try verify(try bytes(of: path), trust: trust)
  }

  /// Reads the catalog file at `path` without checking any signature, for showing it: the
  /// catalog and the ids of the keys its signatures name. Never trust what this returns.
  public static func unverified(contentsOf path: String) throws -> (catalog: Catalog, keyIDs: [String]) {
    do {
      let document = try JSONDecoder().decode(Document.self, from: Data(try bytes(of: path)))
      return (document.signed, document.signatures.map(\.keyId))
    } catch let error as CatalogError {
      throw error
    } catch let error as OperationError {
      throw error
    } catch {
      throw CatalogError.malformed("'\(path)' is not a catalog: \(describeDecoding(error))")
    }
  }

  static func bytes(of path: String, what: String = "catalog") throws -> [UInt8] {
    do {
      let file = try FileDescriptor.open(regularFile: path)
      let size = try file.size()
      guard size <= 64 << 20 else { throw CatalogError.malformed("'\(path)' is larger than 64 MiB") }
      return try file.read(count: Int(size), at: 0)
    } catch let error as CatalogError {
      throw error
    } catch {
      throw OperationError("cannot read the \(what) '\(path)': \(error)", code: .inputUnreadable)
    }
  }
}
