import Crypto
import Foundation
import SystemIO
import TextCoding

/// An Ed25519 key pair for signing catalogs (swift-crypto).
///
/// On disk the secret key is PKCS#8 PEM (`-----BEGIN PRIVATE KEY-----`) and the public key
/// SubjectPublicKeyInfo PEM (`-----BEGIN PUBLIC KEY-----`), both for the Ed25519 OID 1.3.101.112,
/// as OpenSSL and Python's `cryptography` write and read them. The secret key file is created
/// 0600 and never printed; the public key goes beside it with `.pub` added. Key files of the old
/// one-line base64 format are still read; ``formatNote`` then says how to convert them.
public struct CatalogSigningKey: Sendable {
  // The raw bytes (swift-crypto's key types are not `Sendable`); the key is made from them
  // where it is used.
  private let raw: [UInt8]
  private let publicRaw: [UInt8]
  /// Set when the file read was in the old one-line base64 format: a one-line note for people.
  public let formatNote: String?

  private init(_ key: Curve25519.Signing.PrivateKey, formatNote: String? = nil) {
    raw = Array(key.rawRepresentation)
    publicRaw = Array(key.publicKey.rawRepresentation)
    self.formatNote = formatNote
  }

  /// A new random key pair.
  public init() { self.init(Curve25519.Signing.PrivateKey()) }

  /// Reads a secret key file written by ``write(to:)`` (or an old one-line base64 one).
  /// `purpose` names what needs the key, for the message when the file is a public key.
  public init(contentsOf path: String, for purpose: String = "signing") throws {
    let file = try CatalogKeyFile.read(path)
    let hint = "make a key pair with pkgtool keygen -o KEY"
    switch file.kind {
    case .publicKey:
      throw OperationError(
        "'\(path)' is a public key; \(purpose) needs the secret key, made by pkgtool keygen",
        hint: path.hasSuffix(".pub") ? "pass '\(path.dropLast(4))', the file beside it without .pub" : hint,
        code: .unusableKey)
    case .secretKey, .legacy:
      if file.kind == .legacy {
        // An old one-line file cannot say which half it is: one named as a public key, or one
        // whose bytes are the public key beside it, is the public half, which ships in apps.
        guard !path.hasSuffix(".pub") else {
          throw OperationError(
            "'\(path)' is an old one-line key file named as a public key; \(purpose) needs the secret key",
            hint: "pass '\(path.dropLast(4))', the file beside it without .pub", code: .unusableKey)
        }
        if let beside = try? CatalogKeyFile.read(path + ".pub"), beside.kind != .secretKey {
          guard beside.raw != file.raw else {
            throw OperationError(
              "'\(path)' holds the same bytes as the public key '\(path).pub'; \(purpose) needs the secret key",
              hint: hint, code: .unusableKey)
          }
        }
      }
      let key: Curve25519.Signing.PrivateKey
      do { key = try Curve25519.Signing.PrivateKey(rawRepresentation: file.raw) } catch {
        throw OperationError("'\(path)' is not an Ed25519 secret key", hint: hint, code: .unusableKey)
      }
      if file.kind == .legacy, let beside = try? CatalogKeyFile.read(path + ".pub"), beside.kind != .secretKey,
        beside.raw != Array(key.publicKey.rawRepresentation)
      {
        throw OperationError(
          "'\(path)' does not match the public key '\(path).pub' beside it; \(purpose) needs the secret key of that pair",
          hint: hint, code: .unusableKey)
      }
      self.init(key, formatNote: file.kind == .legacy ? CatalogKeyFile.legacyNote(path, secret: true) : nil)
    }
  }

  /// The public half.
  public var publicKey: CatalogPublicKey { CatalogPublicKey(checkedRaw: publicRaw) }

  /// The secret key as PKCS#8 PEM (`-----BEGIN PRIVATE KEY-----`).
  public var pemRepresentation: String { CatalogKeyFile.pem(CatalogKeyFile.pkcs8Prefix + raw, label: "PRIVATE KEY") }

  /// Writes the secret key to `path` (PKCS#8 PEM, created 0600, never replaced) and the public
  /// key to `path.pub` (SubjectPublicKeyInfo PEM). Both appear whole or not at all.
  public func write(to path: String) throws {
    for target in [path, path + ".pub"] where Paths.status(target) != nil {
      throw OperationError(
        "'\(target)' already exists",
        hint: "keys are never overwritten; choose another name or remove the old key deliberately", code: .outputExists)
    }
    try CatalogKeyFile.write(pemRepresentation, to: path, mode: 0o600)
    do {
      try CatalogKeyFile.write(publicKey.pemRepresentation, to: path + ".pub", mode: 0o644)
    } catch {
      FileSystem.removeFile(path)
      throw error
    }
  }

  /// The signature over `bytes`.
  public func signature(for bytes: [UInt8]) throws -> [UInt8] {
    Array(try Curve25519.Signing.PrivateKey(rawRepresentation: raw).signature(for: bytes))
  }
}

/// The public half of a ``CatalogSigningKey``: what an app ships to check catalogs.
public struct CatalogPublicKey: Sendable, Equatable {
  /// The 32 raw bytes, checked to be a key when this value was made.
  private let raw: [UInt8]
  /// Set when the file read was in the old one-line base64 format: a one-line note for people.
  public let formatNote: String?

  fileprivate init(checkedRaw: [UInt8]) {
    raw = checkedRaw
    formatNote = nil
  }

  /// From the 32 raw bytes.
  public init(rawRepresentation: [UInt8]) throws {
    try self.init(rawRepresentation: rawRepresentation, formatNote: nil)
  }

  private init(rawRepresentation: [UInt8], formatNote: String?) throws {
    do { raw = Array(try Curve25519.Signing.PublicKey(rawRepresentation: rawRepresentation).rawRepresentation) } catch {
      throw OperationError("not an Ed25519 public key (\(rawRepresentation.count) bytes)", code: .unusableKey)
    }
    self.formatNote = formatNote
  }

  /// Reads a `.pub` file: SubjectPublicKeyInfo PEM, or the old one line of base64.
  /// `purpose` names what needs the key, for the message when the file is a secret key.
  public init(contentsOf path: String, for purpose: String = "checking a catalog") throws {
    let file = try CatalogKeyFile.read(path)
    // An old one-line file cannot say which half it is; one with a `.pub` file beside it is
    // the secret half.
    if file.kind == .secretKey || (file.kind == .legacy && Paths.status(path + ".pub") != nil) {
      throw OperationError(
        "'\(path)' is a secret key; \(purpose) needs the public key, made by pkgtool keygen",
        hint: "pass '\(path).pub', and keep '\(path)' away from anything that ships", code: .unusableKey)
    }
    do {
      try self.init(
        rawRepresentation: file.raw,
        formatNote: file.kind == .legacy ? CatalogKeyFile.legacyNote(path, secret: false) : nil)
    } catch {
      throw OperationError(
        "'\(path)' is not an Ed25519 public key", hint: "pass the .pub file pkgtool keygen wrote", code: .unusableKey)
    }
  }

  /// Standard base64 of the 32 raw bytes.
  public var base64: String { Base64.encode(raw) }

  /// SubjectPublicKeyInfo PEM (`-----BEGIN PUBLIC KEY-----`).
  public var pemRepresentation: String { CatalogKeyFile.pem(CatalogKeyFile.spkiPrefix + raw, label: "PUBLIC KEY") }

  /// The first 16 hex digits of the SHA-256 of the raw key: names the key in a catalog.
  public var keyID: String {
    String(hexString(SHA256.hash(data: raw)).prefix(16))
  }

  /// True when `signature` is this key's over `bytes`.
  public func isValidSignature(_ signature: [UInt8], for bytes: [UInt8]) -> Bool {
    guard let key = try? Curve25519.Signing.PublicKey(rawRepresentation: raw) else { return false }
    return key.isValidSignature(signature, for: bytes)
  }

  /// Two keys are equal when their bytes are, whatever file format they came from.
  public static func == (a: CatalogPublicKey, b: CatalogPublicKey) -> Bool { a.raw == b.raw }
}

/// Reading and writing key files: PEM (PKCS#8 and SubjectPublicKeyInfo, Ed25519) and the old
/// one-line base64.
enum CatalogKeyFile {
  enum Kind { case secretKey, publicKey, legacy }

  /// The fixed DER before the 32 key bytes. PKCS#8 v1 (RFC 8410 §7): SEQUENCE { INTEGER 0,
  /// SEQUENCE { OID 1.3.101.112 }, OCTET STRING { OCTET STRING (32) } } — 48 bytes in all.
  static let pkcs8Prefix: [UInt8] = [
    0x30, 0x2E, 0x02, 0x01, 0x00, 0x30, 0x05, 0x06, 0x03, 0x2B, 0x65, 0x70, 0x04, 0x22, 0x04, 0x20,
  ]
  /// SubjectPublicKeyInfo (RFC 8410 §4): SEQUENCE { SEQUENCE { OID 1.3.101.112 }, BIT STRING
  /// (0 unused bits, 32 bytes) } — 44 bytes in all.
  static let spkiPrefix: [UInt8] = [0x30, 0x2A, 0x30, 0x05, 0x06, 0x03, 0x2B, 0x65, 0x70, 0x03, 0x21, 0x00]

  static func pem(_ der: [UInt8], label: String) -> String {
    let text = Base64.encode(der)
    var lines: [Substring] = []
    var rest = Substring(text)
    while !rest.isEmpty {
      lines.append(rest.prefix(64))
      rest = rest.dropFirst(64)
    }
    return "-----BEGIN \(label)-----\n" + lines.joined(separator: "\n") + "\n-----END \(label)-----\n"
  }

  static func legacyNote(_ path: String, secret: Bool) -> String {
    secret
      ? "note: '\(path)' is in the old one-line base64 key format; write it as PEM with: pkgtool keygen --from '\(path)' -o NEW"
      : "note: '\(path)' is in the old one-line base64 key format; pkgtool keygen --from SECRET -o NEW writes NEW.pub as PEM"
  }

  /// The key bytes and what kind of key the file says it is.
  static func read(_ path: String) throws -> (kind: Kind, raw: [UInt8]) {
    let bytes: [UInt8]
    do { bytes = try FileDescriptor.open(regularFile: path).read(count: 4096, at: 0) } catch {
      throw OperationError("cannot read the key '\(path)': \(error)", code: .inputUnreadable)
    }
    let text = String(decoding: bytes, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    let notAKey = OperationError(
      "'\(path)' is not an Ed25519 key file (PEM, or one line of base64)", hint: "make keys with pkgtool keygen",
      code: .unusableKey)
    guard text.hasPrefix("-----BEGIN ") else {
      guard !text.contains("\n"), let raw = Base64.decode(text), raw.count == 32 else { throw notAKey }
      return (.legacy, Array(raw))
    }
    let lines = text.split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }
    guard let first = lines.first, let last = lines.last, first.hasSuffix("-----"),
      last == "-----END " + first.dropFirst("-----BEGIN ".count)
    else { throw notAKey }
    let label = String(first.dropFirst("-----BEGIN ".count).dropLast(5))
    guard let der = Base64.decode(lines.dropFirst().dropLast().joined()) else { throw notAKey }
    switch label {
    case "PRIVATE KEY":
      guard der.count == 48, Array(der.prefix(16)) == pkcs8Prefix else {
        throw OperationError(
          "'\(path)' is a private key, but not an Ed25519 one (OID 1.3.101.112) in PKCS#8 v1",
          hint: "make one with pkgtool keygen, or openssl genpkey -algorithm ed25519", code: .unusableKey)
      }
      return (.secretKey, Array(der.suffix(32)))
    case "PUBLIC KEY":
      guard der.count == 44, Array(der.prefix(12)) == spkiPrefix else {
        throw OperationError(
          "'\(path)' is a public key, but not an Ed25519 one (OID 1.3.101.112)", hint: "make one with pkgtool keygen",
          code: .unusableKey)
      }
      return (.publicKey, Array(der.suffix(32)))
    case "ENCRYPTED PRIVATE KEY":
      throw OperationError(
        "'\(path)' is an encrypted private key, which pkgtool does not read",
        hint: "decrypt it: openssl pkey -in '\(path)' -out KEY (and keep KEY 0600)", code: .unusableKey)
    default:
      throw OperationError(
        "'\(path)' holds a '\(label)', not an Ed25519 key", hint: "make keys with pkgtool keygen", code: .unusableKey)
    }
  }

  /// Writes beside, then links into place: the file appears whole, and never over another.
  static func write(_ text: String, to path: String, mode: mode_t) throws {
    do { try PendingFile.write(Array(text.utf8), to: path, mode: mode, replace: false) } catch {
      throw OperationError.wrap(error)
    }
  }
}
