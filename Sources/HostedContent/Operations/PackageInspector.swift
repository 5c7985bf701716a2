import SystemIO
import XAR

/// The pipe every command runs: a source yields entries, the rules look at each as it passes, a
/// sink consumes it. Each file's bytes are read once; the rules see its first bytes.
package final class PackageInspector {
  /// Bytes read per step; also how much of a file's start the rules see.
  package static let chunkSize = 256 * 1024

  package let context: RuleContext
  private let ruleTypes: [any Rule.Type]
  /// Keep every entry in the result.
  package var recordEntries = false
  /// Called with the bytes read so far and the source's total (``EntrySource/expectedDataSize``,
  /// asked only when this is set), about once per chunk.
  package var progress: ProgressHandler?
  /// Called with each file's content checksum (SHA-256 hex) when set; costs a hash pass.
  package var onFileDigest: ((PackageEntry, String) -> Void)?
  /// Most findings kept per rule; the rest are counted in one closing finding ("and N more"),
  /// so a package of a million bad names cannot make a report of a million lines.
  package var maxFindingsPerRule = 100
  /// Keep going past findings: an entry a rule found an error in is not given to the sink
  /// (it is listed in ``InspectionResult/skippedEntries``), and the rest is. For `unpack
  /// --keep-going`: the sink still refuses anything unsafe on its own.
  package var skipEntriesWithErrors = false

  package init(context: RuleContext, rules: [any Rule.Type] = RuleCatalog.all) {
    self.context = context
    self.ruleTypes = rules
  }

  /// A failure of the sink (the output side): never a finding about the package.
  private struct SinkFailure: Error { var underlying: Error }

  private func sinkCall<T>(_ body: () throws -> T) throws -> T {
    do { return try body() } catch { throw SinkFailure(underlying: error) }
  }

  /// Runs the rules over `source`, passing entries to `sink`. Throws only for I/O failures
  /// (`SystemError`); a damaged package is an `archive-integrity` finding.
  ///
  /// Two parts do the work: a ``RuleRunner`` (which rules apply, what they find, the cap) and an
  /// ``EntryDataCopier`` (each entry's bytes to the sink within the budget). This loop joins
  /// them: it indexes the paths, keeps `--keep-going`'s account of what was skipped, and turns
  /// a reading error into an `archive-integrity` finding.
  package func run(_ source: EntrySource, into sink: EntrySink = NullSink()) throws -> InspectionResult {
    // Rules that cannot apply do not run (and reports show them as skipped, not passed).
    var context = self.context
    context.sourceFormat = source.format
    var runner = RuleRunner(
      context: context, types: ruleTypes, isUnreadable: source.isUnreadable, maxFindingsPerRule: maxFindingsPerRule)
    var copier = EntryDataCopier(chunkSize: PackageInspector.chunkSize, maxSize: context.options.maxSize)
    var entries: [PackageEntry] = []
    var count = 0
    var files = 0
    var contentSize: UInt64 = 0
    var contentInfoBytes: [UInt8]?
    var integrityFailed = false
    var contentLimitExceeded = false
    let paths = PathIndex()
    if let count = source.entryCountHint { paths.reserve(count: count) }
    sink.share(paths)
    // The total, for progress only: asking may cost a walk of a folder.
    var expected = progress == nil ? nil : source.expectedDataSize
    let expectedMayArrive = progress != nil && expected == nil && source.expectedDataSizeMayArrive
    var nextExpectedCheck: UInt64 = 0

    var skipped: [SkippedEntry] = []
    // Paths an error was found at: with skipEntriesWithErrors, everything under them is skipped
    // too (a folder listed as skipped keeps its children out).
    var skippedTrees: [String: String] = [:]
    func skippedAncestor(_ path: String) -> String? {
      guard !skippedTrees.isEmpty else { return nil }
      var prefix = Substring(path)
      while let slash = prefix.lastIndex(of: "/") {
        prefix = prefix[..<slash]
        if skippedTrees[String(prefix)] != nil { return String(prefix) }
      }
      return nil
    }
    let truncation = skipEntriesWithErrors ? source.truncation : nil
    var entriesPastTheCut = 0
    var open: PackageEntry?
    // Why the entry being visited is skipped (with skipEntriesWithErrors), once it is.
    var flagged: String?
    // Whether the entry being visited is already listed as skipped.
    var listed = false
    func skip(_ entry: PackageEntry, because reason: String) {
      guard !listed else { return }
      listed = true
      skipped.append(SkippedEntry(path: entry.path, reason: reason))
    }
    /// Reads a file's first chunk and shows the entry to every rule; returns the bytes read.
    func inspect(_ entry: PackageEntry, _ data: EntryData?) throws -> Int {
      var first = 0
      if entry.kind == .file, let data { first = try copier.readFirst(data, declared: entry.size) }
      // A slice shares the buffer; it is gone before the buffer is written again.
      let errors = runner.inspect(
        InspectedEntry(entry: entry, head: copier.buffer[..<min(first, copier.buffer.count)], paths: paths))
      flagged = nil
      if skipEntriesWithErrors {
        if let error = errors.first {
          flagged = "\(error.message) [\(error.ruleID)]"
        } else if let folder = skippedAncestor(entry.path) {
          flagged = "inside '\(folder.debugEscaped)', which was skipped"
        }
        for finding in errors {
          if let path = finding.path, !path.isEmpty, skippedTrees[path] == nil { skippedTrees[path] = finding.message }
        }
      }
      return first
    }

    /// Shows one entry to the rules and gives it to the sink (or drains it).
    func visitEntry(_ entry: PackageEntry, _ data: EntryData?) throws {
      if entry.isWrapperMember {
        // Seen by the rules and read to the end (checksums), but not content: not counted,
        // not indexed, never written.
        let first = try inspect(entry, data)
        if let data { try copier.drain(data, of: entry, initial: first) }
        return
      }
      count += 1
      if entry.kind == .file { files += 1 }
      if recordEntries { entries.append(entry) }
      let (sum, overflow) = contentSize.addingReportingOverflow(entry.size)
      contentSize = overflow ? .max : sum

      let first = try inspect(entry, data)
      paths.insert(entry.path)

      if skipEntriesWithErrors, let reason = flagged {
        skip(entry, because: reason)
        if let data { try copier.drain(data, of: entry, initial: first) }
        return
      }
      if let refusal = try sinkCall({ try sink.begin(entry) }) {
        if !runner.hasError(at: entry.path) {
          runner.add(PathSafetyRule.finding(forSinkRefusal: refusal, at: entry.path))
        }
        if skipEntriesWithErrors {
          skip(entry, because: refusal)
          if entry.kind == .directory { skippedTrees[entry.path] = refusal }
        }
        if let data { try copier.drain(data, of: entry, initial: first) }
        return
      }
      guard entry.kind == .file, let data else {
        try sinkCall { try sink.end(entry) }
        return
      }
      open = entry
      let wantsPlist = entry.path == ContentInfo.fileName
      var plistBytes: [UInt8] = []
      var hasher = onFileDigest == nil ? nil : XARHasher(.sha256)
      try copier.copy(
        data, of: entry, initial: first, to: { chunk in try sinkCall { try sink.write(chunk) } },
        each: { chunk, produced in
          hasher?.update(chunk)
          if wantsPlist && plistBytes.count <= PropertyList.maxEncodedSize { plistBytes += chunk }
          if let progress {
            if expectedMayArrive && expected == nil && produced >= nextExpectedCheck {
              expected = source.expectedDataSize
              nextExpectedCheck = produced + (16 << 20)
            }
            progress(produced, expected)
          }
        })
      if wantsPlist { contentInfoBytes = plistBytes }
      if let hasher { onFileDigest?(entry, hasher.finalize().hex) }
      open = nil
      try sinkCall { try sink.end(entry) }
    }

    // A failure of the sink or of I/O, thrown once the source has settled its index.
    var failed: (any Error)?
    do {
      let reader = try source.entries()
      while let (entry, data) = try reader.next() {
        listed = false
        guard skipEntriesWithErrors, !entry.isWrapperMember else {
          try visitEntry(entry, data)
          continue
        }
        do {
          try visitEntry(entry, data)
        } catch let error
          where !(error is EntryDataCopier.BudgetExceeded || error is SinkFailure || error is SystemError)
        {
          // --keep-going: this entry's data did not read back (a checksum, a size, a cut); it
          // is taken back from the sink, listed, and the next entry is read.
          if let entry = open { sink.abandon(entry) }
          open = nil
          integrityFailed = true
          // (Its first chunk may have failed before the entry was indexed.)
          if !entry.path.isEmpty && !paths.containsEntry(entry.path) { paths.insert(entry.path) }
          if let truncation, case XARError.truncatedHeap = error {
            entriesPastTheCut += 1
            skip(entry, because: ArchiveIntegrityRule.pastTheCut(truncation))
          } else {
            let finding = ArchiveIntegrityRule.finding(for: error)
            runner.add(finding)
            skip(entry, because: finding.message)
          }
          if entry.kind == .directory { skippedTrees[entry.path] = "unreadable" }
        }
      }
    } catch is EntryDataCopier.BudgetExceeded {
      contentLimitExceeded = true
      integrityFailed = true
    } catch let failure as SinkFailure {
      failed = failure.underlying
    } catch let error as SystemError {
      failed = error
    } catch {
      integrityFailed = true
      runner.add(ArchiveIntegrityRule.finding(for: error))
    }
    if let refusal = source.indexRefusal() {
      // The whole index is refused after all (a streamed XAR TOC whose closing checks fail):
      // the verdict is an unreadable file's, as the ordinary reader gives it, whatever the rules
      // saw of the entries and whatever the sink met. Nothing given to the sink stands. (An I/O
      // error while the TOC was read is no verdict: it is thrown, as the ordinary reader's.)
      if let entry = open { sink.abandon(entry) }
      if let error = refusal as? SystemError { throw error }
      return try run(
        UnreadablePackageSource(
          path: source.location, packageSize: source.packageSize, reason: "\(refusal)", cause: refusal as? XARError))
    }
    if let failed {
      if let entry = open { sink.abandon(entry) }
      throw failed
    }
    // A file whose reading stopped half way is taken back from the sink.
    var incomplete: String?
    if let entry = open {
      sink.abandon(entry)
      incomplete = entry.path
      if skipEntriesWithErrors { skip(entry, because: "could not be read to its end: reading stopped there") }
    }
    if skipEntriesWithErrors, integrityFailed, let indexed = source.indexedPaths {
      // Reading stopped early: the entries the index lists that were never reached.
      for path in indexed where !paths.containsEntry(path) {
        skipped.append(SkippedEntry(path: path, reason: "not read: reading stopped before it (see the findings)"))
      }
    }

    var summary = InspectionSummary(
      format: source.format, packageSize: source.packageSize, contentInfoBytes: contentInfoBytes,
      entryCount: count, contentSize: contentSize, integrityFailed: integrityFailed, paths: paths)
    summary.otherForms = source.otherForms
    summary.contentLimitExceeded = contentLimitExceeded
    summary.leftOut = source.leftOut
    summary.truncation = truncation
    summary.entriesPastTheCut = entriesPastTheCut
    let findings = runner.finish(summary, maxSize: copier.maxSize)
    let contentInfo = contentInfoBytes.flatMap { try? ContentInfo(decoding: $0) }
    var result = InspectionResult(
      format: source.format, location: source.location, packageSize: source.packageSize,
      findings: findings, contentInfo: contentInfo, entryCount: count, contentSize: contentSize,
      entries: entries, integrityFailed: integrityFailed)
    result.fileCount = files
    result.skippedEntries = skipped
    result.incompleteEntry = incomplete
    result.skippedRules = runner.skippedRules
    return result
  }
}
