import ArgumentParser
import HostedContent

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

struct DiffCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "diff",
    abstract: "Show what changed between two packages: version, files added, removed and changed.",
    discussion: """
      Compares content by SHA-256, so a file moved between formats (XAR, flat package, zip, \
      folder) compares equal. Warns when the content differs but ContentVersion does not: \
      devices that have that version would never fetch the new content; and when ContentVersion \
      goes down (2.0 → 1.0). Exits 0 whenever it could compare, whatever the differences; \
      with --strict, exits 1 when there is a warning; with --quiet, prints nothing and exits 1 \
      when they differ (as git diff --quiet).

      Examples:
        pkgtool diff book-1.0.pkg book-1.1.pkg
        pkgtool diff book-1.1.pkg MyBook          # the package against its project
        pkgtool diff book-1.0.pkg book-1.1.pkg --json
        pkgtool diff released.pkg book-1.1.pkg --strict   # exit 1 on a warning
      """)

  @Argument(help: ArgumentHelp("The older package or folder.", valueName: "old"), completion: .file())
  var old: String
  @Argument(help: ArgumentHelp("The newer package or folder.", valueName: "new"), completion: .file())
  var new: String
  @Flag(help: "Print JSON.") var json = false
  @Flag(name: [.short, .long], help: "Print nothing; exit 1 when the two differ.") var quiet = false
  @Flag(help: "Exit 1 when there is a warning (a version that goes down, new content under the same version).")
  var strict = false

  func run() throws {
    let d = try PackageDiff.run(old: old, new: new)
    if quiet {
      let same =
        d.added.isEmpty && d.removed.isEmpty && d.changed.isEmpty && d.oldVersion == d.newVersion
        && d.oldProduct == d.newProduct
      if same { return } else { throw ExitCode(1) }
    }
    let report = DiffReport(d)
    if strict && !d.warnings.isEmpty { Terminal.closedPipeStatus = 1 }
    Terminal.standardOutput(json ? report.json : report.text)
    if strict && !d.warnings.isEmpty { throw ExitCode(1) }
  }
}
