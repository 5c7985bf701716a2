import ArgumentParser
import HostedContent

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
      """)

  @Argument(help: ArgumentHelp("A content project or its ContentInfo.plist.", valueName: "path"))
  var path: String

  @Flag(help: "Raise the first part: 1.4 -> 2.0.") var major = false
  @Flag(help: "Raise the second part: 1.4.2 -> 1.5.0.") var minor = false
  @Flag(help: "Raise the third part: 1.4 -> 1.4.1.") var patch = false
  @Option(help: ArgumentHelp("Set this version (it must be greater unless --force).", valueName: "version"))
  var set: String?
  @Flag(help: "With --set, allow a version that is not greater.") var force = false
  @Flag(help: "Print the result as JSON.") var json = false

  func validate() throws {
    let chosen = [major, minor, patch, set != nil].filter { $0 }.count
    if chosen > 1 { throw ValidationError("Choose one of --major, --minor, --patch and --set.") }
    if let set, ContentVersion(set) == nil { throw ValidationError("--set: \(ContentVersion.problem(with: set)!)") }
    if force && set == nil { throw ValidationError("--force only applies to --set.") }
  }

  struct Summary: Encodable {
    var plist: String
    var productIdentifier: String
    var old: String
    var new: String
    var format: String
  }

  func run() throws {
    let change: Bump.Change
    if let set { change = .set(ContentVersion(set)!, force: force) }
    else if major { change = .raise(.major) }
    else if minor { change = .raise(.minor) }
    else if patch { change = .raise(.patch) }
    else { change = .raise(.last) }
    let result = try Bump.run(path: path, change: change)
    if json {
      Terminal.standardOutput(jsonText(Summary(plist: result.plist, productIdentifier: result.productIdentifier, old: result.old.description, new: result.new.description, format: result.format.rawValue)))
    } else {
      Terminal.standardOutput("\(result.productIdentifier): \(result.old) → \(result.new)\n")
    }
  }
}

struct InfoCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "info",
    abstract: "Describe a package: format, product, version, sizes, checksums, files.",
    discussion: """
      Works on plain XAR packages, flat packages, zips and content folders. Reads everything, so \
      every checksum is verified. --files lists each entry with its content SHA-256 (the same \
      in every format).
      """)

  @Argument(help: ArgumentHelp("The package or folder.", valueName: "package"))
  var path: String
  @Flag(help: "List every entry.") var files = false
  @Flag(help: "Print JSON.") var json = false

  func run() throws {
    let info = try PackageInfo.run(path: path, includeFiles: files)
    if json {
      Terminal.standardOutput(jsonText(info))
      return
    }
    var out = ""
    out += "package      \(info.path.debugEscapedForTerminal)\n"
    out += "format       \(info.format)\n"
    out += "product      \(info.productIdentifier ?? "(unknown)")\n"
    out += "version      \(info.contentVersion ?? "(unknown)")\n"
    out += "entries      \(info.entryCount) (\(info.fileCount) files)\n"
    out += "content      \(describeBytes(info.contentSize))\n"
    if let size = info.packageSize { out += "package size \(describeBytes(size))\n" }
    if let ratio = info.compressionRatio { out += "ratio        \(String(format: "%.3f", ratio)) (package / content)\n" }
    out += "checksums    \(info.checksumStyle)\n"
    if let sha = info.sha256 { out += "sha256       \(sha)\n" }
    out += "valid        \(info.valid ? "yes" : "no (\(info.findings.filter { $0.severity == .error }.count) errors; run pkgtool validate)")\n"
    if let rows = info.files {
      out += "\n"
      for row in rows {
        let stored = row.storedSize.map(String.init) ?? "-"
        out += "\(row.mode) \(row.kind.padding(9)) \(String(row.size).leftPadding(12)) \(stored.leftPadding(12)) \((row.encoding ?? "-").padding(6)) \(row.sha256 ?? "-".padding(64)) \(row.path.debugEscapedForTerminal)\(row.linkTarget.map { " -> \($0.debugEscapedForTerminal)" } ?? "")\n"
      }
    }
    Terminal.standardOutput(out)
  }
}

struct DiffCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "diff",
    abstract: "Show what changed between two packages: version, files added, removed and changed.",
    discussion: "Exits 0 whenever it could compare, whatever the differences.")

  @Argument(help: ArgumentHelp("The older package or folder.", valueName: "old"))
  var old: String
  @Argument(help: ArgumentHelp("The newer package or folder.", valueName: "new"))
  var new: String
  @Flag(help: "Print JSON.") var json = false

  func run() throws {
    let d = try PackageDiff.run(old: old, new: new)
    if json {
      Terminal.standardOutput(jsonText(d))
      return
    }
    var out = ""
    if d.oldProduct != d.newProduct {
      out += "product: \(d.oldProduct ?? "?") → \(d.newProduct ?? "?")\n"
    } else {
      out += "product: \(d.newProduct ?? "?")\n"
    }
    out += "version: \(d.oldVersion ?? "?") → \(d.newVersion ?? "?")\n"
    for c in d.added { out += "+ \(c.path.debugEscapedForTerminal) (\(c.newSize ?? 0) bytes)\n" }
    for c in d.removed { out += "- \(c.path.debugEscapedForTerminal) (\(c.oldSize ?? 0) bytes)\n" }
    for c in d.changed { out += "~ \(c.path.debugEscapedForTerminal) (\(c.what.joined(separator: ", ")); \(c.oldSize ?? 0) → \(c.newSize ?? 0) bytes)\n" }
    out += "\(d.added.count) added, \(d.removed.count) removed, \(d.changed.count) changed; content \(d.oldContentSize) → \(d.newContentSize) bytes (\(d.sizeDelta >= 0 ? "+" : "")\(d.sizeDelta))\n"
    Terminal.standardOutput(out)
  }
}

extension String {
  func padding(_ width: Int) -> String { count >= width ? self : self + String(repeating: " ", count: width - count) }
  func leftPadding(_ width: Int) -> String { count >= width ? self : String(repeating: " ", count: width - count) + self }
}
