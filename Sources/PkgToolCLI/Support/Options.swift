import ArgumentParser
import HostedContent

/// A byte count: `2000000000`, `2G`, `2GB`, `512M`, `64k` (decimal: K, M, G, T and kB, MB, GB, TB are
/// powers of 1,000, as Apple's 2 GB limit is), `1GiB`, `512MiB` (binary: KiB, MiB, GiB, TiB).
struct ByteCount: ExpressibleByArgument {
  var value: UInt64

  /// What a refused value is told: the units there are.
  static let unitsHelp =
    "a number of bytes, optionally with a unit: K, M, G, T or kB, MB, GB, TB (1,000s: 2G = 2,000,000,000) or KiB, MiB, GiB, TiB (1,024s)"

  init(value: UInt64) { self.value = value }

  init?(argument: String) {
    guard let parsed = try? ByteCount.parse(argument) else { return nil }
    self = parsed
  }

  /// `argument` as a byte count, or a message that lists the units.
  static func parse(_ argument: String) throws -> ByteCount {
    let text = argument.trimmingSpaces()
    let units: [(String, UInt64)] = [
      ("KiB", 1 << 10), ("MiB", 1 << 20), ("GiB", 1 << 30), ("TiB", 1 << 40),
      ("kB", 1_000), ("KB", 1_000), ("MB", 1_000_000), ("GB", 1_000_000_000), ("TB", 1_000_000_000_000),
      ("k", 1_000), ("K", 1_000), ("M", 1_000_000), ("G", 1_000_000_000), ("T", 1_000_000_000_000),
      ("B", 1),
    ]
    func refuse() -> ValidationError { ValidationError("'\(argument)' is not a size: give \(unitsHelp).") }
    for (suffix, factor) in units where text.hasSuffix(suffix) {
      guard let n = UInt64(String(text.dropLast(suffix.count)).trimmingSpaces()) else { throw refuse() }
      let (v, overflow) = n.multipliedReportingOverflow(by: factor)
      guard !overflow else { throw ValidationError("'\(argument)' is too large a size.") }
      return ByteCount(value: v)
    }
    guard let n = UInt64(text) else { throw refuse() }
    return ByteCount(value: n)
  }

  static var defaultValueDescription: String { "2000000000" }
}

/// A length of time: a number and s, m, h or d (`90s`, `15m`, `1.5h`, `30d`), or a number of
/// seconds alone (`0.5`). The one parser of every option that takes a time; each option says
/// the range it accepts (``option(_:range:)``), and a value out of it fails at parse time.
package struct DurationArgument: Sendable, Equatable, CustomStringConvertible {
  /// The length, in seconds.
  package var seconds: Double

  package init(seconds: Double) { self.seconds = seconds }

  /// The length in whole seconds (rounded down).
  package var wholeSeconds: Int64 { Int64(seconds) }

  private static let units: [Character: Double] = ["s": 1, "m": 60, "h": 3_600, "d": 86_400]

  /// `text` as a length of time, or nil (a number alone too, when `unitRequired`).
  package static func parse(_ text: String, unitRequired: Bool = false) -> DurationArgument? {
    var number = Substring(text.trimmingSpaces())
    var unit = 1.0
    if let last = number.last, let factor = units[last] {
      unit = factor
      number = number.dropLast()
    } else if unitRequired {
      return nil
    }
    guard !number.isEmpty, number.allSatisfy({ $0.isASCII && ($0.isNumber || $0 == ".") }),
      let value = Double(number), value.isFinite
    else { return nil }
    return DurationArgument(seconds: value * unit)
  }

  /// The value as an option's help shows its default: `30d`.
  package var description: String { Self.shown(seconds) }

  /// The longest life a catalog or a root is given: ten years.
  package static let longestLifetime = 3650.0 * 86_400

  /// How `seconds` reads in an option's help and messages: `90s`, `15m`, `7d`.
  package static func shown(_ seconds: Double) -> String {
    for (unit, factor) in [("d", 86_400.0), ("h", 3_600), ("m", 60)] where seconds >= factor {
      if seconds.truncatingRemainder(dividingBy: factor) == 0 { return "\(Int(seconds / factor))\(unit)" }
    }
    return seconds == seconds.rounded() ? "\(Int(seconds))s" : "\(seconds)s"
  }

  /// The transform of an option that takes a time within `range` (seconds): a value that is not
  /// a time, or lies outside, is refused with both bounds and examples that fit. With
  /// `unitRequired` a number alone is refused (a lifetime of `30` is more likely 30 days meant
  /// than 30 seconds).
  package static func option(range: ClosedRange<Double>, unitRequired: Bool = false)
    -> @Sendable (String) throws -> DurationArgument
  {
    { text in
      let bounds = "from \(shown(range.lowerBound)) to \(shown(range.upperBound))"
      guard let parsed = parse(text, unitRequired: unitRequired) else {
        let examples = ["90s", "15m", "12h", "30d"].filter { parse($0).map { range.contains($0.seconds) } ?? false }
        let form = unitRequired ? "a number and s, m, h or d" : "a number and s, m, h or d, or seconds alone"
        throw ValidationError(
          "not a duration: \(form) (\(examples.joined(separator: ", "))), \(bounds)")
      }
      guard range.contains(parsed.seconds) else { throw ValidationError("not a time \(bounds)") }
      return parsed
    }
  }
}

extension String {
  func trimmingSpaces() -> String {
    var s = Substring(self)
    while s.first == " " { s = s.dropFirst() }
    while s.last == " " { s = s.dropLast() }
    return String(s)
  }
}

/// `--max-size` and `--strict`: declared once, for every command that checks a package.
struct LimitOptions: ParsableArguments {
  @Option(
    name: .customLong("max-size"),
    help: ArgumentHelp(
      "Largest package file and unpacked content, in bytes (default 2G = 2,000,000,000; units K, M, G count 1,000s, KiB, MiB, GiB 1,024s).",
      valueName: "bytes"), transform: ByteCount.parse)
  var maxSize: ByteCount?

  @Flag(help: "Treat warnings (such as junk files) as errors.")
  var strict = false

  func validationOptions(productID: String? = nil) -> ValidationOptions {
    ValidationOptions(
      maxSize: maxSize?.value ?? ValidationOptions.defaultMaxSize, productIdentifier: productID, strict: strict)
  }
}

/// Options of the commands that take hosted-content packages only (`install`, `publish`): the
/// limits and the product ID; an asset pack's room would mean nothing there.
struct PackageRuleOptions: ParsableArguments {
  @OptionGroup var limits: LimitOptions

  @Option(
    name: .customLong("product-id"),
    help: ArgumentHelp("The product identifier the package must carry.", valueName: "id"))
  var productID: String?

  var strict: Bool { limits.strict }

  var validationOptions: ValidationOptions { limits.validationOptions(productID: productID) }
}

/// Options every command that checks any input shares (asset packs too): the limits, the
/// product ID and the asset-pack room.
struct RuleOptions: ParsableArguments {
  @OptionGroup var limits: LimitOptions

  @Option(
    name: .customLong("product-id"),
    help: ArgumentHelp("The product identifier the package must carry.", valueName: "id"))
  var productID: String?

  @Option(
    name: .customLong("asset-pack-room"),
    help: ArgumentHelp(
      "For asset packs: the room left for this pack of the 200 GB App Store Connect allows for all of an app's Apple-hosted asset packs (default 200G); asset-pack-size warns past it.",
      valueName: "bytes"), transform: ByteCount.parse)
  var assetPackRoom: ByteCount?

  var strict: Bool { limits.strict }

  var validationOptions: ValidationOptions {
    var options = limits.validationOptions(productID: productID)
    if let room = assetPackRoom?.value { options.assetPackLimit = room }
    return options
  }
}

extension ReportFormat: ExpressibleByArgument {}
extension Build.Format: ExpressibleByArgument {}
extension CompressionLevel: ExpressibleByArgument {}

/// Bounds on what a package may make the reader do; raise them for genuine giants.
struct ReaderLimitOptions: ParsableArguments {
  @Option(
    name: .customLong("max-toc-size"),
    help: ArgumentHelp("Largest table of contents accepted, compressed or not (default 256MiB).", valueName: "bytes"),
    transform: ByteCount.parse)
  var maxTOCSize: ByteCount?

  @Option(
    name: .customLong("max-entries"), help: ArgumentHelp("Most entries accepted (default 2000000).", valueName: "n"))
  var maxEntries: Int?

  @Option(
    name: .customLong("max-path-bytes"),
    help: ArgumentHelp("Most bytes all entries' paths may add up to (default 64MiB).", valueName: "bytes"),
    transform: ByteCount.parse)
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
