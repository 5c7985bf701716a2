import ArgumentParser
import Foundation
import HostedContent
import SystemIO

struct KeygenCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "keygen",
    abstract: "Make an Ed25519 key pair for signing catalogs.",
    discussion: """
      Writes the private key to KEY (created 0600, never printed, never overwritten) and the \
      public key to KEY.pub. Keep KEY out of the repository; ship KEY.pub (or the base64 line it \
      holds) in the app, which checks every catalog with it.

      Examples:
        pkgtool keygen -o ~/.keys/content-signing
        pkgtool publish dist/*.pkg --key ~/.keys/content-signing \\
            --base-url https://cdn.example.com/content -o catalog.json
      """)

  @Option(
    name: [.short, .long],
    help: ArgumentHelp("The private key file to create (KEY.pub is made beside it).", valueName: "key"))
  var output: String

  @Flag(name: [.short, .long], help: "Print nothing.")
  var quiet = false

  func run() throws {
    let key = CatalogSigningKey()
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
          + "wrote \(output) (private, 0600) and \(output).pub\npublic key \(key.publicKey.base64) (id \(key.publicKey.keyID))\n"
      )
    }
  }
}
