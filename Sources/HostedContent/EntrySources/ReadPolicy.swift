import SystemIO
import XAR

/// What a command reads: a path (a package file or a folder), or a package file it already has
/// open, so that one descriptor serves the whole command (hash, plist, data).
package enum PackageInput {
  /// A package file or a folder, opened here.
  case path(String)
  /// A package file already open: every read goes through it, so a file renamed over its path
  /// meanwhile is never read.
  case file(FileDescriptor)
}

/// What a caller allows when it opens a package (``PackageOpener/open(_:_:)``): the reader's
/// limits, and how the package may be read. The opener makes every decision about the reader
/// from it (which reader, its decode threads, how far they decode ahead); nothing tunes a
/// source after it is open.
package struct ReadPolicy: Sendable {
  /// What becomes of a file that is not a package (or whose index cannot be read).
  package enum NotAPackage: Sendable {
    /// ``PackageOpener/OpenError/notAPackage(path:reason:cause:)`` is thrown.
    case throwError
    /// It opens as an ``UnreadablePackageSource``, so it flows through the rules like any other
    /// source and `archive-integrity` reports it. Only a path that cannot be read throws.
    case unreadableSource
  }

  /// What the reader accepts before it refuses the package.
  package var limits: ReaderLimits
  /// A plain XAR may be read while its TOC is parsed (``StreamingXARPackageSource``): for a
  /// caller that can wait for the verdict the whole TOC settles at the end (it arrives as a
  /// result of the run: ``InspectionResult/indexRefused``).
  package var streaming = false
  /// The caller hands each file's digest on as the file is read, in the entries' order (SARIF),
  /// and cannot take one back: a plain XAR's TOC is then read whole first.
  package var digestsInEntryOrder = false
  /// Keep going past damage (`unpack --keep-going`): a plain XAR that was cut off (its TOC whole,
  /// its heap not) is opened, its entries past the cut throwing when read
  /// (``PackageIndex/truncation``); its TOC is then read whole first.
  package var keepGoing = false
  /// Files up to this size are decoded ahead of the caller on the decode threads too (in parts),
  /// not only small ones: for a caller that reads every file whole. `.max` for a caller whose
  /// thread writes every file (unpack, install); ``partsLimitForChecking`` for one that only
  /// checks them (validate); 0 decodes only small files ahead.
  package var decodeAheadUpTo: UInt64 = 0
  /// The caller's own work per file is light (validate, which checks each file; not unpack,
  /// which writes each one): on two processors, while a streamed TOC is parsed, the caller then
  /// decodes each file itself and the decode threads start at the TOC's end.
  package var callerWorkIsLight = false
  /// A folder is read as `build` reads it: a content project (``ProjectSource``: what build
  /// leaves out is listed, not judged) or an asset-pack source folder; otherwise every folder
  /// is a plain ``DirectorySource``.
  package var foldersAsProjects = false
  /// What a file that is not a package becomes.
  package var notAPackage = NotAPackage.throwError

  /// A policy that reads under `limits` and allows nothing more: every folder plain, a file that
  /// is not a package thrown, no streaming.
  package init(limits: ReaderLimits = ReaderLimits()) {
    self.limits = limits
  }

  /// Threads that decode and verify files' data ahead of the caller (``ReaderLimits/decodeThreads``).
  package var decodeThreads: Int {
    get { limits.decodeThreads }
    set { limits.decodeThreads = newValue }
  }

  /// The policy of a run of the rules: folders read as `build` reads them, a file that is not a
  /// package an unreadable source the rules judge, and a plain XAR read as its TOC streams.
  package static func rules(_ limits: ReaderLimits = ReaderLimits()) -> ReadPolicy {
    var policy = inspection(limits)
    policy.streaming = true
    return policy
  }

  /// As ``rules(_:)``, without streaming: every index read whole first.
  package static func inspection(_ limits: ReaderLimits = ReaderLimits()) -> ReadPolicy {
    var policy = ReadPolicy(limits: limits)
    policy.foldersAsProjects = true
    policy.notAPackage = .unreadableSource
    return policy
  }

  /// The bound validate decodes ahead to: a file past it gains nothing from the workers (the
  /// second one runs at most ``XARPrefetcher/partsAhead`` parts ahead, so on a long file both
  /// cannot work at once) and loses the copy of each part: a 1.95 GB package of three 650 MB
  /// files validated in 1.62 s that way against 1.42 s read on the validating thread.
  package static let partsLimitForChecking: UInt64 = 8 << 20

  /// True when a plain XAR is read while its TOC is parsed: streaming allowed, and neither a
  /// digest that could not be taken back nor a cut-off file to read.
  var streamsPlainXAR: Bool { streaming && !digestsInEntryOrder && !keepGoing }

  /// True when the caller decodes each file itself while a streamed TOC is parsed. On two
  /// processors, the TOC's parser and a caller with light work per file fill both: decode
  /// threads beside them only take time from the parser, which the whole read waits for. On
  /// bsdtar's package of 50,000 small files (a 36 MB TOC), validate with the caller decoding
  /// every file itself took 0.94 of the time (8 pairs) with 4% less CPU, and this, the decode
  /// threads taking over at the TOC's end, does as well (docs/performance.md); a package of
  /// large files, whose TOC is parsed in a moment, hardly meets it.
  var decodesOnCallerWhileParsing: Bool { callerWorkIsLight && Machine.processorCount <= 2 }

  /// The limits for the XAR reader.
  var xar: XARReader.Limits {
    var limits = self.limits.xar
    limits.acceptsTruncation = keepGoing
    return limits
  }
}
