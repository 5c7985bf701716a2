import Crypto
import SystemIO
import TextCoding
import XAR

/// One run of ``PackageInspector`` over a source, in named steps: read the entries
/// (``readEntries()``), visit each (``visit(_:_:)``: inspect it, give it to the sink or hold it
/// back, copy its data), take the index's verdict (``indexVerdict()``), and sum up
/// (``conclude()``). What each option adds is a helper that gives a value: `--keep-going`'s
/// account (``KeepGoingAccount``), progress (``ProgressMeter``), a file's digest and the plist's
/// bytes (``FileTap``). A pass runs once; nothing in it runs again.
final class InspectionPass {
  private let source: EntrySource
  private let sink: EntrySink
  private let inspector: PackageInspector
  private let context: RuleContext
  private var runner: RuleRunner
  private var copier: EntryDataCopier
  private let paths = PathIndex()
  private var tally = Tally()
  /// `--keep-going`'s account (``PackageInspector/skipEntriesWithErrors``); nil otherwise.
  private var keepGoing: KeepGoingAccount?
  private var meter: ProgressMeter?
  /// The file whose data is being given to the sink.
  private var open: PackageEntry?
  private var integrityFailed = false
  private var contentLimitExceeded = false
  private var contentOverLimitOnDisk = false

  init(_ inspector: PackageInspector, source: EntrySource, sink: EntrySink) {
    self.inspector = inspector
    self.source = source
    self.sink = sink
    let index = source.index
    var context = inspector.context
    context.sourceFormat = source.format
    self.context = context
    // Rules that cannot apply do not run (and reports show them as skipped, not passed).
    runner = RuleRunner(
      context: context, types: inspector.ruleTypes, isUnreadable: index?.unreadable != nil,
      maxFindingsPerRule: inspector.maxFindingsPerRule)
    copier = EntryDataCopier(chunkSize: PackageInspector.chunkSize, maxSize: context.options.maxSize)
    if let count = index?.entryCountHint { paths.reserve(count: count) }
    sink.share(paths)
    // The total, for progress only: asking may cost a walk of a folder.
    meter = inspector.progress.map { ProgressMeter($0, index: index) }
    keepGoing = inspector.skipEntriesWithErrors ? KeepGoingAccount(truncation: index?.truncation) : nil
  }

  /// The pass: the entries read, then the index's verdict, then the result.
  func run() throws -> InspectionResult {
    let failed = readEntries()
    if let verdict = try indexVerdict() { return verdict }
    if let failed {
      if let entry = open { sink.abandon(entry) }
      throw failed
    }
    return conclude()
  }

  /// A failure of the sink (the output side): never a finding about the package.
  private struct SinkFailure: Error { var underlying: Error }

  private func sinkCall<T>(_ body: () throws -> T) throws -> T {
    do { return try body() } catch { throw SinkFailure(underlying: error) }
  }

  /// Reads the entries until the last or until reading stops. A damaged package stops it with a
  /// finding; the content limit with a fact for the rules. A failure of the sink or of I/O is
  /// given back, thrown once the source has settled its index.
  private func readEntries() -> (any Error)? {
    do {
      let reader = try source.entries()
      while let (entry, data) = try reader.next() {
        keepGoing?.startEntry()
        guard keepGoing != nil, !entry.isWrapperMember else {
          try visit(entry, data)
          continue
        }
        do {
          try visit(entry, data)
        } catch let error
          where !(error is EntryDataCopier.BudgetExceeded || error is SinkFailure || error is SystemError)
        {
          passOver(entry, unread: error)
        }
      }
    } catch is EntryDataCopier.BudgetExceeded {
      contentLimitExceeded = true
      integrityFailed = true
    } catch is SizeOnDiskOverLimit {
      contentLimitExceeded = true
      contentOverLimitOnDisk = true
      integrityFailed = true
    } catch let failure as SinkFailure {
      return failure.underlying
    } catch let error as SystemError {
      return error
    } catch {
      integrityFailed = true
      runner.add(ArchiveIntegrityRule.finding(for: error))
    }
    return nil
  }

  /// `--keep-going`: `entry`'s data did not read back (a checksum, a size, a cut); it is taken
  /// back from the sink, listed, and the next entry is read.
  private func passOver(_ entry: PackageEntry, unread error: any Error) {
    if let entry = open { sink.abandon(entry) }
    open = nil
    integrityFailed = true
    // (Its first chunk may have failed before the entry was indexed.)
    if !entry.path.isEmpty && !paths.containsEntry(entry.path) { paths.insert(entry.path) }
    if let cut = keepGoing?.truncation, case XARError.truncatedHeap = error {
      keepGoing?.skipPastTheCut(entry, cut)
    } else {
      let finding = ArchiveIntegrityRule.finding(for: error)
      runner.add(finding)
      keepGoing?.skip(entry, because: finding.message)
    }
    if entry.kind == .directory { keepGoing?.skipTree(entry.path, because: "unreadable") }
  }

  /// Reads a file's first chunk and shows the entry to every rule; returns the bytes read.
  private func inspect(_ entry: PackageEntry, _ data: EntryData?) throws -> Int {
    var first = 0
    if entry.kind == .file, let data { first = try copier.readFirst(data, declared: entry.size) }
    // A slice shares the buffer; it is gone before the buffer is written again.
    let errors = runner.inspect(
      InspectedEntry(entry: entry, head: copier.buffer[..<min(first, copier.buffer.count)], paths: paths))
    keepGoing?.judge(entry, errors: errors)
    return first
  }

  /// Shows one entry to the rules and gives it to the sink (or drains it).
  private func visit(_ entry: PackageEntry, _ data: EntryData?) throws {
    if entry.isWrapperMember {
      // Seen by the rules and read to the end (checksums), but not content: not counted,
      // not indexed, never written.
      let first = try inspect(entry, data)
      if let data { try copier.drain(data, of: entry, initial: first) }
      return
    }
    tally.add(entry, recording: inspector.recordEntries)
    let first = try inspect(entry, data)
    paths.insert(entry.path)
    // A folder's sizes are the files' own (`stat`): content over the limit is known once the
    // rules have seen the entry, before the rest of its bytes are read (a 3 GB file is refused
    // after its first chunk, not after 2 GB).
    if tally.contentSize > copier.maxSize, source.format == .directory || source.format == .assetPack {
      throw SizeOnDiskOverLimit()
    }
    if let reason = keepGoing?.flagged {
      keepGoing?.skip(entry, because: reason)
      if let data { try copier.drain(data, of: entry, initial: first) }
      return
    }
    if let refusal = try sinkCall({ try sink.begin(entry) }) {
      if !runner.hasError(at: entry.path) {
        runner.add(PathSafetyRule.finding(forSinkRefusal: refusal, at: entry.path))
      }
      keepGoing?.skip(entry, because: refusal)
      if entry.kind == .directory { keepGoing?.skipTree(entry.path, because: refusal) }
      if let data { try copier.drain(data, of: entry, initial: first) }
      return
    }
    guard entry.kind == .file, let data else {
      try sinkCall { try sink.end(entry) }
      return
    }
    try copy(entry, data, initial: first)
  }

  /// Gives a file's data to the sink, chunk by chunk, hashing it and keeping the plist's bytes.
  private func copy(_ entry: PackageEntry, _ data: EntryData, initial first: Int) throws {
    open = entry
    if let positional = data as? PositionalEntryData {
      try sinkCall { try sink.preview(entry) { try positional.read(into: $1, at: $0) } }
    }
    var tap = FileTap(entry, digest: inspector.onFileDigest != nil, assetPack: context.isAssetPack)
    try copier.copy(
      data, of: entry, initial: first, to: { chunk in try sinkCall { try sink.write(chunk) } },
      each: { chunk, produced in
        tap.take(chunk)
        meter?.advance(to: produced)
      })
    if let kept = tap.plist {
      if entry.path == ContentInfo.fileName {
        tally.contentInfoBytes = kept
      } else {
        tally.assetPackManifestBytes = kept
      }
    }
    if let digest = tap.digest() { inspector.onFileDigest?(entry, digest) }
    open = nil
    try sinkCall { try sink.end(entry) }
  }

  /// The index's own verdict, for a source that settles it only at the end (a streamed XAR TOC
  /// whose closing checks fail): the verdict is an unreadable file's, as the ordinary reader
  /// gives it, whatever the rules saw of the entries and whatever the sink met. Nothing given to
  /// the sink stands. (An I/O error while the TOC was read is no verdict: it is thrown, as the
  /// ordinary reader's.) Nil when the index stands.
  private func indexVerdict() throws -> InspectionResult? {
    guard let refusal = source.index?.refusal?() else { return nil }
    if let entry = open { sink.abandon(entry) }
    if let error = refusal as? SystemError { throw error }
    var context = self.context
    context.sourceFormat = .unknown
    var runner = RuleRunner(
      context: context, types: inspector.ruleTypes, isUnreadable: true,
      maxFindingsPerRule: inspector.maxFindingsPerRule)
    let notAPackage = UnreadablePackageSource.NotAPackage(reason: "\(refusal)", cause: refusal as? XARError)
    runner.add(ArchiveIntegrityRule.finding(for: notAPackage))
    let summary = InspectionSummary(
      format: .unknown, packageSize: source.packageSize, contentInfoBytes: nil, entryCount: 0, contentSize: 0,
      integrityFailed: true, paths: PathIndex())
    var result = summedUp(summary, runner: &runner, tally: Tally())
    result.indexRefused = true
    return result
  }

  /// The result of a pass that read what it could: a file half read taken back from the sink,
  /// the entries never reached listed for `--keep-going`, and every rule's closing checks.
  private func conclude() -> InspectionResult {
    // A file whose reading stopped half way is taken back from the sink.
    let incomplete = open
    if let entry = incomplete {
      sink.abandon(entry)
      keepGoing?.skip(entry, because: "could not be read to its end: reading stopped there")
    }
    let index = source.index
    if keepGoing != nil, integrityFailed, let indexed = index?.indexedPaths?() {
      keepGoing?.listNotReached(indexed, seen: paths)
    }
    var summary = InspectionSummary(
      format: source.format, packageSize: source.packageSize, contentInfoBytes: tally.contentInfoBytes,
      entryCount: tally.count, contentSize: tally.contentSize, integrityFailed: integrityFailed, paths: paths)
    summary.otherForms = index?.otherForms ?? []
    summary.contentLimitExceeded = contentLimitExceeded
    summary.contentOverLimitOnDisk = contentOverLimitOnDisk
    summary.leftOut = index?.leftOut ?? []
    summary.truncation = keepGoing?.truncation
    summary.entriesPastTheCut = keepGoing?.entriesPastTheCut ?? 0
    var result = summedUp(summary, runner: &runner, tally: tally)
    result.skippedEntries = keepGoing?.skipped ?? []
    result.incompleteEntry = incomplete?.path
    return result
  }

  /// The findings of every rule's closing checks over `summary`, and what was counted.
  private func summedUp(_ summary: InspectionSummary, runner: inout RuleRunner, tally: Tally) -> InspectionResult {
    let findings = runner.finish(summary, maxSize: copier.maxSize)
    let contentInfo = tally.contentInfoBytes.flatMap { try? ContentInfo(decoding: $0) }
    var result = InspectionResult(
      format: summary.format, location: source.location, packageSize: source.packageSize,
      findings: findings, contentInfo: contentInfo, entryCount: tally.count, contentSize: tally.contentSize,
      entries: tally.entries, integrityFailed: summary.integrityFailed)
    result.fileCount = tally.files
    result.emptyFileCount = tally.emptyFiles
    result.assetPackManifest = tally.assetPackManifestBytes.flatMap { AssetPackManifest.parse($0).manifest }
    result.assetPackID = tally.assetPackManifestBytes.flatMap(AssetPackManifest.declaredID(in:))
    result.skippedRules = runner.skippedRules
    result.projectFiles = summary.leftOut.filter { $0.reason == .outsideContent && LayoutRule.isProjectFile($0.path) }
      .map(\.path)
    return result
  }
}

/// Reading stops before a folder's file whose size on disk takes the content past the limit.
private struct SizeOnDiskOverLimit: Error {}

/// What a pass counts of the content entries it visits.
struct Tally {
  var entries: [PackageEntry] = []
  var count = 0
  var files = 0
  var emptyFiles = 0
  /// The sum of file sizes, saturating.
  var contentSize: UInt64 = 0
  /// `ContentInfo.plist`'s bytes, when it was read as a file at the root.
  var contentInfoBytes: [UInt8]?
  /// An asset pack's `Manifest.json` bytes, when it was read as a file at the root.
  var assetPackManifestBytes: [UInt8]?

  mutating func add(_ entry: PackageEntry, recording: Bool) {
    count += 1
    if entry.kind == .file {
      files += 1
      if entry.size == 0 { emptyFiles += 1 }
    }
    if recording { entries.append(entry) }
    let (sum, overflow) = contentSize.addingReportingOverflow(entry.size)
    contentSize = overflow ? .max : sum
  }
}

/// `--keep-going`'s account: which entries are skipped and why, so that every entry of the
/// package is either given to the sink or listed here, never both.
struct KeepGoingAccount {
  /// Where the package was cut off, when it was opened anyway.
  let truncation: Truncation?
  private(set) var skipped: [SkippedEntry] = []
  /// How many entries were not read because their data lies past the cut.
  private(set) var entriesPastTheCut = 0
  /// Why the entry being visited is skipped, once it is.
  private(set) var flagged: String?
  /// Paths an error was found at: everything under them is skipped too (a folder listed as
  /// skipped keeps its children out).
  private var skippedTrees: [String: String] = [:]
  /// Whether the entry being visited is already listed as skipped.
  private var listed = false

  init(truncation: Truncation?) { self.truncation = truncation }

  /// A new entry is visited.
  mutating func startEntry() { listed = false }

  /// Takes the rules' errors in `entry`: the entry is flagged by the first, or by a folder above
  /// it that was skipped; the paths they name are skipped with everything under them.
  mutating func judge(_ entry: PackageEntry, errors: [Finding]) {
    flagged = nil
    if let error = errors.first {
      flagged = "\(error.message) [\(error.ruleID)]"
    } else if let folder = skippedAncestor(entry.path) {
      flagged = "inside '\(folder.debugEscaped)', which was skipped"
    }
    for finding in errors {
      if let path = finding.path, !path.isEmpty, skippedTrees[path] == nil { skippedTrees[path] = finding.message }
    }
  }

  /// Lists `entry` as skipped, once.
  mutating func skip(_ entry: PackageEntry, because reason: String) {
    guard !listed else { return }
    listed = true
    skipped.append(SkippedEntry(path: entry.path, reason: reason))
  }

  /// Lists `entry`, whose data lies past `cut`.
  mutating func skipPastTheCut(_ entry: PackageEntry, _ cut: Truncation) {
    entriesPastTheCut += 1
    skip(entry, because: ArchiveIntegrityRule.pastTheCut(cut))
  }

  /// Skips everything under `path`.
  mutating func skipTree(_ path: String, because reason: String) { skippedTrees[path] = reason }

  /// Lists the entries the index names that reading never reached.
  mutating func listNotReached(_ indexed: [String], seen: PathIndex) {
    for path in indexed where !seen.containsEntry(path) {
      skipped.append(SkippedEntry(path: path, reason: "not read: reading stopped before it (see the findings)"))
    }
  }

  private func skippedAncestor(_ path: String) -> String? {
    guard !skippedTrees.isEmpty else { return nil }
    var prefix = Substring(path)
    while let slash = prefix.lastIndex(of: "/") {
      prefix = prefix[..<slash]
      if skippedTrees[String(prefix)] != nil { return String(prefix) }
    }
    return nil
  }
}

/// Progress as a pass reads: the bytes read so far and the source's total, asked again now and
/// then while it may still arrive (a TOC being parsed).
struct ProgressMeter {
  private let report: ProgressHandler
  private let ask: (() -> UInt64?)?
  private var expected: UInt64?
  private let mayArrive: Bool
  private var nextCheck: UInt64 = 0

  init(_ report: @escaping ProgressHandler, index: PackageIndex?) {
    self.report = report
    ask = index?.expectedDataSize
    expected = ask?()
    mayArrive = expected == nil && index?.expectedDataSizeMayArrive == true
  }

  mutating func advance(to produced: UInt64) {
    if mayArrive && expected == nil && produced >= nextCheck {
      expected = ask?()
      nextCheck = produced + (16 << 20)
    }
    report(produced, expected)
  }
}

/// What a pass takes from a file's bytes on their way to the sink: their digest, when asked
/// for, and `ContentInfo.plist`'s bytes.
struct FileTap {
  private var hasher: SHA256?
  /// The plist's bytes so far (nil for any other file), kept up to a little past the largest
  /// plist accepted; in an asset pack, `Manifest.json`'s bytes the same way.
  private(set) var plist: [UInt8]?

  init(_ entry: PackageEntry, digest: Bool, assetPack: Bool = false) {
    hasher = digest ? SHA256() : nil
    let kept = entry.path == ContentInfo.fileName || (assetPack && entry.path == AssetPackManifest.fileName)
    plist = kept ? [] : nil
  }

  mutating func take(_ chunk: UnsafeRawBufferPointer) {
    hasher?.update(bufferPointer: chunk)
    if let count = plist?.count, count <= PropertyList.maxEncodedSize { plist! += chunk }
  }

  /// The content's SHA-256 (hex), when asked for.
  mutating func digest() -> String? { hasher.map { hexString($0.finalize()) } }
}
