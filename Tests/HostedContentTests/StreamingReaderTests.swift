import Foundation
import HostedContent
import SystemIO
import Testing

@testable import TestSupport
@testable import XAR

/// A TOC read as it streams (``XARStreamingReader``) may only confirm what the ordinary reader
/// accepts, and then must have handed out exactly its entries, in its order.
@Suite struct StreamingReaderTests {
  /// The entries the feed handed out, and whether the whole TOC was confirmed.
  static func streamed(_ path: String) throws -> (entries: [XAREntry], confirmed: XARReader?) {
    let streaming = try XARStreamingReader(file: FileDescriptor.open(reading: path))
    var entries: [XAREntry] = []
    var next = 0
    while true {
      let (table, ready) = streaming.feed.view(beyond: next)
      guard next < ready else { break }
      for i in next..<ready { entries.append(table[i]) }
      next = ready
    }
    return (entries, try? streaming.reader())
  }

  static func check(_ path: String, _ name: String) throws {
    let ordinary = try? XARReader(path: path)
    guard let streamed = try? Self.streamed(path) else {
      // Refused before the parse (header, TOC bounds): the ordinary reader refuses it too.
      #expect(ordinary == nil, "\(name): the streaming reader refused what the ordinary one read")
      return
    }
    if let confirmed = streamed.confirmed {
      let ordinary = try #require(ordinary, "\(name): confirmed while streaming, refused by the ordinary reader")
      #expect(streamed.entries == Array(ordinary.entries), "\(name)")
      #expect(Array(confirmed.entries) == Array(ordinary.entries), "\(name)")
    } else if let ordinary {
      // Not confirmed although the ordinary reader accepts it: only a TOC the parser does not
      // stream (hard links, fields after a child), whose entries were a prefix of the right ones.
      #expect(Array(ordinary.entries).starts(with: streamed.entries), "\(name)")
      let parsed = Result {
        try TOCParser.parse(pulling: XMLOf(path).pull, limits: XARReader.Limits()) { _, _ in }
      }
      #expect(throws: TOCParser.CannotStream.self, "\(name)") { try parsed.get() }
    }
  }

  @Test(arguments: HostilePackage.all)
  func neverConfirmsWhatTheOrdinaryReaderRefuses(hostile: HostilePackage) throws {
    let dir = try TemporaryDirectory()
    let path = dir.appending(hostile.fileName)
    try hostile.make(path)
    guard (try? FileDescriptor.open(reading: path).read(count: 4, at: 0)) == Array("xar!".utf8) else { return }
    try Self.check(path, hostile.name)
  }

  /// Many entries (several batches), nested folders, compressed data: streamed and confirmed,
  /// with the ordinary reader's entries.
  @Test func aLargeTreeStreamsInBatches() throws {
    let dir = try TemporaryDirectory()
    var nodes = RuleExample.baseNodes
    for i in 0..<3_000 {
      nodes.append(.file("Contents/d\(i % 7)/e\(i % 3)/f\(i).txt", "file \(i)\n"))
    }
    let path = dir.appending("many.pkg")
    try Data(ExamplePackages.xarBytes(nodes, compress: true)).write(to: URL(fileURLWithPath: path))
    let streamed = try Self.streamed(path)
    let ordinary = try XARReader(path: path)
    #expect(streamed.confirmed != nil)
    #expect(streamed.entries.count == ordinary.entries.count)
    #expect(streamed.entries == Array(ordinary.entries))
    try Self.check(path, "many")
  }

  /// A field of a folder after its first child: streamed, the folder was taken at its first
  /// child without it. Both readers refuse it, so no reader sees another entry than the next.
  @Test func aFieldAfterAChildIsRefusedEitherWay() throws {
    let dir = try TemporaryDirectory()
    let path = dir.appending("late.pkg")
    let toc = CraftedXAR.document(
      "<file id=\"1\"><name>Contents</name><type>directory</type><file id=\"2\"><name>a</name><type>directory</type></file><mode>0700</mode></file>"
    )
    try CraftedXAR(toc: toc).write(to: path)
    #expect(throws: XARError.fieldAfterChildren(path: "Contents")) { try XARReader(path: path) }
    let streamed = try Self.streamed(path)
    #expect(streamed.confirmed == nil)
    try Self.check(path, "late field")
  }

  /// Data regions that overlap are found only when the whole TOC is known: the entries before
  /// them were handed out, and the whole is not confirmed.
  @Test func overlappingDataIsRefusedAtTheEnd() throws {
    let dir = try TemporaryDirectory()
    let path = dir.appending("overlap.pkg")
    var heap: [UInt8] = []
    var files = ""
    for i in 0..<600 {
      let bytes = Array("file \(i)\n".utf8)
      files += "<file id=\"\(i + 1)\"><name>f\(i)</name><type>file</type>"
      files += CraftedXAR.dataElement(stored: bytes, plain: bytes, offset: 20 + heap.count) + "</file>"
      heap += bytes
    }
    // The last file claims the first one's bytes.
    let first = Array("file 0\n".utf8)
    files += "<file id=\"999\"><name>again</name><type>file</type>"
    files += CraftedXAR.dataElement(stored: first, plain: first, offset: 20) + "</file>"
    try CraftedXAR(toc: CraftedXAR.document(files), heap: heap).write(to: path)
    #expect(throws: XARError.self) { try XARReader(path: path) }
    let streamed = try Self.streamed(path)
    #expect(streamed.entries.count >= 256)
    #expect(streamed.confirmed == nil)
  }
}

/// The reader's check that no two files share heap bytes, whose one pass covers data laid out
/// in TOC order and whose sort covers the rest.
@Suite struct DataRegionTests {
  static func archive(offsets: [Int], lengths: [Int], in dir: TemporaryDirectory) throws -> String {
    let path = dir.appending("regions-\(offsets).pkg")
    // The heap ends at the last byte a region references: bytes after it are refused.
    let end = zip(offsets, lengths).map { $0 + $1 }.max() ?? 20
    let heap = [UInt8](repeating: 0x61, count: max(0, end - 20))
    var files = ""
    for (i, (offset, length)) in zip(offsets, lengths).enumerated() {
      let bytes = [UInt8](repeating: 0x61, count: length)
      files += "<file id=\"\(i + 1)\"><name>f\(i)</name><type>file</type>"
      files += CraftedXAR.dataElement(stored: bytes, plain: bytes, offset: offset) + "</file>"
    }
    try CraftedXAR(toc: CraftedXAR.document(files), heap: heap).write(to: path)
    return path
  }

  @Test func disjointRegionsAreAcceptedInTOCOrderOrNot() throws {
    let dir = try TemporaryDirectory()
    for offsets in [[20, 30, 40], [40, 20, 30], [30, 40, 20]] {
      let reader = try XARReader(path: Self.archive(offsets: offsets, lengths: [10, 10, 10], in: dir))
      #expect(reader.entries.count == 3, "\(offsets)")
    }
  }

  @Test func overlappingRegionsAreRefusedInTOCOrderOrNot() throws {
    let dir = try TemporaryDirectory()
    // The third: a file inside the TOC checksum's bytes (heap offsets 0..<20).
    for offsets in [[20, 25, 40], [40, 20, 25], [20, 40, 21], [20, 30, 10]] {
      #expect(throws: XARError.self, "\(offsets)") {
        try XARReader(path: Self.archive(offsets: offsets, lengths: [10, 10, 10], in: dir))
      }
    }
  }
}

/// The TOC XML of an archive, pulled in pieces (for calling the parser directly).
private final class XMLOf {
  let xml: [UInt8]
  var position = 0
  init(_ path: String) throws { xml = try XARReader(path: path).tocXML }
  func pull(_ out: UnsafeMutableRawBufferPointer) -> Int {
    let n = min(out.count, xml.count - position)
    xml.withUnsafeBytes { out.copyMemory(from: UnsafeRawBufferPointer(rebasing: $0[position..<(position + n)])) }
    position += n
    return n
  }
}

/// Unpack while the TOC is parsed must give what unpacking after the parse gives: the same
/// findings, the same files, the same refusals, for every hostile package and for packages the
/// streaming parser gives up on.
@Suite struct StreamingUnpackTests {
  /// Unpacks `package` both ways, each into a folder of its own; returns both results and trees.
  static func both(_ package: String, in dir: TemporaryDirectory) throws -> [(
    findings: [Finding], output: Bool, tree: [String: SnapshotNode]?
  )] {
    try [true, false].map { whileParsing in
      var options = Unpack.Options()
      options.whileParsing = whileParsing
      let destination = dir.appending(whileParsing ? "streamed" : "ordinary")
      let result = try Unpack.run(package: package, destination: destination, options: options)
      // Inode numbers differ between two unpacks; everything else must not.
      let tree =
        result.output == nil
        ? nil
        : try snapshot(destination).mapValues { node in
          var node = node
          node.inode = 0
          return node
        }
      return (result.inspection.findings, result.output != nil, tree)
    }
  }

  @Test(arguments: HostilePackage.all)
  func theSameVerdictAndFilesEitherWay(hostile: HostilePackage) throws {
    let dir = try TemporaryDirectory()
    let package = dir.appending(hostile.fileName)
    try hostile.make(package)
    let results = try Self.both(package, in: dir)
    #expect(results[0].findings == results[1].findings, "\(hostile.name)")
    #expect(results[0].output == results[1].output, "\(hostile.name)")
    #expect(results[0].tree == results[1].tree, "\(hostile.name)")
    // Nothing else is left beside the package and the outputs (no staging folder).
    let left = try FileManager.default.contentsOfDirectory(atPath: dir.path).sorted()
    #expect(
      left == ([hostile.fileName] + (results[0].output ? ["ordinary", "streamed"] : [])).sorted(), "\(hostile.name)")
  }

  /// What `validate` reports of a plain XAR it reads while the TOC is parsed is what the
  /// ordinary reader gives (every hostile package; each one names what it tests).
  @Test(arguments: HostilePackage.all)
  func validateGivesTheOrdinaryVerdict(hostile: HostilePackage) throws {
    let dir = try TemporaryDirectory()
    let package = dir.appending(hostile.fileName)
    try hostile.make(package)
    let validated = try Validation.run(path: package, options: ValidationOptions(), recordEntries: true)
    let source = try PackageOpener.open(.path(package), .inspection())
    let inspector = PackageInspector(context: RuleContext(packageFileName: hostile.fileName))
    inspector.recordEntries = true
    let ordinary = try inspector.run(source)
    #expect(validated.findings == ordinary.findings, "\(hostile.name)")
    #expect(validated.format == ordinary.format, "\(hostile.name)")
    #expect(validated.entries == ordinary.entries, "\(hostile.name)")
    #expect(validated.contentSize == ordinary.contentSize, "\(hostile.name)")
    #expect(validated.integrityFailed == ordinary.integrityFailed, "\(hostile.name)")
  }

  /// The findings and entries of `path` read while its TOC is parsed, the caller decoding each
  /// file itself until the TOC's end and the decode threads after it (what validate asks for
  /// on two processors, forced here whatever the machine has); nil for a file the streaming
  /// source does not read.
  static func readDecodingOnTheCaller(_ path: String, name: String) throws -> InspectionResult? {
    var policy = ReadPolicy.rules()
    policy.decodeThreads = 2
    policy.decodeAheadUpTo = ReadPolicy.partsLimitForChecking
    guard let source = PackageOpener.streamed(path, policy) else { return nil }
    source.prefetch = true
    source.decodeOnCallerWhileParsing = true
    let inspector = PackageInspector(context: RuleContext(packageFileName: name))
    inspector.recordEntries = true
    return try inspector.run(source)
  }

  static func ordinary(_ path: String, name: String) throws -> InspectionResult {
    let inspector = PackageInspector(context: RuleContext(packageFileName: name))
    inspector.recordEntries = true
    return try inspector.run(try PackageOpener.open(.path(path), .inspection()))
  }

  @Test(arguments: HostilePackage.all)
  func decodingOnTheCallerWhileParsingGivesTheOrdinaryVerdict(hostile: HostilePackage) throws {
    let dir = try TemporaryDirectory()
    let package = dir.appending(hostile.fileName)
    try hostile.make(package)
    guard let streamed = try Self.readDecodingOnTheCaller(package, name: hostile.fileName) else { return }
    let ordinary = try Self.ordinary(package, name: hostile.fileName)
    #expect(streamed.findings == ordinary.findings, "\(hostile.name)")
    #expect(streamed.entries == ordinary.entries, "\(hostile.name)")
    #expect(streamed.integrityFailed == ordinary.integrityFailed, "\(hostile.name)")
  }

  /// A TOC of 20,000 entries, parsed long after the first files are read, with damaged data in
  /// a file near its start, or near its end: whichever thread decodes it, it is reported as the
  /// ordinary reader reports it (the first damaged file ends the reading).
  @Test(arguments: ["f3.txt", "f19990.txt"])
  func aLargeTreeDecodedOnTheCallerThenByTheWorkers(damaged: String) throws {
    let dir = try TemporaryDirectory()
    var nodes = RuleExample.baseNodes
    for i in 0..<20_000 { nodes.append(.file("Contents/d\(i % 50)/f\(i).txt", "file \(i) of the tree\n")) }
    var bytes = ExamplePackages.xarBytes(nodes, compress: true)
    let path = dir.appending("many.pkg")
    try Data(bytes).write(to: URL(fileURLWithPath: path))
    let reader = try XARReader(path: path)
    let entry = try #require(reader.entries.first { $0.path.hasSuffix("/" + damaged) })
    let data = try #require(entry.data)
    bytes[Int(reader.header.heapStart + data.offset + data.length / 2)] ^= 0x55
    try Data(bytes).write(to: URL(fileURLWithPath: path))
    let streamed = try #require(try Self.readDecodingOnTheCaller(path, name: "many.pkg"))
    let ordinary = try Self.ordinary(path, name: "many.pkg")
    #expect(streamed.findings == ordinary.findings)
    #expect(streamed.entries == ordinary.entries)
    let integrity = ordinary.findings.filter { $0.ruleID == "archive-integrity" }
    #expect(integrity.count == 1 && integrity.first?.path?.hasSuffix("/" + damaged) == true, "\(ordinary.findings)")
  }

  /// A damaged file read by a decode thread or by the caller itself (with `--jobs 1`, or while a
  /// TOC is parsed on two processors) gives the same findings: the bytes it delivers before its
  /// failure, which the head rules judge, do not depend on who reads it. A Mach-O head over
  /// 64 KiB of text, its zlib check or its body damaged: the caller, reading 256 KiB at a time,
  /// used to get nothing before the failure and the decode thread its first 64 KiB, so only one
  /// of them reported the executable.
  @Test(arguments: [(100_000, "check"), (300_000, "check"), (100_000, "body"), (40_000, "check")])
  func aDamagedFileGivesTheSameFindingsWhoeverDecodesIt(size: Int, damage: String) throws {
    let dir = try TemporaryDirectory()
    let head: [UInt8] = [0xCF, 0xFA, 0xED, 0xFE, 0x07, 0x00, 0x00, 0x01] + [UInt8](repeating: 0, count: 24)
    let text = Array(String(repeating: "some text ", count: size / 10).utf8)
    let nodes = RuleExample.baseNodes + [.file("Contents/tool.png", bytes: head + text)]
    var bytes = ExamplePackages.xarBytes(nodes, compress: true)
    let path = dir.appending("damaged.pkg")
    try Data(bytes).write(to: URL(fileURLWithPath: path))
    let reader = try XARReader(path: path)
    let data = try #require(reader.entries.first { $0.path == "Contents/tool.png" }?.data)
    let at = reader.header.heapStart + data.offset + (damage == "check" ? data.length - 1 : data.length * 3 / 4)
    bytes[Int(at)] ^= 0x5A
    try Data(bytes).write(to: URL(fileURLWithPath: path))

    func findings(prefetch: Bool) throws -> [Finding] {
      var policy = ReadPolicy.inspection()
      policy.decodeThreads = 2
      policy.decodeAheadUpTo = ReadPolicy.partsLimitForChecking
      let source = try #require(try PackageOpener.open(.path(path), policy) as? XARPackageSource)
      source.prefetch = prefetch
      return try PackageInspector(context: RuleContext(packageFileName: "damaged.pkg")).run(source).findings
    }
    let byWorkers = try findings(prefetch: true)
    #expect(byWorkers.contains { $0.ruleID == "archive-integrity" }, "\(byWorkers)")
    #expect(try findings(prefetch: false) == byWorkers)
    #expect(try #require(try Self.readDecodingOnTheCaller(path, name: "damaged.pkg")).findings == byWorkers)
    // What the head rules saw: the executable, where more than 64 KiB came before the failure.
    #expect(byWorkers.contains { $0.ruleID == "no-executable" } == (size > 64 << 10), "\(byWorkers)")
  }

  /// A flat package is left to the ordinary reader before any entry reaches the rules: its TOC
  /// has no ContentInfo.plist at the root, so the streaming source is never made (it used to
  /// hand out the outer entries before the payload, and the rules ran on them twice). The
  /// ordinary reader unpacks the payload's content.
  @Test func aFlatPackageIsLeftToTheOrdinaryReaderBeforeItsPayload() throws {
    let dir = try TemporaryDirectory()
    let path = dir.appending("flat.pkg")
    try HostilePackage.flat("valid flat package", "none").make(path)
    #expect(PackageOpener.streamed(path) == nil)
    let result = try Unpack.run(package: path, destination: dir.appending("out"), options: Unpack.Options())
    #expect(result.output != nil, "\(result.inspection.findings)")
    #expect(FileManager.default.fileExists(atPath: dir.appending("out/Contents/readme.txt")))
    #expect(!FileManager.default.fileExists(atPath: dir.appending("out/content.pkg")))
  }

  /// However the flat package's TOC spells `Payload` (a character reference, a CDATA section,
  /// a comment or an element inside the name, base64), it is still left to the ordinary
  /// reader: the TOC byte scan that lets a plain XAR stream before its plist says "may" for
  /// each, and the content unpacked is the payload's.
  @Test(arguments: [
    "Pay&#108;oad", "Pay<![CDATA[lo]]>ad", "Pay<!-- x -->load", "Pay<i/>load", "Pay<?p q?>load",
  ])
  func aFlatPackageWhosePayloadNameIsSpelledOtherwiseIsStillFlat(spelling: String) throws {
    let dir = try TemporaryDirectory()
    let path = dir.appending("flat.pkg")
    try HostilePackage.flat("spelled flat package", "none", payloadName: "<name>\(spelling)</name>").make(path)
    #expect(try XARReader(path: path).entries.map(\.path).contains("content.pkg/Payload"))
    #expect(PackageOpener.streamed(path) == nil)
    let result = try Unpack.run(package: path, destination: dir.appending("out"), options: Unpack.Options())
    #expect(result.output != nil, "\(result.inspection.findings)")
    #expect(FileManager.default.fileExists(atPath: dir.appending("out/Contents/readme.txt")))
    #expect(!FileManager.default.fileExists(atPath: dir.appending("out/Distribution")))
  }

  /// A plain XAR whose TOC holds no `Payload` is read as it streams even without a plist at
  /// its root, which it used to wait for to the TOC's end (bsdtar writes the plist last): the
  /// TOC's bytes show that no flat package is possible. The verdict is the ordinary reader's.
  @Test func aTOCThatCannotNameAPayloadStreamsWithoutWaitingForThePlist() throws {
    let dir = try TemporaryDirectory()
    var nodes = RuleExample.baseNodes.filter { $0.path != "ContentInfo.plist" }
    for i in 0..<600 { nodes.append(.file("Contents/d\(i % 4)/f\(i).txt", "file \(i)\n")) }
    let package = dir.appending("p.pkg")
    try Data(ExamplePackages.xarBytes(nodes, compress: true)).write(to: URL(fileURLWithPath: package))
    let streamed = try #require(PackageOpener.streamed(package))
    let inspector = PackageInspector(context: RuleContext(packageFileName: "p.pkg"))
    let viaStream = try inspector.run(streamed)
    let ordinary = try inspector.run(try PackageOpener.open(.path(package), .inspection()))
    #expect(viaStream.findings == ordinary.findings)
    #expect(viaStream.findings.contains { $0.ruleID == "content-info" })
    #expect(viaStream.entries == ordinary.entries)
    #expect(streamed.confirmed())
  }

  /// bsdtar's order for `-C DIR .` (the plist after everything in `Contents`): the package
  /// streams, and validate gives the ordinary reader's verdict.
  @Test func bsdtarsOrderStreams() throws {
    let dir = try TemporaryDirectory()
    let tree = dir.appending("tree")
    var nodes = RuleExample.baseNodes
    for i in 0..<600 { nodes.append(.file("Contents/d\(i % 4)/f\(i).txt", "file \(i)\n")) }
    _ = try ExamplePackages.writeFolder(nodes, at: tree)
    let package = dir.appending("b.pkg")
    try bsdtar(["--format", "xar", "-cf", package, "-C", tree, "."])
    let order = try XARReader(path: package).entries.map(\.path)
    #expect(order.last == "ContentInfo.plist", "bsdtar's order: \(order.suffix(2))")
    let streamed = try #require(PackageOpener.streamed(package))
    let inspector = PackageInspector(context: RuleContext(packageFileName: "b.pkg"))
    let viaStream = try inspector.run(streamed)
    let ordinary = try inspector.run(try PackageOpener.open(.path(package), .inspection()))
    #expect(viaStream.findings == ordinary.findings)
    #expect(viaStream.entries == ordinary.entries)
  }

  /// A valid package of many files, and the same with a hard link (the streaming parser gives
  /// up on it at the end, and the entries after those handed out come from the TOC read whole).
  @Test(arguments: ["plain", "hard link"])
  func validPackagesUnpackTheSame(variant: String) throws {
    let dir = try TemporaryDirectory()
    var nodes = RuleExample.baseNodes
    for i in 0..<1_500 { nodes.append(.file("Contents/d\(i % 5)/f\(i).txt", "file \(i)\n")) }
    if variant == "hard link" {
      nodes.append(RuleExample.Node("Contents/link.txt", .hardLink("Contents/d0/f0.txt")))
    }
    let bytes = ExamplePackages.xarBytes(nodes, compress: true)
    let package = dir.appending("p.pkg")
    try Data(bytes).write(to: URL(fileURLWithPath: package))
    let streamed = try #require(PackageOpener.streamed(package))
    try streamed.forEachEntry { _, _ in }
    #expect(streamed.confirmed() == (variant == "plain"))
    let results = try Self.both(package, in: dir)
    #expect(results[0].output && results[1].output)
    #expect(results[0].findings == results[1].findings)
    let (a, b) = (results[0].tree ?? [:], results[1].tree ?? [:])
    let differing = Set(a.keys).union(b.keys).filter { a[$0] != b[$0] }.sorted().prefix(3)
    #expect(differing.isEmpty, "\(Array(differing))")
    #expect(a.count > 1_500)
    #expect(a["Contents/d3/f1503.txt"] == nil && a["Contents/d3/f1498.txt"]?.bytes == Array("file 1498\n".utf8))
  }
}

/// Counts, by package file name, how many times the rules were made for a run and how many
/// entries they were shown: what each rule sees when `validate` reads a package.
final class CountingRule: Rule {
  static let description = RuleDescription(
    id: "test-counting", name: "Counts", category: .limits, summary: "Counts the entries shown.",
    rationale: "A test's probe.", severity: .warning, triggering: [], nonTriggering: [])
  static let counts = Locked<[String: (made: Int, inspected: Int)]>([:])
  let key: String

  init(context: RuleContext) {
    key = context.packageFileName ?? ""
    Self.counts.withLock { $0[key, default: (made: 0, inspected: 0)].made += 1 }
  }

  func inspect(_ inspected: InspectedEntry, into findings: inout [Finding]) {
    Self.counts.withLock { $0[key, default: (made: 0, inspected: 0)].inspected += 1 }
  }
}

/// No rule runs twice on one input: a plain XAR is read once, as its TOC streams, whatever the
/// TOC turns out to be (refused at the end, a hard link the parser does not stream).
@Suite struct RulesRunOnceTests {
  /// The rules made and the entries shown when `validate` reads `package` (named uniquely).
  static func counted(_ package: String) throws -> (made: Int, inspected: Int, result: InspectionResult) {
    let result = try Validation.run(
      path: package, options: ValidationOptions(), rules: RuleCatalog.all + [CountingRule.self])
    let counts = CountingRule.counts.withLock { $0[Paths.name(of: package)] } ?? (made: 0, inspected: 0)
    return (counts.made, counts.inspected, result)
  }

  @Test(arguments: HostilePackage.all)
  func everyEntryIsShownToTheRulesOnce(hostile: HostilePackage) throws {
    let dir = try TemporaryDirectory()
    let package = dir.appending("\(UUID().uuidString)-\(hostile.fileName)")
    try hostile.make(package)
    let (made, inspected, result) = try Self.counted(package)
    #expect(made <= 1, "\(hostile.name)")
    // (A plain XAR: a flat package's entries are its payload's too.)
    if let reader = try? XARReader(path: package), reader.entries.contains(where: { $0.path == ContentInfo.fileName }) {
      #expect(inspected <= reader.entries.count, "\(hostile.name)")
    }
    // Not weakened by the probe: the rule the case names is still reported.
    #expect(result.findings.contains { $0.ruleID == hostile.ruleID }, "\(hostile.name)")
  }

  /// A hard link: the parser stops streaming at it; the entries after those handed out come
  /// from the TOC read whole, and every entry reaches the rules exactly once.
  @Test func aHardLinkIsReadOnce() throws {
    let dir = try TemporaryDirectory()
    var nodes = RuleExample.baseNodes
    for i in 0..<400 { nodes.append(.file("Contents/d\(i % 5)/f\(i).txt", "file \(i)\n")) }
    nodes.append(RuleExample.Node("Contents/link.txt", .hardLink("Contents/d0/f0.txt")))
    nodes.append(.file("Contents/z/last.txt", "after the link\n"))
    let package = dir.appending("\(UUID().uuidString).pkg")
    try Data(ExamplePackages.xarBytes(nodes, compress: true)).write(to: URL(fileURLWithPath: package))
    let entries = try XARReader(path: package).entries.count
    let (made, inspected, result) = try Self.counted(package)
    #expect(made == 1)
    #expect(inspected == entries)
    #expect(result.entryCount == entries)
    #expect(!result.integrityFailed, "\(result.findings)")
  }

  /// A TOC whose closing check fails (its checksum): the entries were shown to the rules as
  /// they streamed, once, and the verdict is the ordinary reader's (a file that is not a package).
  @Test func aTOCRefusedAtTheEndIsReadOnce() throws {
    let dir = try TemporaryDirectory()
    var nodes = RuleExample.baseNodes
    for i in 0..<300 { nodes.append(.file("Contents/f\(i).txt", "file \(i)\n")) }
    var bytes = ExamplePackages.xarBytes(nodes, compress: true)
    // The TOC's checksum is the heap's first bytes.
    let headerSize = Int(bytes[4]) << 8 | Int(bytes[5])
    let tocLength = bytes[8..<16].reduce(0) { $0 << 8 | Int($1) }
    bytes[headerSize + tocLength] ^= 0xFF
    let package = dir.appending("\(UUID().uuidString).pkg")
    try Data(bytes).write(to: URL(fileURLWithPath: package))
    #expect(throws: XARError.self) { try XARReader(path: package) }
    let (made, _, result) = try Self.counted(package)
    #expect(made == 1)
    #expect(result.format == .unknown)
    #expect(result.entryCount == 0)
    #expect(result.findings.map(\.ruleID) == ["archive-integrity"])
    #expect(result.skippedRules["test-counting"] == "the file is not a package")
    // The pass gives the verdict as its result, as the ordinary reader's pass over the file
    // gives it (it ran again over an unreadable source before).
    #expect(result.indexRefused)
    let ordinary = try PackageInspector(
      context: RuleContext(packageFileName: Paths.name(of: package)), rules: RuleCatalog.all + [CountingRule.self]
    ).run(try PackageOpener.open(.path(package), .inspection()))
    #expect(!ordinary.indexRefused)
    #expect(ordinary.findings == result.findings)
    #expect(ordinary.skippedRules == result.skippedRules)
    #expect(ordinary.packageSize == result.packageSize && ordinary.location == result.location)
    // info says what the ordinary reader made of it: not a package, no checksum style.
    let info = try PackageInfo.run(path: package, includeFiles: true)
    #expect(info.unreadable && info.files == [] && info.format == "unknown")
    #expect(info.checksumStyle == "none")
  }
}

/// Every pass over a streamed XAR starts again from its first entry, as every other source's does.
@Suite struct StreamingPassTests {
  @Test(arguments: [false, true])
  func aSecondPassGivesEveryEntryAgain(hardLink: Bool) throws {
    let dir = try TemporaryDirectory()
    var nodes = RuleExample.baseNodes
    for i in 0..<600 { nodes.append(.file("Contents/d\(i % 3)/f\(i).txt", "file \(i)\n")) }
    if hardLink { nodes.append(RuleExample.Node("Contents/link.txt", .hardLink("Contents/d0/f0.txt"))) }
    let package = dir.appending("p.pkg")
    try Data(ExamplePackages.xarBytes(nodes, compress: true)).write(to: URL(fileURLWithPath: package))
    let ordinary = try XARReader(path: package).entries.map(\.path)
    let source = try #require(PackageOpener.streamed(package))
    for pass in 0..<2 {
      var paths: [String] = []
      var bytes = 0
      try source.forEachEntry { entry, data in
        paths.append(entry.path)
        guard let data else { return }
        var buffer = [UInt8](repeating: 0, count: 4096)
        while case let n = try buffer.withUnsafeMutableBytes({ try data.read(into: $0) }), n > 0 { bytes += n }
      }
      #expect(paths == ordinary, "pass \(pass)")
      #expect(bytes > 600 * 6, "pass \(pass)")
    }
    #expect(source.index?.refusal?() == nil)
  }
}

extension PackageOpener {
  /// The streaming source `path` opens as under `policy` (the rules' by default); nil when the
  /// opener gives it to another reader (not a plain XAR, a flat package, a header it refuses).
  static func streamed(_ path: String, _ policy: ReadPolicy = .rules()) -> StreamingXARPackageSource? {
    (try? open(.path(path), policy)) as? StreamingXARPackageSource
  }
}
