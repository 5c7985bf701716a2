import Foundation
import HostedContent
import TestSupport
import Testing

/// Files' data decoded ahead on a second thread must give exactly the verdict of reading it in
/// line: every hostile package, and packages damaged in the middle and at the end of a file.
@Suite struct PrefetchTests {
  private func findings(_ path: String, prefetch: Bool, large: Bool = true) throws -> [Finding]? {
    guard let source = try PackageOpener.open(.path(path)) as? XARPackageSource else { return nil }
    source.prefetch = prefetch
    source.prefetchLargeFilesUpTo = large ? .max : 0
    let inspector = PackageInspector(context: RuleContext(packageFileName: (path as NSString).lastPathComponent))
    return try inspector.run(source).findings
  }

  @Test(arguments: HostilePackage.all)
  func theSameFindingsWithAndWithoutPrefetching(hostile: HostilePackage) throws {
    let dir = try TemporaryDirectory()
    let path = dir.appending(hostile.fileName)
    try hostile.make(path)
    guard let inline = try? findings(path, prefetch: false) else { return }  // not a plain XAR
    let ahead = try #require(try? findings(path, prefetch: true))
    #expect(ahead == inline, "\(hostile.name)")
    #expect(ahead.contains { $0.ruleID == hostile.ruleID }, "\(hostile.name)")
  }

  /// `large`: some files come in parts (past 256 KiB); the damage lands in one of them or not.
  @Test(arguments: [false, true]) func manyFilesWithOneDamagedInTheMiddle(large: Bool) throws {
    let dir = try TemporaryDirectory()
    var nodes = RuleExample.baseNodes
    for i in 0..<600 {
      let count = large && i % 100 == 50 ? 40_000 + i : 20 + i % 50
      nodes.append(.file("Contents/f\(i).txt", String(repeating: "line \(i)\n", count: count)))
    }
    var bytes = ExamplePackages.xarBytes(nodes, compress: true)
    // Flip a byte two thirds into the heap (after the header and the compressed TOC, whose
    // length is the big-endian UInt64 at offset 8): one file's stored data no longer matches.
    let tocLength = bytes[8..<16].reduce(0) { $0 << 8 | Int($1) }
    let heapStart = 28 + tocLength
    bytes[heapStart + (bytes.count - heapStart) * 2 / 3] ^= 0xFF
    let path = dir.appending("damaged.pkg")
    try Data(bytes).write(to: URL(fileURLWithPath: path))
    let inline = try #require(try findings(path, prefetch: false))
    let ahead = try #require(try findings(path, prefetch: true))
    let smallAhead = try #require(try findings(path, prefetch: true, large: false))
    #expect(ahead == inline)
    #expect(smallAhead == inline)
    #expect(ahead.contains { $0.ruleID == "archive-integrity" })
  }
}
