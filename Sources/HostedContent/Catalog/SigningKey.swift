import Crypto
import Foundation
import XAR

/// An Ed25519 key pair for signing catalogs (swift-crypto). On disk each key is one line of
/// standard base64 of its 32 raw bytes: the private key file is created 0600 and never printed;
/// the public key goes beside it with `.pub` added.
public struct CatalogSigningKey: Sendable {
  let key: Curve25519.Signing.PrivateKey

  /// A new random key pair.
  public init() { key = Curve25519.Signing.PrivateKey() }

  /// Reads a private key file written by ``write(to:)``.
  public init(contentsOf path: String) throws {
    let bytes = try CatalogKeyFile.read(path, what: "private key")
    do { key = try Curve25519.Signing.PrivateKey(rawRepresentation: bytes) } catch {
      throw OperationError("'\(path)' is not an Ed25519 private key", hint: "make one with pkgtool keygen")
    }
  }

  /// The public half.
  public var publicKey: CatalogPublicKey { CatalogPublicKey(key: key.publicKey) }

  /// Writes the private key to `path` (created 0600, never replaced) and the public key to
  /// `path.pub`. Both appear whole or not at all.
  public func write(to path: String) throws {
    for target in [path, path + ".pub"] where Paths.status(target) != nil {
      throw OperationError("'\(target)' already exists", hint: "keys are never overwritten; choose another name or remove the old key deliberately")
    }
    try CatalogKeyFile.write(key.rawRepresentation.base64EncodedString() + "\n", to: path, mode: 0o600)
    do {
      try CatalogKeyFile.write(publicKey.base64 + "\n", to: path + ".pub", mode: 0o644)
    } catch {
      FileSystem.removeFile(path)
      throw error
    }
  }

  /// The signature over `bytes`.
  public func signature(for bytes: [UInt8]) throws -> [UInt8] {
    Array(try key.signature(for: bytes))
  }
}

/// The public half of a ``CatalogSigningKey``: what an app ships to check catalogs.
public struct CatalogPublicKey: Sendable, Equatable {
  let key: Curve25519.Signing.PublicKey

  init(key: Curve25519.Signing.PublicKey) { self.key = key }

  /// From the 32 raw bytes.
  public init(rawRepresentation: [UInt8]) throws {
    do { key = try Curve25519.Signing.PublicKey(rawRepresentation: rawRepresentation) } catch {
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
  public var base64: String { key.rawRepresentation.base64EncodedString() }

  /// The first 16 hex digits of the SHA-256 of the raw key: names the key in a catalog.
  public var keyID: String {
    var hasher = XARHasher(.sha256)
    Array(key.rawRepresentation).withUnsafeBytes { hasher.update($0) }
    return String(hasher.finalize().hex.prefix(16))
  }

  /// True when `signature` is this key's over `bytes`.
  public func isValidSignature(_ signature: [UInt8], for bytes: [UInt8]) -> Bool {
    key.isValidSignature(signature, for: bytes)
  }

  public static func == (a: CatalogPublicKey, b: CatalogPublicKey) -> Bool { a.key.rawRepresentation == b.key.rawRepresentation }
}

/// Reading and writing the one-line key files.
enum CatalogKeyFile {
  static func read(_ path: String, what: String) throws -> [UInt8] {
    let text: [UInt8]
    do { text = try FileDescriptor.open(regularFile: path).read(count: 4096, at: 0) } catch {
      throw OperationError("cannot read the \(what) '\(path)': \(error)")
    }
    let line = String(decoding: text, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    guard let bytes = Data(base64Encoded: line), bytes.count == 32 else {
      throw OperationError("'\(path)' is not a \(what) file (one line of base64, 32 bytes)", hint: "make keys with pkgtool keygen")
    }
    return Array(bytes)
  }

  /// Writes beside, then links into place: the file appears whole, and never over another.
  static func write(_ text: String, to path: String, mode: mode_t) throws {
    do { try FileSystem.writeAtomically(Array(text.utf8), to: path, mode: mode, replace: false) } catch {
      throw OperationError("cannot write '\(path)': \(error)")
    }
  }
}
