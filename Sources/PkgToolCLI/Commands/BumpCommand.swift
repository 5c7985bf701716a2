import ArgumentParser
import HostedContent

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

struct BumpCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "bump",
    abstract: "Raise ContentVersion in a project's ContentInfo.plist.",
    discussion: """
      By default the last part is raised (1.0 -> 1.1, 1.2.3 -> 1.2.4). The plist keeps its \
      format (XML or binary) and every other key, and is replaced atomically.

      Examples:
        pkgtool bump MyBook            # 1.0 -> 1.1
        pkgtool bump MyBook --major    # 1.4 -> 2.0
        pkgtool bump MyBook/ContentInfo.plist --set 3.0
        pkgtool bump MyBook --dry-run

      Exit status: 0 changed (or would change), 1 --set is not greater than the current \
      version, 2 could not read or write the plist.
      """)

  @Argument(help: ArgumentHelp("A content project or its ContentInfo.plist.", valueName: "path"), completion: .file())
  var path: String

  @Flag(help: "Raise the first part: 1.4 -> 2.0.") var major = false
  @Flag(help: "Raise the second part: 1.4.2 -> 1.5.0.") var minor = false
  @Flag(help: "Raise the third part: 1.4 -> 1.4.1.") var patch = false
  @Option(help: ArgumentHelp("Set this version (it must be greater unless --force).", valueName: "version"))
  var set: String?
  @Flag(help: "With --set, allow a version that is not greater.") var force = false
  @Flag(name: .customLong("dry-run"), help: "Show the new version; change nothing.") var dryRun = false
  @Flag(help: "Print the result as JSON.") var json = false
  @Flag(name: [.short, .long], help: "Print nothing but errors.") var quiet = false

  func validate() throws {
    let chosen = [major, minor, patch, set != nil].filter { $0 }.count
    if chosen > 1 { throw ValidationError("Choose one of --major, --minor, --patch and --set.") }
    if let set, ContentVersion(set) == nil { throw ValidationError("--set: \(ContentVersion.problem(with: set)!)") }
    if force && set == nil { throw ValidationError("--force only applies to --set.") }
  }

  func run() throws {
    let change: Bump.Change
    if let set {
      change = .set(ContentVersion(set)!, force: force)
    } else if major {
      change = .raise(.major)
    } else if minor {
      change = .raise(.minor)
    } else if patch {
      change = .raise(.patch)
    } else {
      change = .raise(.last)
    }
    let result: Bump.Result
    do {
      result = try Bump.run(path: path, change: change, dryRun: dryRun)
    } catch let refusal as Bump.NotGreater {
      Terminal.standardError(
        "pkgtool: bump refused: \(refusal.new) is not greater than the current \(refusal.current) (pass --force to set it anyway)\n"
      )
      throw ExitCode(1)
    }
    let report = BumpReport(result, dryRun: dryRun)
    if json {
      Terminal.standardOutput(report.json)
    } else if !quiet {
      Terminal.standardOutput(report.text)
    }
  }
}
