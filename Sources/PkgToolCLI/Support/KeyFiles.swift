import HostedContent

/// Reads key files for a command, printing the one-line note an old-format file carries.
enum KeyFiles {
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
