import ArgumentParser
import Foundation
import HostedContent

struct KeygenCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "keygen",
    abstract: "Make an Ed25519 key pair for signing catalogs.",
    discussion: """
      Writes the private key to KEY (created 0600, never printed, never overwritten) and the \\
      public key to KEY.pub. Keep KEY out of the repository; ship KEY.pub (or the base64 line it \\
      holds) in the app, which checks every catalog with it.

      Examples:
        pkgtool keygen -o ~/.keys/content-signing
        pkgtool publish dist/*.pkg --key ~/.keys/content-signing \\\\
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
    try key.write(to: output)
    if !quiet {
      Terminal.standardOutput(
        "wrote \(output) (private, 0600) and \(output).pub\npublic key \(key.publicKey.base64) (id \(key.publicKey.keyID))\n"
      )
    }
  }
}
