import SystemIO
import XAR

/// How much of a package's structure a reader accepts before it refuses the package: the
/// bounds that keep a hostile table of contents from exhausting memory or time.
///
/// The defaults accept any package Apple's pipeline could have produced; lower them to refuse
/// smaller abuses sooner.
public struct ReaderLimits: Sendable, Equatable {
  /// Largest table of contents accepted, compressed or inflated, in bytes.
  public var maxTOCBytes: UInt64
  /// Most entries (files, folders, links) accepted.
  public var maxEntries: Int
  /// Deepest folder nesting accepted.
  public var maxDepth: Int
  /// Longest full path accepted, in UTF-8 bytes.
  public var maxPathBytes: Int
  /// Most UTF-8 bytes all entries' full paths may add up to.
  public var maxTotalPathBytes: UInt64
  /// Largest decoded size / stored size accepted for a compressed file over 1 MiB.
  public var maxExpansionRatio: UInt64
  /// Threads that decode and verify files' data ahead of the rules and the sink (a plain XAR's):
  /// by default one per processor online. The bytes written, the findings and the verdict are
  /// the same for any number; only the time and the memory held ahead change.
  public var decodeThreads = Machine.processorCount

  /// The default limits.
  public init() {
    let xar = XARReader.Limits()
    maxTOCBytes = xar.maxTOCBytes
    maxEntries = xar.maxEntries
    maxDepth = xar.maxDepth
    maxPathBytes = xar.maxPathBytes
    maxTotalPathBytes = xar.maxTotalPathBytes
    maxExpansionRatio = xar.maxExpansionRatio
  }

  /// The same limits, for the XAR reader (a cut-off file is accepted only when the policy keeps
  /// going: ``ReadPolicy/keepGoing``).
  package var xar: XARReader.Limits {
    var limits = XARReader.Limits()
    limits.maxTOCBytes = maxTOCBytes
    limits.maxEntries = maxEntries
    limits.maxDepth = maxDepth
    limits.maxPathBytes = maxPathBytes
    limits.maxTotalPathBytes = maxTotalPathBytes
    limits.maxExpansionRatio = maxExpansionRatio
    limits.inflateThreads = decodeThreads
    return limits
  }
}
