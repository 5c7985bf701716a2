import ArgumentParser
import Foundation
import HostedContent

/// `--catalog` and `--public-key`, for install and unpack.
struct CatalogOptions: ParsableArguments {
  @Option(
    help: ArgumentHelp(
      "A signed catalog (from pkgtool publish): the package must be one of its entries, byte for byte.",
      valueName: "catalog.json"))
  var catalog: String?

  @Option(
    name: .customLong("public-key"),
    help: ArgumentHelp("The publisher's public key (KEY.pub) that must have signed the catalog.", valueName: "key.pub"))
  var publicKey: String?

  func validate() throws {
    if (catalog == nil) != (publicKey == nil) {
      throw ValidationError(
        "--catalog and --public-key go together: a catalog is trusted only with the key that signed it.")
    }
  }

  /// The verified catalog, or nil when none was given. A catalog that does not verify is an
  /// exit-1 refusal.
  func verified(for command: String) throws -> Catalog? {
    guard let catalog, let publicKey else { return nil }
    let key = try KeyFiles.public(publicKey, for: "\(command) --public-key")
    do {
      let verified = try CatalogFile.verify(contentsOf: catalog, publicKey: key)
      if let note = try verified.checkNotExpired() { Terminal.standardError("pkgtool: \(note)\n") }
      return verified
    } catch let refusal as CatalogError {
      Terminal.standardError("pkgtool: refused: the catalog '\(catalog)' cannot be trusted: \(refusal)\n")
      throw ExitCode(1)
    }
  }
}
