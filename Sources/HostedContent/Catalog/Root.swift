import Foundation
import SystemIO
import TextCoding

/// The root of trust for catalogs (docs/catalog.md, "Trust beyond one key"): which keys may sign
/// catalogs, how many of them must, and which keys may sign the next root. Signed like a
/// catalog (Ed25519 over the RFC 8785 form of `signed`), by at least ``Roles/root``'s threshold
/// of its own root keys; a newer version is trusted only when the version before it also signed
/// it, so the root keys (kept offline) replace any key, catalog or root, without a new app.
public struct Root: Codable, Equatable, Sendable {
  /// Always `root`: a catalog's signature can never be taken for a root's.
  public var type: String
  /// 1 for the first root; each rotation raises it by exactly one.
  public var version: Int64
  /// When the root stops being trusted, RFC 3339 in UTC, as a catalog's ``Catalog/expires``.
  public var expires: String
  /// Every key a role names, by key id (``CatalogPublicKey/keyID``).
  public var keys: [String: Key]
  /// Who signs what.
  public var roles: Roles

  /// A public key listed in a root.
  public struct Key: Codable, Equatable, Sendable {
    /// Always `ed25519`.
    public var algorithm: String
    /// Standard base64 of the 32 raw bytes (written), or of the 44-byte SubjectPublicKeyInfo.
    public var publicKey: String

    /// A key entry as written.
    public init(algorithm: String, publicKey: String) {
      self.algorithm = algorithm
      self.publicKey = publicKey
    }
  }

  /// The keys of one role and how many of them must sign.
  public struct Role: Codable, Equatable, Sendable {
    /// Ids of keys listed in ``Root/keys``, sorted.
    public var keyIds: [String]
    /// How many distinct keys of ``keyIds`` must sign: at least 1, at most their number.
    public var threshold: Int
  }

  /// The two roles.
  public struct Roles: Codable, Equatable, Sendable {
    /// Signs roots (this one and the next version).
    public var root: Role
    /// Signs catalogs.
    public var catalog: Role
  }

  /// A root of `version`, expiring `lifetime` seconds after `now`, listing `rootKeys` and
  /// `catalogKeys` with their thresholds. Checked as a client checks it.
  public init(
    version: Int64, rootKeys: [CatalogPublicKey], rootThreshold: Int, catalogKeys: [CatalogPublicKey],
    catalogThreshold: Int, lifetime: Int64, now: Date = Date()
  ) throws {
    type = "root"
    self.version = version
    expires = Catalog.rfc3339(now.addingTimeInterval(TimeInterval(lifetime)))
    keys = [:]
    for key in rootKeys + catalogKeys {
      keys[key.keyID] = Key(algorithm: "ed25519", publicKey: key.base64)
    }
    roles = Roles(
      root: Role(keyIds: rootKeys.map(\.keyID).sorted(), threshold: rootThreshold),
      catalog: Role(keyIds: catalogKeys.map(\.keyID).sorted(), threshold: catalogThreshold))
    for (role, given) in [("root", rootKeys), ("catalog", catalogKeys)] {
      var seen: [String: CatalogPublicKey] = [:]
      for key in given {
        if let other = seen[key.keyID] {
          throw CatalogError.malformed(
            other == key
              ? "the \(role) role lists key \(key.keyID) twice"
              : "key-id collision: two different keys have the id \(key.keyID)"
          )
        }
        seen[key.keyID] = key
      }
    }
    for key in rootKeys + catalogKeys where (try? publicKey(key.keyID)) != key {
      throw CatalogError.malformed("key-id collision: two different keys have the id \(key.keyID)")
    }
    try check()
  }

  /// The key listed under `keyID`; throws when it is not an Ed25519 key whose id is `keyID`.
  public func publicKey(_ keyID: String) throws -> CatalogPublicKey {
    guard let entry = keys[keyID] else { throw CatalogError.malformed("root version \(version) lists no key \(keyID)") }
    guard entry.algorithm == "ed25519", let der = Base64.decodeCanonical(entry.publicKey),
      let key = try? CatalogPublicKey(
        rawRepresentation: der.count == 44 && Array(der.prefix(12)) == CatalogKeyFile.spkiPrefix
          ? Array(der.suffix(32)) : Array(der))
    else {
      throw CatalogError.malformed("root version \(version): the key \(keyID) is not an Ed25519 public key")
    }
    guard key.keyID == keyID else {
      throw CatalogError.malformed(
        "key-id collision: root version \(version) lists under the id \(keyID) a key whose id is \(key.keyID)")
    }
    return key
  }

  /// The form a client requires: type, version, expiry, every key, and roles whose thresholds
  /// can be met.
  public func check() throws {
    guard type == "root" else { throw CatalogError.malformed("the file's type is '\(type)', not 'root'") }
    guard version >= 1 else { throw CatalogError.malformed("the root's version \(version) is not 1 or more") }
    _ = try expiryDate()
    for id in keys.keys { _ = try publicKey(id) }
    for (name, role) in [("root", roles.root), ("catalog", roles.catalog)] {
      guard Set(role.keyIds).count == role.keyIds.count else {
        throw CatalogError.malformed("root version \(version): the \(name) role lists a key twice")
      }
      for id in role.keyIds where keys[id] == nil {
        throw CatalogError.malformed("root version \(version): the \(name) role names the unlisted key \(id)")
      }
      guard role.threshold >= 1, role.threshold <= role.keyIds.count else {
        throw CatalogError.malformed(
          "root version \(version): the \(name) role's threshold \(role.threshold) is not between 1 and its \(role.keyIds.count) key(s)"
        )
      }
    }
  }

  /// The moment ``expires`` names.
  public func expiryDate() throws -> Date {
    guard let date = Catalog.utcTime(expires) else {
      throw CatalogError.malformed(
        "the root's 'expires' ('\(expires)') is not an RFC 3339 UTC time like 2026-12-26T09:30:00Z")
    }
    return date
  }

  /// The ids of the distinct keys of `role` whose signature in `envelope` verifies.
  func signers(of envelope: CatalogFile.Envelope, role: Role) -> Set<String> {
    var valid = Set<String>()
    for item in envelope.items where role.keyIds.contains(item.keyID) {
      guard let key = try? publicKey(item.keyID), envelope.verifies(item, with: key) else { continue }
      valid.insert(item.keyID)
    }
    return valid
  }

  /// Who may sign catalogs: the catalog role of this root.
  public var catalogTrust: CatalogTrust {
    CatalogTrust(
      keys: Dictionary(
        uniqueKeysWithValues: roles.catalog.keyIds.compactMap { id in (try? publicKey(id)).map { (id, $0) } }),
      threshold: roles.catalog.threshold, name: "catalog keys of root version \(version)",
      rootOnly: Set(roles.root.keyIds).subtracting(roles.catalog.keyIds))
  }
}

/// The keys a catalog must be signed by, and how many of them: one public key
/// (``init(key:)``), or a root's catalog role (``Root/catalogTrust``).
public struct CatalogTrust: Sendable {
  /// The keys, by id.
  public var keys: [String: CatalogPublicKey]
  /// How many distinct keys must sign.
  public var threshold: Int
  /// What the keys are, for messages.
  var name: String
  /// Keys the root trusts for another role only: named when they signed a catalog.
  var rootOnly: Set<String> = []

  /// One key, whose signature is enough.
  public init(key: CatalogPublicKey) {
    keys = [key.keyID: key]
    threshold = 1
    name = "key \(key.keyID)"
  }

  init(keys: [String: CatalogPublicKey], threshold: Int, name: String, rootOnly: Set<String>) {
    self.keys = keys
    self.threshold = threshold
    self.name = name
    self.rootOnly = rootOnly
  }
}

/// A root file, and chains of them.
public enum RootFile {
  /// The file's bytes: `signed` and `signatures` (sorted by key id), indented, as a catalog's.
  public static func encode(_ root: Root, signedWith keys: [CatalogSigningKey]) throws -> [UInt8] {
    let signed = try JSONValue(encoding: root).canonicalBytes
    let signatures = try keys.sorted { $0.publicKey.keyID < $1.publicKey.keyID }.map {
      CatalogFile.Signature(
        keyId: $0.publicKey.keyID, algorithm: "ed25519", signature: Base64.encode(try $0.signature(for: signed)))
    }
    return try JSONText.bytes(Document(signed: root, signatures: signatures))
  }

  struct Document: Codable {
    var signed: Root
    var signatures: [CatalogFile.Signature]
  }

  /// A root file parsed and checked for form, its signatures not yet counted.
  public struct Parsed: Sendable {
    /// The root, as signed.
    public var root: Root
    /// The file it came from.
    public var path: String
    let envelope: CatalogFile.Envelope

    /// The distinct keys of `role` that signed this root.
    func signers(by role: Root.Role, of root: Root) -> Set<String> {
      root.signers(of: envelope, role: role)
    }
  }

  /// Reads the root at `path` and checks its form (not its signatures).
  public static func parse(contentsOf path: String) throws -> Parsed {
    try parse(try CatalogFile.bytes(of: path, what: "root"), name: path)
  }

  /// Checks the form of a root's bytes (not its signatures); `name` says where they came from
  /// (a path, or a URL without its query) in messages.
  public static func parse(_ bytes: [UInt8], name path: String) throws -> Parsed {
    let value: JSONValue
    do { value = try JSONValue(parsing: bytes) } catch let refusal as StrictJSON.Refusal where refusal.isDuplicateName {
      throw CatalogError.malformed(
        "'\(path)' is refused: \(refusal) (two keys under one key id, or a field given twice)")
    } catch {
      throw CatalogError.malformed("'\(path)' is not JSON of the expected kind: \(describeDecoding(error))")
    }
    let envelope = try CatalogFile.Envelope(value, what: "'\(path)'")
    let root: Root
    do { root = try JSONDecoder().decode(Root.self, from: Data(envelope.canonical)) } catch {
      throw CatalogError.malformed("'\(path)' is not a root: \(describeDecoding(error))")
    }
    do { try root.check() } catch let error as CatalogError { throw CatalogError.malformed("'\(path)': \(error)") }
    return Parsed(root: root, path: path, envelope: envelope)
  }

  /// Checks `parsed` is signed by `role`'s threshold of `signer`, naming `what` in the message.
  static func requireSignatures(_ parsed: Parsed, by signer: Root, role: Root.Role, what: String) throws {
    let count = parsed.signers(by: role, of: signer).count
    guard count >= role.threshold else {
      throw CatalogError.badSignature(
        "'\(parsed.path)' (root version \(parsed.root.version)) carries \(count) valid signature(s) by \(what); \(role.threshold) needed (tampered, or not signed by enough root keys)"
      )
    }
  }

  /// The root files of `arguments`: files as given, and every `*.json` in a folder.
  public static func paths(_ arguments: [String]) throws -> [String] {
    var paths: [String] = []
    for argument in arguments {
      if Paths.isDirectory(argument) {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: argument)) ?? []
        paths += names.filter { $0.hasSuffix(".json") }.sorted().map { argument + "/" + $0 }
      } else {
        paths.append(argument)
      }
    }
    guard !paths.isEmpty else {
      throw OperationError(
        "no root file in \(arguments.joined(separator: ", "))", hint: "make one with pkgtool root init",
        code: .catalogRefused)
    }
    return paths
  }

  /// Verifies a chain of roots and returns them in order, the newest last.
  ///
  /// The lowest version is the anchor, the root the app shipped with: it must be signed by its
  /// own root threshold. Each next version must be exactly one higher and signed by the root
  /// threshold of the version before it and by its own. Only the newest must not have expired
  /// at `now` (older ones were replaced). Throws ``CatalogError``.
  public static func verifyChain(_ arguments: [String], now: Date = Date()) throws -> [Root] {
    try verifyChain(parsed: try paths(arguments).map(parse(contentsOf:)), now: now)
  }

  /// Verifies a chain of roots already parsed (``parse(_:name:)``, in any order), as
  /// ``verifyChain(_:now:)`` does.
  public static func verifyChain(parsed roots: [Parsed], now: Date = Date()) throws -> [Root] {
    let parsed = roots.sorted { $0.root.version < $1.root.version }
    guard !parsed.isEmpty else { throw CatalogError.malformed("no root was given") }
    var chain: [Root] = []
    for item in parsed {
      if let previous = chain.last {
        guard item.root.version != previous.version else {
          throw CatalogError.malformed("two roots of version \(previous.version) were given ('\(item.path)')")
        }
        guard item.root.version == previous.version + 1 else {
          throw CatalogError.malformed(
            "root version \(previous.version + 1) is missing between \(previous.version) and \(item.root.version): each rotation must be given"
          )
        }
        try requireSignatures(
          item, by: previous, role: previous.roles.root,
          what: "root keys of version \(previous.version) (\(previous.roles.root.threshold) needed to rotate)")
      }
      try requireSignatures(item, by: item.root, role: item.root.roles.root, what: "its own root keys")
      chain.append(item.root)
    }
    let newest = chain[chain.count - 1]
    guard now < (try newest.expiryDate()) else {
      throw CatalogError.expired(
        "root version \(newest.version) expired at \(newest.expires); its root keys must sign a new version (pkgtool root rotate)"
      )
    }
    return chain
  }
}

/// Who signs a catalog that `publish` or a catalog edit writes: one or more distinct secret
/// keys, and optionally the chain of roots (oldest first) the catalog is trusted under.
public struct CatalogSigner: Sendable {
  /// The secret keys; each adds one signature.
  public var keys: [CatalogSigningKey]
  /// The roots, oldest first (``RootFile/verifyChain(_:now:)``), or none for one plain key.
  public var roots: [Root]

  /// Signs with `keys`; with `roots`, the existing catalog may have been signed under any of
  /// them, and the new one must meet the newest root's catalog threshold.
  public init(keys: [CatalogSigningKey], roots: [Root] = []) {
    self.keys = keys
    self.roots = roots
  }

  /// The key ids, for messages.
  public var keyIDs: [String] { keys.map(\.publicKey.keyID) }

  /// The catalog at `path`, which these keys may extend: signed by one of them, or by the
  /// catalog threshold of one of the roots. Throws ``CatalogError`` (the first refusal).
  func existing(_ path: String) throws -> Catalog {
    let own = CatalogTrust(
      keys: Dictionary(keys.map { ($0.publicKey.keyID, $0.publicKey) }, uniquingKeysWith: { a, _ in a }),
      threshold: 1, name: keys.count == 1 ? "key \(keyIDs[0])" : "keys \(keyIDs.joined(separator: ", "))",
      rootOnly: [])
    do { return try CatalogFile.verify(contentsOf: path, trust: own) } catch let first as CatalogError {
      for root in roots.reversed() {
        if let catalog = try? CatalogFile.verify(contentsOf: path, trust: root.catalogTrust) { return catalog }
      }
      throw first
    }
  }

  /// Throws when the signatures these keys make would not meet the newest root's catalog
  /// threshold: nothing is written then.
  func checkThreshold() throws {
    guard let root = roots.last else { return }
    let listed = keyIDs.filter { root.roles.catalog.keyIds.contains($0) }
    guard listed.count >= root.roles.catalog.threshold else {
      throw OperationError(
        "the catalog would carry \(listed.count) signature(s) by catalog keys of root version \(root.version); its threshold is \(root.roles.catalog.threshold)",
        hint:
          "give --key once for each catalog key to sign with; the root lists \(root.roles.catalog.keyIds.joined(separator: ", "))",
        code: .catalogRefused)
    }
  }
}
