/// The pipe every command runs: a source yields entries, the rules look at each as it passes, a
/// sink consumes it. Each file's bytes are read once; the rules see its first bytes.
package final class PackageInspector {
  /// Bytes read per step; also how much of a file's start the rules see.
  package static let chunkSize = 256 * 1024

  package let context: RuleContext
  let ruleTypes: [any Rule.Type]
  /// Keep every entry in the result.
  package var recordEntries = false
  /// Called with the bytes read so far and the source's total (``PackageIndex/expectedDataSize``,
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

  /// Runs the rules over `source`, passing entries to `sink`. Throws only for I/O failures
  /// (`SystemError`); a damaged package is an `archive-integrity` finding.
  ///
  /// Two parts do the work: a ``RuleRunner`` (which rules apply, what they find, the cap) and an
  /// ``EntryDataCopier`` (each entry's bytes to the sink within the budget). An
  /// ``InspectionPass`` joins them: it indexes the paths, keeps `--keep-going`'s account of what
  /// was skipped, turns a reading error into an `archive-integrity` finding, and gives the
  /// index's own verdict at the end.
  package func run(_ source: EntrySource, into sink: EntrySink = NullSink()) throws -> InspectionResult {
    try InspectionPass(self, source: source, sink: sink).run()
  }
}
