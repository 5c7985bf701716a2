import ArgumentParser
import Foundation
import HostedContent
import SystemIO

struct KeygenCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "keygen",
    abstract: "Make an Ed25519 key pair for signing catalogs.",
    discussion: """
      Writes the secret key to KEY as PKCS#8 PEM ("BEGIN PRIVATE KEY"; created 0600, never \
      printed, never overwritten) and the public key to KEY.pub as SubjectPublicKeyInfo PEM \
      ("BEGIN PUBLIC KEY"). OpenSSL and Python's cryptography read both. Keep KEY out of the \
      repository; ship KEY.pub in the app, which checks every catalog with it. Commands refuse \
      the wrong half: publish and catalog remove/rebase take KEY, install, unpack and catalog \
      verify take KEY.pub.

      --from OLD writes an existing secret key (the old one-line base64 format, or PEM) again as \
      PEM: the same key pair, so catalogs it signed still verify. Check a key with \
      openssl pkey -in KEY -noout (and -pubin -in KEY.pub).

      Examples:
        pkgtool keygen -o ~/.keys/content-signing
        pkgtool keygen --from old-signing.key -o ~/.keys/content-signing
        pkgtool publish dist/*.pkg --key ~/.keys/content-signing \\
            --base-url https://cdn.example.com/content -o catalog.json
      """)

  @Option(
    name: [.short, .long],
    help: ArgumentHelp("The secret key file to create (KEY.pub is made beside it).", valueName: "key"),
    completion: .file())
  var output: String

  @Option(
    help: ArgumentHelp(
      "An existing secret key to write again as PEM, instead of making a new one.", valueName: "old-key"),
    completion: .file())
  var from: String?

  @Flag(name: [.short, .long], help: "Print nothing.")
  var quiet = false

  func run() throws {
    let key = try from.map { try CatalogSigningKey(contentsOf: $0, for: "keygen --from") } ?? CatalogSigningKey()
    // A folder for keys that does not exist yet is made, private (0700), as ssh-keygen does.
    let folder = Paths.parent(of: output)
    var created = ""
    if Paths.status(folder) == nil {
      do {
        try FileManager.default.createDirectory(
          atPath: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
      } catch {
        throw OperationError(
          "cannot create the folder '\(folder)' for the key", hint: "check that its parent is writable")
      }
      created = "created \(folder)/ (0700)\n"
    }
    try key.write(to: output)
    if !quiet {
      Terminal.standardOutput(
        created
          + "wrote \(output) (secret, PKCS#8 PEM, 0600) and \(output).pub (public, PEM)\npublic key \(key.publicKey.base64) (raw, base64; id \(key.publicKey.keyID))\n"
      )
    }
  }
}
