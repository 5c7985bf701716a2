import Foundation
import HostedContent
import SystemIO
import TestSupport
import Testing
import XAR

/// `unpack --keep-going` accounts for every entry: each entry of the package's index is either
/// written or listed as skipped (with a reason), never both, never neither. Checked on every
/// hostile plain XAR whose TOC can be read (cut off or not), with one writer thread and four.
@Suite struct KeepGoingAccountingTests {
  @Test(arguments: HostilePackage.all, [1, 4])
  func everyEntryIsWrittenOrSkipped(hostile: HostilePackage, threads: Int) throws {
    let dir = try TemporaryDirectory()
    let package = dir.appending(hostile.fileName)
    try hostile.make(package)
    var limits = XARReader.Limits()
    limits.acceptsTruncation = true
    guard let reader = try? XARReader(path: package, limits: limits), FlatPackageSource.payload(in: reader) == nil
    else { return }
    let paths = reader.entries.map(\.path)
    // Names two entries share, or that the sink would spell another way, are left to the
    // rules that refuse them; the accounting is by entry.
    guard Set(paths).count == paths.count, paths.allSatisfy({ !$0.isEmpty && !$0.hasPrefix("/") }) else { return }
    var options = Unpack.Options()
    options.keepGoing = true
    options.threads = threads
    let destination = dir.appending("out")
    guard let result = try? Unpack.run(package: package, destination: destination, options: options),
      result.output != nil
    else { return }
    let written = Set(try snapshot(destination).keys)
    let skipped = result.inspection.skippedEntries
    let skippedPaths = Set(skipped.map(\.path))
    #expect(skippedPaths.count == skipped.count, "\(hostile.name): listed twice: \(skipped.map(\.path))")
    #expect(written.isDisjoint(with: skippedPaths), "\(hostile.name): both: \(written.intersection(skippedPaths))")
    let all = Set(paths)
    let neither = all.subtracting(written).subtracting(skippedPaths)
    #expect(neither.isEmpty, "\(hostile.name): neither written nor skipped: \(neither.sorted())")
    #expect(skipped.allSatisfy { !$0.reason.isEmpty }, "\(hostile.name)")
  }

  /// A cut XAR read for --keep-going: the entries whose data lies before the cut, verified;
  /// the rest listed with the cut in their reason; one finding for the cut.
  @Test func aCutPackageKeepsWhatLiesBeforeTheCut() throws {
    let dir = try TemporaryDirectory()
    let package = dir.appending("cut.pkg")
    try HostilePackage.all.first { $0.name == "XAR cut inside a file's data" }!.make(package)
    var options = Unpack.Options()
    options.keepGoing = true
    let result = try Unpack.run(package: package, destination: dir.appending("out"), options: options)
    #expect(result.output != nil)
    #expect(FileManager.default.fileExists(atPath: dir.appending("out/ContentInfo.plist")))
    #expect(!FileManager.default.fileExists(atPath: dir.appending("out/Contents/data.txt")))
    #expect(
      result.inspection.skippedEntries.map(\.path) == [
        "Contents/data.txt", "Contents/more/a.txt", "Contents/more/b.txt",
      ])
    let cut = result.inspection.findings.filter { $0.message.hasPrefix("the file is truncated") }
    #expect(cut.count == 1)
    #expect(cut.first?.hint == "the download is incomplete: fetch it again")
    #expect(cut.first?.message.hasSuffix("3 entries lie past the cut and were not read") == true)
    // Without --keep-going: refused whole, and said so.
    let plain = try Unpack.run(package: package, destination: dir.appending("plain"), options: Unpack.Options())
    #expect(plain.output == nil)
    let finding = try #require(plain.inspection.findings.first)
    #expect(finding.message.contains("the file is truncated: it ends at byte"))
    #expect(finding.hint?.contains("fetch it again") == true)
    #expect(finding.hint?.contains("unpack --keep-going") == true)
  }
}
