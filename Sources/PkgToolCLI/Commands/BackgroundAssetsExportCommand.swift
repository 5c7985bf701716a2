import ArgumentParser
import HostedContent
import SystemIO

extension ExportBackgroundAssets.Options.ArchiveCompression: ExpressibleByArgument {}

extension AssetPackManifest.Policy: ExpressibleByArgument {
  public init?(argument: String) {
    switch argument {
    case "essential": self = .essential
    case "prefetch": self = .prefetch
    case "on-demand", "onDemand": self = .onDemand
    default: return nil
    }
  }
  public static var allValueStrings: [String] { ["essential", "prefetch", "on-demand"] }
}

struct BackgroundAssetsExportCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "background-assets",
    abstract: "Write an asset pack (a folder for ba-package, or a .aar archive) from a package or project.",
    discussion: """
      The package is validated and unpacked as a device would; its Contents/ folder goes into \
      DIR as it is (so the app finds each file at the same relative path), beside a \
      Manifest.json with assetPackID (unless --asset-pack-id: the product id with each '.' \
      made a '-', com.example.book -> com-example-book, because App Store Connect refuses dots \
      in an asset-pack ID), the download policy, file selectors that cover exactly those \
      files, and the platforms. The manifest is written in the 1.x form ({"directory": \
      "Contents"}) unless --manifest-format 2 asks for the 2.x form (sourceRoot "." and \
      {"fileSource": "Contents", "fileDestination": "Contents"}). A symlink or \
      a hard link becomes a copy of the file it leads to (an asset pack carries no links), \
      counted against --max-size; junk (.DS_Store, ._*, Thumbs.db, …) is left out, and the \
      output lists both. The folder is then checked with the asset-pack rules (pkgtool rules \
      asset-pack-manifest, asset-pack-files), as pkgtool validate checks it later; on any \
      error it is not written. DIR must not exist (--force replaces a folder) and may not be \
      inside the project exported. Then, on a Mac: cd DIR && xcrun ba-package Manifest.json \
      -o ../DIR.aar (docs/migration.md).

      With -o NAME.aar, the same checked folder is written as one Apple Archive instead, \
      without a Mac: a root entry, then Manifest.json and Contents/ depth first, names sorted \
      by their bytes, each with its type, path, mode (0755 folders, 0644 files), SHA-256 and \
      data, in LZFSE blocks of 4 MiB (--aar-compression); the same input gives the same bytes. \
      The archive is read back through the asset-pack rules before it appears. That App Store \
      Connect accepts it is not verified here (docs/migration.md).

      Examples:
        pkgtool export background-assets com.example.book-1.1.pkg -o BookPack
        pkgtool export background-assets com.example.book-1.1.pkg -o BookPack.aar
        pkgtool export background-assets MyBook -o BookPack --policy on-demand \\
            --platforms iOS,macOS
        pkgtool validate BookPack
      """)

  @Argument(help: ArgumentHelp("The package (or content project).", valueName: "package"), completion: .file())
  var source: String

  @Option(
    name: [.short, .long],
    help: ArgumentHelp(
      "The asset-pack folder to create, or an Apple Archive (a name ending in .aar).", valueName: "dir"),
    completion: .file())
  var output: String

  @Option(
    name: .customLong("aar-compression"),
    help: ArgumentHelp("With -o NAME.aar: lzfse (default, as Apple's aa), zlib, lzma or none.", valueName: "algorithm"))
  var archiveCompression: ExportBackgroundAssets.Options.ArchiveCompression?

  @Option(
    help: ArgumentHelp(
      "With -o NAME.aar: threads compressing blocks (default: one per processor; the same bytes for any n).",
      valueName: "n"))
  var jobs: Int?

  @Option(
    name: .customLong("asset-pack-id"),
    help: ArgumentHelp(
      "The asset pack's ID: letters, digits, '-', '_' (default: the product identifier with each '.' made a '-').",
      valueName: "id"))
  var assetPackID: String?

  @Option(
    name: .customLong("manifest-format"),
    help: ArgumentHelp(
      "The Manifest.json form: 1 (file/directory selectors, the default) or 2 (sourceRoot, fileSource/fileDestination).",
      valueName: "1|2"))
  var manifestFormat: Int = 1

  @Option(
    help: ArgumentHelp("When the system downloads the pack: essential, prefetch or on-demand.", valueName: "policy"))
  var policy: AssetPackManifest.Policy = .prefetch

  @Option(
    help: ArgumentHelp(
      "For essential and prefetch: first-installation, subsequent-update, or both, comma-separated.",
      valueName: "events"))
  var events: String?

  @Option(help: ArgumentHelp("Comma-separated: iOS, macOS, tvOS, visionOS.", valueName: "list"))
  var platforms = "iOS"

  @Flag(help: "Print the result as JSON.") var json = false
  @Flag(name: [.short, .long], help: "Print nothing but errors.") var quiet = false

  @OptionGroup var rules: RuleOptions
  @OptionGroup var progressOption: ProgressOptions

  func parsedEvents() throws -> [AssetPackManifest.InstallationEvent] {
    try (events ?? "first-installation,subsequent-update").split(separator: ",").map { word in
      switch word.trimmingCharacters(in: .whitespaces) {
      case "first-installation", "firstInstallation": return .firstInstallation
      case "subsequent-update", "subsequentUpdate": return .subsequentUpdate
      default: throw ValidationError("--events: '\(word)' is neither first-installation nor subsequent-update")
      }
    }
  }

  func parsedPlatforms() throws -> [String] {
    try platforms.split(separator: ",").map { word in
      let name = word.trimmingCharacters(in: .whitespaces)
      guard let known = AssetPackManifest.platforms.first(where: { $0.lowercased() == name.lowercased() }) else {
        throw ValidationError(
          "--platforms: '\(name)' is none of \(AssetPackManifest.platforms.joined(separator: ", "))")
      }
      return known
    }
  }

  @Flag(help: "Replace DIR if it is a folder (swapped whole; the old one is removed), or NAME.aar if it is a file.")
  var force = false

  func validate() throws {
    if policy == .onDemand && events != nil {
      throw ValidationError(
        "--events applies to essential and prefetch packs; an on-demand pack is downloaded when the app asks for it, so leave --events out"
      )
    }
    if try parsedEvents().isEmpty { throw ValidationError("--events names no event") }
    if archiveCompression != nil && !ExportBackgroundAssets.writesArchive(output) {
      throw ValidationError("--aar-compression applies to an archive: name the output NAME.aar, or leave it out")
    }
    if try parsedPlatforms().isEmpty { throw ValidationError("--platforms names no platform") }
    if AssetPackManifest.Form(rawValue: manifestFormat) == nil {
      throw ValidationError("--manifest-format: '\(manifestFormat)' is neither 1 nor 2")
    }
  }

  func run() throws {
    var options = ExportBackgroundAssets.Options()
    options.assetPackID = assetPackID
    options.manifestForm = AssetPackManifest.Form(rawValue: manifestFormat) ?? .v1
    options.policy = policy
    options.installationEvents = try parsedEvents()
    options.platforms = try parsedPlatforms()
    options.validation = rules.validationOptions
    options.force = force
    if let archiveCompression { options.archiveCompression = archiveCompression }
    if let jobs { options.threads = min(max(1, jobs), 64) }
    // An archive's blocks (megabytes each) pass between threads: without this, glibc's per-thread
    // heaps keep them after they are freed.
    if ExportBackgroundAssets.writesArchive(output) && options.archiveCompression != .none {
      Allocator.returnFreedMemoryPromptly()
    }
    // One line per step, each finished before the next starts.
    var progress: ProgressLine?
    let result: ExportBackgroundAssets.Result
    do {
      defer { progress?.finish() }
      result = try ExportBackgroundAssets.run(
        source: source, to: output, options: options,
        progress: { step in
          progress?.finish()
          progress = ProgressLine(
            "exporting '\(source)': \(step.rawValue)", options: progressOption, silent: quiet || json)
          return progress?.handler
        })
    }
    let report = ExportReport(result, displayPath: source, outputPath: output, strict: rules.strict)
    if json {
      Terminal.standardOutput(report.json)
    } else if !quiet || result.output == nil {
      // Quiet: nothing but the findings of an export that fails (all that its text holds).
      Terminal.standardOutput(report.text)
    }
    if result.output == nil {
      Terminal.standardError(
        "pkgtool: export refused: '\(source)' cannot become an asset pack as it is; '\(output)' was not created\n")
      throw ExitCode(1)
    }
  }
}
