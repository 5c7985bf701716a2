import ArgumentParser
import HostedContent

/// Reads key files for a command, printing the one-line note an old-format file carries.
enum KeyFiles {
  /// The `--key` files given, at least one. Each distinct key adds a signature (a root's
  /// catalog threshold may need several); the same file twice is refused, as it once silently
  /// signed with the last key only.
  static func distinct(_ keys: [String], option: String = "--key") throws -> [String] {
    guard !keys.isEmpty else { throw ValidationError("Missing expected argument '\(option) <key>'") }
    for (index, key) in keys.enumerated() where keys[..<index].contains(key) {
      throw ValidationError(
        "\(option) '\(key)' was given twice; each key signs once (give each distinct secret key one time)")
    }
    return keys
  }

  /// The secret keys at `paths`, for `command`; two files holding the same key are refused.
  static func secrets(_ paths: [String], for command: String) throws -> [CatalogSigningKey] {
    var keys: [(path: String, key: CatalogSigningKey)] = []
    for path in paths {
      let key = try secret(path, for: command)
      if let other = keys.first(where: { $0.key.publicKey == key.publicKey }) {
        throw OperationError(
          "'\(other.path)' and '\(path)' hold the same key (\(key.publicKey.keyID)); each key signs once",
          hint: "give each distinct secret key one time")
      }
      keys.append((path, key))
    }
    return keys.map(\.key)
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
