import ArgumentParser
import HostedContent
import SystemIO

struct MigrateCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "migrate",
    abstract: "Turn hosted-content packages into self-hosted asset packs and their download manifest.",
    discussion: """
      PACKAGE is a package, a content project, or a folder of them (*.pkg files and project \
      folders; of several versions of a product, the newest is taken). Each product becomes \
      one asset pack, DIR/ID.aar (as pkgtool export background-assets writes it; ID is the \
      product id with each '.' made a '-'), which is read back through pkgtool's Apple Archive \
      reader and must hold exactly the package's Contents/ files (their SHA-256 compared; a \
      link's copy and left-out junk are listed). Then DIR/download-manifest.json lists the \
      packs, as pkgtool download-manifest create writes it, with the extensionless copies to \
      upload in DIR/payloads/. Run it again with new package versions: only the packs whose \
      bytes changed get a higher version. Publish DIR/payloads/* first, the manifest last \
      (docs/migration.md).

      Examples:
        pkgtool migrate dist/ -o packs --platform ios \\
            --base-url https://cdn.example.com/packs/
        pkgtool migrate com.example.book-1.1.pkg -o packs --platform ios \\
            --base-url https://cdn.example.com/packs/ --json
      """)

  @Argument(
    help: ArgumentHelp("A package, a content project, or a folder of them.", valueName: "package|folder"),
    completion: .file())
  var source: String

  @Option(
    name: [.short, .long],
    help: ArgumentHelp("The folder for the packs, the manifest and the payloads (made if missing).", valueName: "dir"),
    completion: .directory)
  var output: String

  @Option(
    name: .customLong("base-url"),
    help: ArgumentHelp("Where the packs are served; each url is this plus the pack's id.", valueName: "url"))
  var baseURL: String

  @Option(help: ArgumentHelp("The platform of the packs and the manifest.", valueName: "platform"))
  var platform: ManifestPlatform

  @Option(
    help: ArgumentHelp("When the system downloads the packs: essential, prefetch or on-demand.", valueName: "policy"))
  var policy: AssetPackManifest.Policy = .prefetch

  @Flag(help: "Print the result as JSON.") var json = false
  @Flag(name: [.short, .long], help: "Print nothing but errors.") var quiet = false

  @OptionGroup var limits: LimitOptions

  func run() throws {
    var options = Migrate.Options(baseURL: baseURL, platform: platform.name)
    options.policy = policy
    options.validation = limits.validationOptions()
    let result = try Migrate.run(source: source, output: output, options: options)
    let report = MigrateReport(result, strict: limits.strict)
    let written = result.manifest?.manifest != nil
    if json {
      Terminal.standardOutput(report.json)
    } else if !quiet || !written {
      Terminal.standardOutput(report.text)
    }
    if !written {
      Terminal.standardError(
        "pkgtool: migrate refused: \(result.refused.map { "'\($0.file)'" }.joined(separator: ", ")) cannot become an asset pack as it is; the manifest was not written\n"
      )
      throw ExitCode(1)
    }
  }
}
