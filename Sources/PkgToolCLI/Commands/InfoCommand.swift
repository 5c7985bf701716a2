import ArgumentParser
import HostedContent
import SystemIO

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

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
        pkgtool info - < book-1.0.pkg       # or: curl -sf URL | pkgtool info -
      """)

  @Argument(help: ArgumentHelp("The package or folder.", valueName: "package"), completion: .file())
  var path: String
  @Flag(help: "List every entry.") var files = false
  @Flag(help: "Print the XAR table of contents (XML) instead.") var toc = false
  @Flag(help: "Print JSON.") var json = false
  @Flag(name: [.short, .long], help: "Print nothing; the exit status tells whether it is a readable package.")
  var quiet = false
  @OptionGroup var readerLimits: ReaderLimitOptions

  func validate() throws {
    if toc && (files || json) {
      throw ValidationError("--toc prints the table of contents alone; leave out --files and --json.")
    }
    if toc && StandardInput.isNamed(path) {
      throw ValidationError("--toc reads a package file; save standard input to a file first.")
    }
  }

  func run() throws {
    if toc {
      // Written as it inflates, each piece cut at a character boundary (terminalSafe escapes
      // character by character, so the pieces escape as the whole would).
      var pending: [UInt8] = []
      func emit(_ bytes: [UInt8]) throws {
        guard !bytes.isEmpty else { return }
        // Printable ASCII, newlines and tabs are what terminalSafe leaves as they are.
        let plain = bytes.withUnsafeBufferPointer { p in
          var i = 0
          while i < p.count {
            let b = p[i]
            guard (b >= 0x20 && b < 0x7F) || b == 0x0A || b == 0x09 else { return false }
            i += 1
          }
          return true
        }
        if plain {
          try bytes.withUnsafeBytes { try standardOutputBytes($0) }
        } else {
          Terminal.standardOutput(terminalSafe(String(decoding: bytes, as: UTF8.self)))
        }
      }
      try PackageInfo.tableOfContents(path: path, limits: readerLimits.limits) { chunk in
        guard !quiet else { return }
        let bytes = pending.isEmpty ? chunk : pending + chunk
        var i = bytes.count
        while i > 0 && bytes.count - i < 3 && bytes[i - 1] & 0xC0 == 0x80 { i -= 1 }
        let cut = i > 0 && bytes[i - 1] >= 0xC0 ? i - 1 : bytes.count
        try emit(cut == bytes.count ? bytes : Array(bytes[..<cut]))
        pending = Array(bytes[cut...])
      }
      try emit(pending)
      return
    }
    let input = try StandardStreams.input(path, maxSize: ValidationOptions.defaultMaxSize)
    let info = try PackageInfo.run(path: input.name, file: input.file, includeFiles: files)
    let path = input.name
    if quiet { if info.unreadable { throw ExitCode(1) } else { return } }
    let report = InfoReport(info, displayPath: path)
    Terminal.standardOutput(json ? report.json : report.text)
    // Not a package: the same exit status as validate and unpack.
    if info.unreadable { throw ExitCode(1) }
  }
}
