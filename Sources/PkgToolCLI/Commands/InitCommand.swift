import ArgumentParser
import HostedContent
import SystemIO

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

struct InitCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "init",
    abstract: "Create a content project: ContentInfo.plist, an empty Contents/ and a README.",
    discussion: """
      DIR must not exist, or be an empty folder (`pkgtool init .` fills the current one). The \
      README names the product and the commands to validate and build it; build leaves it out \
      of the package.

      Examples:
        pkgtool init MyBook --product-id com.example.book
        cp chapter1.txt cover.png MyBook/Contents/
        pkgtool validate MyBook
        pkgtool build MyBook
      """)

  @Argument(help: ArgumentHelp("The folder to create.", valueName: "dir"), completion: .directory)
  var directory: String

  @Option(
    name: .customLong("product-id"), help: ArgumentHelp("The In-App Purchase product identifier.", valueName: "id"))
  var productID: String

  @Option(name: .customLong("content-version"), help: ArgumentHelp("The first content version.", valueName: "version"))
  var contentVersion = "1.0"

  @Flag(name: [.short, .long], help: "Print nothing but errors.")
  var quiet = false

  func validate() throws {
    if ContentVersion(contentVersion) == nil {
      throw ValidationError("--content-version: \(ContentVersion.problem(with: contentVersion)!)")
    }
    if let problem = ProductIdentifier.problem(with: productID) {
      throw ValidationError("--product-id: \(problem)")
    }
  }

  func run() throws {
    try ProjectTemplate.create(at: directory, productIdentifier: productID, version: ContentVersion(contentVersion)!)
    let folder = Paths.normalized(directory)
    if !quiet {
      Terminal.standardOutput(
        "created \(folder)/ for \(productID) \(contentVersion): put the content in \(Paths.joinedLexically(folder, "Contents"))/, then run: pkgtool validate \(folder) && pkgtool build \(folder)\n"
      )
    }
  }
}
