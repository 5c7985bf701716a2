import ArgumentParser
import HostedContent
import SystemIO

struct DownloadManifestCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "download-manifest",
    abstract: "Write and update the download manifest of self-hosted (managed) asset packs.",
    discussion: """
      The app's Info.plist names the manifest (BAManifestURL); it lists each asset pack's id, \
      version, downloadSize and url: {"assetPacks": [{"id", "version", "downloadSize", "url"}]}. \
      A device downloads a pack again when its version rises, so pkgtool never lowers one and \
      raises exactly the packs whose bytes changed. Publish the payloads first and the \
      manifest last (docs/migration.md).

      Examples:
        pkgtool download-manifest create BookPack.aar LevelPack.aar --platform ios \\
            --base-url https://cdn.example.com/packs/ -o download-manifest.json \\
            --payloads upload
        pkgtool download-manifest update download-manifest.json BookPack.aar \\
            --payloads upload
      """,
    subcommands: [DownloadManifestCreateCommand.self, DownloadManifestUpdateCommand.self])
}

/// The platform a download manifest is made for (ba-package's --ios, --macos, …).
enum ManifestPlatform: String, ExpressibleByArgument, CaseIterable {
  case ios, macos, tvos, visionos

  /// The name asset-pack manifests use.
  var name: String {
    switch self {
    case .ios: return "iOS"
    case .macos: return "macOS"
    case .tvos: return "tvOS"
    case .visionos: return "visionOS"
    }
  }
}

/// What create and update share: reading the packs, the payloads, the output.
struct DownloadManifestOutputOptions: ParsableArguments {
  @Option(
    help: ArgumentHelp(
      "Also write each pack as DIR/ID, the extensionless file to upload (the folder is made if missing).",
      valueName: "dir"), completion: .directory)
  var payloads: String?

  @Flag(help: "Print the result as JSON.") var json = false
  @Flag(name: [.short, .long], help: "Print nothing but errors.") var quiet = false

  @OptionGroup var limits: LimitOptions

  func options() -> DownloadManifestEdit.Options {
    var options = DownloadManifestEdit.Options()
    options.payloads = payloads
    options.validation = limits.validationOptions()
    return options
  }

  /// Prints the report; a pack that broke a rule ends the command with 1.
  func finish(_ result: DownloadManifestEdit.Result, manifest: String) throws {
    let report = DownloadManifestReport(result, strict: limits.strict)
    if json {
      Terminal.standardOutput(report.json)
    } else if !quiet || result.manifest == nil {
      Terminal.standardOutput(report.text)
    }
    if result.manifest == nil {
      let files = result.refused.map { "'\($0.file)'" }.joined(separator: ", ")
      Terminal.standardError(
        "pkgtool: download-manifest refused: \(files) cannot be published as \(result.refused.count == 1 ? "it is" : "they are"); '\(manifest)' was left as it was\n"
      )
      throw ExitCode(1)
    }
  }
}

struct DownloadManifestCreateCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "create",
    abstract: "Write a download manifest of asset packs (.aar), as ba-package download-manifest create does.",
    discussion: """
      Each pack is read whole and checked with the asset-pack rules (as pkgtool validate \
      does); its id is its own Manifest.json's assetPackID, and must be one the manifest's \
      --platform is listed for. downloadSize is the .aar file's size; url is the base URL \
      (https, or http to 127.0.0.1, localhost or [::1] for testing; a trailing / is added) and \
      the id, with no extension. --versions gives each pack's version by position (default 1).

      Over an existing manifest, no version goes down: without --versions each pack keeps its \
      version when its bytes are the same and gets one more when they changed; a version given \
      below the one before, or equal to it for other bytes, is refused (exit 2) and the file \
      is left as it was. The SHA-256 of each pack is kept in FILE.sha256sums beside the \
      manifest (sha256sum's form, one line per pack id; the manifest itself stays in Apple's \
      shape), which update compares with; `sha256sum -c` in the payloads folder checks an \
      upload. The manifest is written whole or not at all. A pack that breaks a rule: its \
      findings, exit 1, nothing written.

      Examples:
        pkgtool download-manifest create BookPack.aar --platform ios \\
            --base-url https://cdn.example.com/packs -o download-manifest.json
        pkgtool download-manifest create BookPack.aar LevelPack.aar --versions 3 1 \\
            --platform ios --base-url https://cdn.example.com/packs/ \\
            -o download-manifest.json --payloads upload --json
      """)

  @Argument(help: ArgumentHelp("The asset packs (.aar files).", valueName: "pack.aar"), completion: .file())
  var packs: [String] = []

  @Option(
    name: .customLong("base-url"),
    help: ArgumentHelp("Where the packs are served; each url is this plus the pack's id.", valueName: "url"))
  var baseURL: String

  @Option(help: ArgumentHelp("The platform the manifest is for.", valueName: "platform"))
  var platform: ManifestPlatform

  @Option(name: [.short, .long], help: ArgumentHelp("The manifest to write.", valueName: "file"), completion: .file())
  var output: String

  @Option(
    parsing: .upToNextOption,
    help: ArgumentHelp(
      "Each pack's version, in the packs' order (as ba-package --asset-pack-versions).", valueName: "n"))
  var versions: [Int] = []

  @OptionGroup var common: DownloadManifestOutputOptions

  func validate() throws {
    if packs.isEmpty { throw ValidationError("Missing expected argument '<pack.aar> ...'") }
    if !versions.isEmpty && versions.count != packs.count {
      throw ValidationError(
        "--versions gives \(versions.count) version\(versions.count == 1 ? "" : "s") for \(packs.count) pack\(packs.count == 1 ? "" : "s"); give one per pack, in the packs' order"
      )
    }
  }

  func run() throws {
    var options = common.options()
    options.baseURL = baseURL
    options.platform = platform.name
    options.versions = versions.isEmpty ? nil : versions
    let result = try DownloadManifestEdit.create(packs: packs, output: output, options: options)
    try common.finish(result, manifest: output)
  }
}

struct DownloadManifestUpdateCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "update",
    abstract: "Raise the version of each named pack whose bytes changed; leave the others as they are.",
    discussion: """
      Each pack named is read and checked as create reads it, and compared with the SHA-256 \
      recorded in FILE.sha256sums: changed (or never recorded), its version goes up by one and \
      its downloadSize follows; the same bytes, it stays. A pack the manifest does not list is \
      added at version 1, under the base URL the other packs share. Packs not named stay as \
      they are. The manifest is written whole or not at all.

      Example:
        pkgtool download-manifest update download-manifest.json BookPack.aar \\
            --payloads upload
      """)

  @Argument(help: ArgumentHelp("The download manifest to update.", valueName: "file"), completion: .file())
  var manifest: String

  @Argument(
    help: ArgumentHelp("The asset packs (.aar files) that may have changed.", valueName: "pack.aar"),
    completion: .file())
  var packs: [String] = []

  @OptionGroup var common: DownloadManifestOutputOptions

  func validate() throws {
    if packs.isEmpty { throw ValidationError("Missing expected argument '<pack.aar> ...'") }
  }

  func run() throws {
    let result = try DownloadManifestEdit.update(manifest: manifest, packs: packs, options: common.options())
    try common.finish(result, manifest: manifest)
  }
}
