import ArgumentParser
import HostedContent

/// Reads key files for a command, printing the one-line note an old-format file carries.
enum KeyFiles {
  /// The one `--key` given. Several are refused: a catalog carries one signature, and taking
  /// the last one silently signed with a key the user may not have meant.
  static func single(_ keys: [String]) throws -> String {
    guard let key = keys.first else { throw ValidationError("Missing expected argument '--key <key>'") }
    guard keys.count == 1 else {
      throw ValidationError(
        "--key was given \(keys.count) times; a catalog is signed with one key (name the one secret key to sign with)")
    }
    return key
  }

  /// The secret key at `path`, for `command` (named in the message when `path` is a public key).
  static func secret(_ path: String, for command: String) throws -> CatalogSigningKey {
    let key = try CatalogSigningKey(contentsOf: path, for: command)
    if let note = key.formatNote { Terminal.standardError("pkgtool: \(note)\n") }
    return key
  }

  /// The public key at `path`, for `command` (named in the message when `path` is a secret key).
  static func `public`(_ path: String, for command: String) throws -> CatalogPublicKey {
    let key = try CatalogPublicKey(contentsOf: path, for: command)
    if let note = key.formatNote { Terminal.standardError("pkgtool: \(note)\n") }
    return key
  }
}
