import ArgumentParser
import HostedContent

/// A byte count: `2000000000`, `2GB`, `512MB`, `64kB` (decimal units), `1GiB` (binary).
struct ByteCount: ExpressibleByArgument {
  var value: UInt64

  init?(argument: String) {
    let text = argument.trimmingSpaces()
    let units: [(String, UInt64)] = [
      ("KiB", 1 << 10), ("MiB", 1 << 20), ("GiB", 1 << 30), ("TiB", 1 << 40),
      ("kB", 1_000), ("KB", 1_000), ("MB", 1_000_000), ("GB", 1_000_000_000), ("TB", 1_000_000_000_000),
      ("B", 1),
    ]
    for (suffix, factor) in units where text.hasSuffix(suffix) {
      guard let n = UInt64(String(text.dropLast(suffix.count)).trimmingSpaces()) else { return nil }
      let (v, overflow) = n.multipliedReportingOverflow(by: factor)
      guard !overflow else { return nil }
      value = v
      return
    }
    guard let n = UInt64(text) else { return nil }
    value = n
  }

  static var defaultValueDescription: String { "2000000000" }
}

extension String {
  func trimmingSpaces() -> String {
    var s = Substring(self)
    while s.first == " " { s = s.dropFirst() }
    while s.last == " " { s = s.dropLast() }
    return String(s)
  }
}

/// Options every checking command shares.
struct RuleOptions: ParsableArguments {
  @Option(
    name: .customLong("max-size"),
    help: ArgumentHelp(
      "Largest package file and unpacked content, in bytes (2GB = 2,000,000,000 by default; units kB, MB, GB, KiB, MiB, GiB).",
      valueName: "bytes"))
  var maxSize: ByteCount?

  @Option(
    name: .customLong("product-id"),
    help: ArgumentHelp("The product identifier the package must carry.", valueName: "id"))
  var productID: String?

  @Flag(help: "Treat warnings (such as junk files) as errors.")
  var strict = false

  var validationOptions: ValidationOptions {
    ValidationOptions(
      maxSize: maxSize?.value ?? ValidationOptions.defaultMaxSize, productIdentifier: productID, strict: strict)
  }
}

/// `--max-size` and `--strict` alone, for commands where `--product-id` means something else.
struct LimitOptions: ParsableArguments {
  @Option(
    name: .customLong("max-size"),
    help: ArgumentHelp(
      "Largest package file and unpacked content, in bytes (units kB, MB, GB, KiB, MiB, GiB).", valueName: "bytes"))
  var maxSize: ByteCount?

  @Flag(help: "Treat warnings (such as junk files) as errors.")
  var strict = false

  func validationOptions(productID: String? = nil) -> ValidationOptions {
    ValidationOptions(
      maxSize: maxSize?.value ?? ValidationOptions.defaultMaxSize, productIdentifier: productID, strict: strict)
  }
}

extension ReportFormat: ExpressibleByArgument {}
extension Build.Format: ExpressibleByArgument {}
extension CompressionLevel: ExpressibleByArgument {}

/// Bounds on what a package may make the reader do; raise them for genuine giants.
struct ReaderLimitOptions: ParsableArguments {
  @Option(
    name: .customLong("max-toc-size"),
    help: ArgumentHelp("Largest table of contents accepted, compressed or not (default 256MiB).", valueName: "bytes"))
  var maxTOCSize: ByteCount?

  @Option(
    name: .customLong("max-entries"), help: ArgumentHelp("Most entries accepted (default 2000000).", valueName: "n"))
  var maxEntries: Int?

  @Option(
    name: .customLong("max-path-bytes"),
    help: ArgumentHelp("Most bytes all entries' paths may add up to (default 64MiB).", valueName: "bytes"))
  var maxPathBytes: ByteCount?

  @Option(
    name: .customLong("max-ratio"),
    help: ArgumentHelp(
      "Largest decoded/stored size ratio accepted for a compressed file over 1 MiB (default 10000).", valueName: "n"))
  var maxRatio: UInt64?

  var limits: ReaderLimits {
    var limits = ReaderLimits()
    if let maxTOCSize { limits.maxTOCBytes = maxTOCSize.value }
    if let maxEntries { limits.maxEntries = maxEntries }
    if let maxRatio { limits.maxExpansionRatio = maxRatio }
    if let maxPathBytes { limits.maxTotalPathBytes = maxPathBytes.value }
    return limits
  }
}
