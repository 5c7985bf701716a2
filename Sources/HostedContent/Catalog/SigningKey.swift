import Crypto
import Foundation
import SystemIO
import XAR

/// An Ed25519 key pair for signing catalogs (swift-crypto). On disk each key is one line of
/// standard base64 of its 32 raw bytes: the private key file is created 0600 and never printed;
/// the public key goes beside it with `.pub` added.
public struct CatalogSigningKey: Sendable {
  // The raw bytes (swift-crypto's key types are not `Sendable`); the key is made from them
  // where it is used.
  private let raw: [UInt8]
  private let publicRaw: [UInt8]

  private init(_ key: Curve25519.Signing.PrivateKey) {
    raw = Array(key.rawRepresentation)
    publicRaw = Array(key.publicKey.rawRepresentation)
  }

  /// A new random key pair.
  public init() { self.init(Curve25519.Signing.PrivateKey()) }

  /// Reads a private key file written by ``write(to:)``.
  public init(contentsOf path: String) throws {
    let bytes = try CatalogKeyFile.read(path, what: "private key")
    do { self.init(try Curve25519.Signing.PrivateKey(rawRepresentation: bytes)) } catch {
      throw OperationError("'\(path)' is not an Ed25519 private key", hint: "make one with pkgtool keygen")
    }
  }

  /// The public half.
  public var publicKey: CatalogPublicKey { CatalogPublicKey(checkedRaw: publicRaw) }

  /// Writes the private key to `path` (created 0600, never replaced) and the public key to
  /// `path.pub`. Both appear whole or not at all.
  public func write(to path: String) throws {
    for target in [path, path + ".pub"] where Paths.status(target) != nil {
      throw OperationError(
        "'\(target)' already exists",
        hint: "keys are never overwritten; choose another name or remove the old key deliberately")
    }
    try CatalogKeyFile.write(Base64.encode(raw) + "\n", to: path, mode: 0o600)
    do {
      try CatalogKeyFile.write(publicKey.base64 + "\n", to: path + ".pub", mode: 0o644)
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

  fileprivate init(checkedRaw: [UInt8]) { raw = checkedRaw }

  /// From the 32 raw bytes.
  public init(rawRepresentation: [UInt8]) throws {
    do { raw = Array(try Curve25519.Signing.PublicKey(rawRepresentation: rawRepresentation).rawRepresentation) } catch {
      throw OperationError("not an Ed25519 public key (\(rawRepresentation.count) bytes)")
    }
  }

  /// Reads a `.pub` file (one line of base64).
  public init(contentsOf path: String) throws {
    let bytes = try CatalogKeyFile.read(path, what: "public key")
    do { try self.init(rawRepresentation: bytes) } catch {
      throw OperationError("'\(path)' is not an Ed25519 public key", hint: "pass the .pub file pkgtool keygen wrote")
    }
  }

  /// Standard base64 of the 32 raw bytes.
  public var base64: String { Base64.encode(raw) }

  /// The first 16 hex digits of the SHA-256 of the raw key: names the key in a catalog.
  public var keyID: String {
    var hasher = XARHasher(.sha256)
    raw.withUnsafeBytes { hasher.update($0) }
    return String(hasher.finalize().hex.prefix(16))
  }

  /// True when `signature` is this key's over `bytes`.
  public func isValidSignature(_ signature: [UInt8], for bytes: [UInt8]) -> Bool {
    guard let key = try? Curve25519.Signing.PublicKey(rawRepresentation: raw) else { return false }
    return key.isValidSignature(signature, for: bytes)
  }

}

/// Reading and writing the one-line key files.
enum CatalogKeyFile {
  static func read(_ path: String, what: String) throws -> [UInt8] {
    let text: [UInt8]
    do { text = try FileDescriptor.open(regularFile: path).read(count: 4096, at: 0) } catch {
      throw OperationError("cannot read the \(what) '\(path)': \(error)")
    }
    let line = String(decoding: text, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    guard let bytes = Base64.decode(line), bytes.count == 32 else {
      throw OperationError(
        "'\(path)' is not a \(what) file (one line of base64, 32 bytes)", hint: "make keys with pkgtool keygen")
    }
    return Array(bytes)
  }

  /// Writes beside, then links into place: the file appears whole, and never over another.
  static func write(_ text: String, to path: String, mode: mode_t) throws {
    do { try PendingFile.write(Array(text.utf8), to: path, mode: mode, replace: false) } catch {
      throw OperationError.wrap(error)
    }
  }
}
