import ArgumentParser
import HostedContent
import SystemIO

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

struct BuildCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "build",
    abstract: "Build a reproducible package from a content project or a plain folder.",
    discussion: """
      DIR is a content project (ContentInfo.plist + Contents/) or a plain folder of content; for \
      a plain folder, --product-id and --content-version make the plist. In a project they \
      override the plist's values in the package (the project is not changed).

      Every rule runs before anything is written; on an error nothing is written and every \
      finding is listed. Junk (.DS_Store, ._*, __MACOSX/, Thumbs.db, .git/, swap files) is left \
      out; modes are normalized (0644 files, 0755 folders); hard links become plain files; \
      symlinks inside Contents/ are kept. The same paths and bytes always give the same package, \
      byte for byte: every time written is SOURCE_DATE_EPOCH, or 2000-01-01T00:00:00Z when unset. \
      Files already compressed (PNG, JPEG, MP3, MP4, zip, …, by magic bytes) are stored; the rest \
      is deflated.

      Examples:
        pkgtool build MyBook                 # -> com.example.book-1.0.pkg
        pkgtool build assets/ --product-id com.example.levels \\
            --content-version 2.1 -o levels.pkg
        pkgtool build MyBook -o delivery.zip   # the format follows the extension
        pkgtool build MyBook -o - > book.pkg   # built whole, then written to stdout

      Leaving files out: --exclude PATTERN (repeatable) and a .pkgtoolignore file at the \
      folder's root take gitignore patterns, matched against paths from that root (in a \
      project, Contents/levels/draft.json): # comments, ! to keep again (the last matching \
      pattern wins; nothing inside a left-out folder can be kept), a trailing / for folders \
      only, a / at the start or in the middle to anchor to the root, *, ?, [a-z], ** and \
      backslash escapes. --exclude patterns come after the file's, so they win. Names match \
      case-sensitively, as stored (as git does by default): *.psd does not match Art.PSD. \
      What is left out is never opened. ContentInfo.plist and Contents/ cannot be excluded; \
      .pkgtoolignore itself is never packaged. validate of the project honours the same \
      patterns, so a project and its package get one verdict.

      Building again over the package a previous run wrote replaces it (the new one is renamed \
      over it whole); any other file at -o is kept unless --force. The package is never written \
      inside the content it packs. `-o -` builds into a private temporary file, then writes the \
      whole package to standard output (never to a terminal); the summary goes to standard error.
      """)

  @Argument(help: ArgumentHelp("The content project or folder.", valueName: "dir"), completion: .directory)
  var directory: String

  @Option(
    name: [.short, .long],
    help: ArgumentHelp("The package to write (default: <product id>-<version>.pkg here).", valueName: "file"),
    completion: .file())
  var output: String?

  @Option(
    name: .customLong("product-id"),
    help: ArgumentHelp("The product identifier (required for a plain folder).", valueName: "id"))
  var productID: String?

  @Option(
    name: .customLong("content-version"),
    help: ArgumentHelp("The content version (required for a plain folder).", valueName: "version"))
  var contentVersion: String?

  @Option(
    help: ArgumentHelp(
      "What to write: xar (a .pkg) or zip (the delivery form). Default: from the -o extension (.zip: zip), else xar."
    ))
  var format: Build.Format?

  @Option(
    help: ArgumentHelp(
      "How hard to deflate what is worth deflating: none stores every file; fast, default and best deflate at levels 1, 5 and 9 every file that shrinks. Already-compressed formats are stored, and so is a file of 256 KiB or more whose sample (its first 16 KiB, 32 KiB from its middle) does not shrink by 2%."
    ))
  var compression: CompressionLevel = .default

  @Option(
    help: ArgumentHelp(
      "Threads compressing files (default: one per core). The package is the same for any value.", valueName: "n"))
  var jobs: Int?

  @Option(
    name: .customLong("exclude"),
    help: ArgumentHelp(
      "Leave out paths matching this gitignore pattern (repeatable; after .pkgtoolignore's, so it wins).",
      valueName: "pattern"))
  var exclude: [String] = []

  @Flag(help: "Replace the output even when it is not a package (a previous build's package is always replaced).")
  var force = false

  @Flag(name: .customLong("dry-run"), help: "Show what would go in and the findings; write nothing.")
  var dryRun = false

  @Flag(name: [.short, .long], help: "List the files left out and every entry written.")
  var verbose = false

  @Flag(help: "Print the summary as JSON.")
  var json = false

  @Flag(name: [.short, .long], help: "Print nothing but errors.")
  var quiet = false

  @OptionGroup var limits: LimitOptions

  @OptionGroup var progressOption: ProgressOptions

  /// The format asked for, else the one `-o`'s extension names; a mismatch is refused before
  /// anything is read or written.
  func resolvedFormat() throws -> Build.Format {
    let named: Build.Format? = output.flatMap { path in
      let name = Paths.name(of: path).lowercased()
      return name.hasSuffix(".zip") ? .zip : name.hasSuffix(".pkg") ? .xar : nil
    }
    if let format, let named, format != named, let output {
      throw ValidationError(
        "--format \(format.rawValue) writes \(format == .zip ? "a zip" : "a XAR package"), but -o '\(output)' names \(named == .zip ? "a zip" : "a package (.pkg, a XAR)"): validate would refuse it. Name the file .\(format == .zip ? "zip" : "pkg"), or leave --format out."
      )
    }
    return format ?? named ?? .xar
  }

  func validate() throws {
    _ = try resolvedFormat()
    if output == "-" && json {
      throw ValidationError("-o - writes the package to standard output; --json would print there too. Leave one out.")
    }
  }

  func run() throws {
    let format = try resolvedFormat()
    // Build passes megabyte buffers between threads; reading does not gain from this (and pays
    // for mapping each 256 KiB part afresh), so only build asks for it.
    Allocator.returnFreedMemoryPromptly()
    var options = Build.Options()
    options.output = output
    options.productIdentifier = productID
    options.contentVersion = contentVersion
    options.format = format
    options.exclude = exclude
    options.compression = compression
    options.force = force
    options.dryRun = dryRun
    options.listEntries = verbose
    if let jobs { options.jobs = max(1, jobs) }
    options.validation = limits.validationOptions()
    options.sourceDateEpoch = try Build.Options.sourceDateEpoch(
      fromEnvironment: getenv("SOURCE_DATE_EPOCH").map { String(cString: $0) })
    // `-o -`: built whole into a private folder, then copied to standard output; never a
    // partial package in a pipe, never binary on a terminal.
    let toStandardOutput = output == "-"
    var privateFolder: String?
    if toStandardOutput {
      if Terminal.stdoutIsTerminal {
        throw OperationError(
          "-o - writes the package to standard output, which is a terminal",
          hint: "redirect it: pkgtool build \(directory) -o - > package.pkg")
      }
      if !dryRun {
        let folder = try StandardStreams.privateFolder()
        privateFolder = folder
        options.output = folder + "/package." + (format == .zip ? "zip" : "pkg")
      }
    }
    defer { if let privateFolder { StandardStreams.remove(privateFolder) } }
    let progress = ProgressLine(
      "building '\(toStandardOutput ? "(standard output)" : output ?? directory)'", options: progressOption,
      silent: quiet || json)
    var result: Build.Result
    do {
      defer { progress.finish() }
      result = try Build.run(directory: directory, options: options, progress: progress.handler)
    } catch var error as OperationError {
      // Never a temporary path in a message.
      if let temporary = options.output, let privateFolder {
        error.message = error.message.replacing(temporary, with: "-").replacing(privateFolder, with: "-")
      }
      throw error
    }
    if toStandardOutput {
      if let written = result.output { try StandardStreams.copyToStandardOutput(written) }
      result.output = result.output.map { _ in "(standard output)" }
      result.plannedOutput = "(standard output)"
    }
    /// The summary: on standard error when standard output carries the package.
    func say(_ text: String) {
      if toStandardOutput { Terminal.standardError(text) } else { Terminal.standardOutput(text) }
    }
    let failed = result.inspection.failed(strict: limits.strict)
    var report = BuildReport(result, displayPath: directory, format: format, strict: limits.strict)
    report.storedOnly = compression == .none
    report.verbose = verbose
    report.dryRun = dryRun
    if json {
      Terminal.standardOutput(report.json)
    } else if quiet {
      // Quiet: nothing but the findings of a build that fails.
      if failed {
        say(findingLines(result.inspection, displayPath: directory, strict: limits.strict))
      }
    } else {
      say(report.text)
    }
    if failed {
      let problems = result.inspection.findings.filter { $0.severity.effective(strict: limits.strict) == .error }.count
      Terminal.standardError(
        "pkgtool: build failed: \(problems) \(problems == 1 ? "error" : "errors"); nothing was written\n")
      throw ExitCode(1)
    }
  }
}
