import ArgumentParser
import HostedContent

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

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
          throw OperationError(
            "'\(entry)' holds binary data; it is not printed to a terminal",
            hint: "redirect it: pkgtool cat \(package) \(entry) > file")
        }
      }
      try standardOutputBytes(bytes)
    }
  }
}
