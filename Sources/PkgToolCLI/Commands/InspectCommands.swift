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

  @Argument(help: ArgumentHelp("A content project or its ContentInfo.plist.", valueName: "path"))
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

  struct Summary: Encodable {
    var plist: String
    var productIdentifier: String
    var old: String
    var new: String
    var format: String
    var changed: Bool
  }

  func run() throws {
    let change: Bump.Change
    if let set { change = .set(ContentVersion(set)!, force: force) }
    else if major { change = .raise(.major) }
    else if minor { change = .raise(.minor) }
    else if patch { change = .raise(.patch) }
    else { change = .raise(.last) }
    let result: Bump.Result
    do {
      result = try Bump.run(path: path, change: change, dryRun: dryRun)
    } catch let refusal as Bump.NotGreater {
      Terminal.standardError("pkgtool: bump refused: \(refusal.new) is not greater than the current \(refusal.current) (pass --force to set it anyway)\n")
      throw ExitCode(1)
    }
    if json {
      Terminal.standardOutput(jsonText(Summary(plist: result.plist, productIdentifier: result.productIdentifier, old: result.old.description, new: result.new.description, format: result.format.rawValue, changed: !dryRun)))
    } else if !quiet {
      Terminal.standardOutput("\(result.productIdentifier): \(result.old) → \(result.new)\(dryRun ? " (dry run: nothing changed)" : "")\n")
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
      in every format); --toc prints a XAR package's table of contents as stored. A file that \
      is not a package is reported as validate reports it, with exit status 1.

      Examples:
        pkgtool info book-1.0.pkg
        pkgtool info book-1.0.pkg --files
        pkgtool info book-1.0.pkg --toc > toc.xml
        pkgtool info book-1.0.pkg --json | jq .sha256
      """)

  @Argument(help: ArgumentHelp("The package or folder.", valueName: "package"))
  var path: String
  @Flag(help: "List every entry.") var files = false
  @Flag(help: "Print the XAR table of contents (XML) instead.") var toc = false
  @Flag(help: "Print JSON.") var json = false
  @Flag(name: [.short, .long], help: "Print nothing; the exit status tells whether it is a readable package.") var quiet = false

  func validate() throws {
    if toc && (files || json) { throw ValidationError("--toc prints the table of contents alone; leave out --files and --json.") }
  }

  func run() throws {
    if toc {
      let xml = try PackageInfo.tableOfContents(path: path)
      if !quiet { Terminal.standardOutput(terminalSafe(String(decoding: xml, as: UTF8.self))) }
      return
    }
    let info = try PackageInfo.run(path: path, includeFiles: files)
    if quiet { if info.unreadable { throw ExitCode(1) } else { return } }
    if info.unreadable {
      // Not a package: the same lines and exit status as validate and unpack.
      if json { Terminal.standardOutput(jsonText(info)) } else {
        Terminal.standardOutput(findingLines(info.inspection, displayPath: path, strict: false))
      }
      throw ExitCode(1)
    }
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
    if let stored = info.storedSize, let percent = info.storedPercent {
      out += "compression  content \(groupedDigits(info.contentSize)) → \(groupedDigits(stored)) bytes stored (\(String(format: "%.1f", percent))%)\n"
    }
    if let overhead = info.overheadSize { out += "overhead     \(groupedDigits(overhead)) bytes of header, table of contents and entry headers\n" }
    out += "checksums    \(info.checksumStyle)\n"
    if let sha = info.sha256 { out += "sha256       \(sha)\n" }
    let errors = info.findings.filter { $0.severity == .error }.count
    out += "valid        \(info.valid ? "yes" : "no (\(errors) \(errors == 1 ? "error" : "errors"); run pkgtool validate)")\n"
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

struct CatCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "cat",
    abstract: "Print one file of a package to standard output.",
    discussion: """
      Reads the entry through the package's own reader, so its checksum is verified; nothing is \
      written to disk. Binary data is not sent to a terminal (redirect it to a file or a pipe).

      Examples:
        pkgtool cat book-1.0.pkg ContentInfo.plist
        pkgtool cat book-1.0.pkg Contents/cover.png > cover.png
      """)

  @Argument(help: ArgumentHelp("The package (or folder).", valueName: "package"))
  var package: String
  @Argument(help: ArgumentHelp("The entry's path inside the package, e.g. Contents/chapter1.txt.", valueName: "path"))
  var entry: String

  func run() throws {
    let toTerminal = Terminal.stdoutIsTerminal
    var checked = false
    try PackageInfo.cat(path: package, entryPath: entry) { bytes in
      if toTerminal && !checked {
        checked = true
        if bytes.contains(where: { $0 == 0 || $0 == 0x1B }) {
          throw OperationError("'\(entry)' holds binary data; it is not printed to a terminal", hint: "redirect it: pkgtool cat \(package) \(entry) > file")
        }
      }
      try standardOutputBytes(bytes)
    }
  }
}

struct DiffCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "diff",
    abstract: "Show what changed between two packages: version, files added, removed and changed.",
    discussion: """
      Compares content by SHA-256, so a file moved between formats (XAR, flat package, zip, \
      folder) compares equal. Exits 0 whenever it could compare, whatever the differences; with \
      --quiet, prints nothing and exits 1 when they differ (as git diff --quiet).

      Examples:
        pkgtool diff book-1.0.pkg book-1.1.pkg
        pkgtool diff book-1.1.pkg MyBook          # the package against its project
        pkgtool diff book-1.0.pkg book-1.1.pkg --json
      """)

  @Argument(help: ArgumentHelp("The older package or folder.", valueName: "old"))
  var old: String
  @Argument(help: ArgumentHelp("The newer package or folder.", valueName: "new"))
  var new: String
  @Flag(help: "Print JSON.") var json = false
  @Flag(name: [.short, .long], help: "Print nothing; exit 1 when the two differ.") var quiet = false

  func run() throws {
    let d = try PackageDiff.run(old: old, new: new)
    if quiet {
      let same = d.added.isEmpty && d.removed.isEmpty && d.changed.isEmpty && d.oldVersion == d.newVersion && d.oldProduct == d.newProduct
      if same { return } else { throw ExitCode(1) }
    }
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
