import ArgumentParser
import HostedContent
import SystemIO

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
        pkgtool cat - ContentInfo.plist < book-1.0.pkg
      """)

  @Argument(help: ArgumentHelp("The package (or folder).", valueName: "package"), completion: .file())
  var package: String
  @Argument(help: ArgumentHelp("The entry's path inside the package, e.g. Contents/chapter1.txt.", valueName: "path"))
  var entry: String

  func run() throws {
    let toTerminal = Terminal.stdoutIsTerminal
    // On a terminal, every byte is checked (not only the first chunk): all of them before any
    // is written, and again on the way out.
    var beforeWriting = TerminalCheck()
    var whileWriting = TerminalCheck()
    func refusal() -> OperationError {
      OperationError(
        "'\(entry)' holds binary data or terminal control characters; it is not printed to a terminal",
        hint: "redirect it: pkgtool cat \(package) \(entry) > file")
    }
    let input = try StandardStreams.input(package, maxSize: ValidationOptions.defaultMaxSize)
    try PackageInfo.cat(
      path: input.name, file: input.file, entryPath: entry,
      check: { bytes in
        if toTerminal && !beforeWriting.accepts(bytes) { throw refusal() }
      },
      to: { bytes in
        if toTerminal && !whileWriting.accepts(bytes) { throw refusal() }
        try standardOutputBytes(bytes)
      })
  }
}

/// Bytes a terminal may be sent: text, without the controls that rewrite the screen.
struct TerminalCheck {
  private var previous: UInt8 = 0

  /// False when `bytes` (the next part of a stream) hold NUL, a C0 control other than tab,
  /// newline and carriage return, DEL, or a C1 control (U+0080–U+009F: UTF-8 C2 80–C2 9F).
  mutating func accepts(_ bytes: UnsafeRawBufferPointer) -> Bool {
    for byte in bytes {
      if (byte < 0x20 && byte != 0x09 && byte != 0x0A && byte != 0x0D) || byte == 0x7F
        || (previous == 0xC2 && (0x80...0x9F).contains(byte))
      {
        return false
      }
      previous = byte
    }
    return true
  }
}
