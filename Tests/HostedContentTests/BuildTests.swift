import Foundation
import HostedContent
import SystemIO
import TestSupport
import Testing
import XAR

@Suite struct BuildTests {
  /// A content project with text, a real PNG header, nested folders, an internal symlink.
  func makeProject(_ root: String, order: [Int] = [0, 1, 2, 3, 4], mode: Int = 0o644) throws {
    let files: [(String, [UInt8])] = [
      ("Contents/a.txt", Array(String(repeating: "alpha ", count: 300).utf8)),
      ("Contents/img/cover.png", [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + Array(repeating: 7, count: 2000)),
      ("Contents/levels/1.json", Array("{\"level\":1}".utf8)),
      ("Contents/levels/2.json", Array("{\"level\":2}".utf8)),
      ("Contents/z/deep/er.bin", Array(repeating: 0, count: 70_000)),
    ]
    try writeFile(
      root + "/ContentInfo.plist",
      ContentInfo(productIdentifier: "com.example.build", contentVersion: ContentVersion("1.0")!).encoded())
    for i in order { try writeFile(root + "/" + files[i].0, files[i].1, mode: mode) }
    try FileManager.default.createSymbolicLink(
      atPath: root + "/Contents/latest.json", withDestinationPath: "levels/2.json")
  }

  func build(_ dir: String, to output: String, _ change: (inout Build.Options) -> Void = { _ in }) throws
    -> Build.Result
  {
    var options = Build.Options()
    options.output = output
    change(&options)
    return try Build.run(directory: dir, options: options)
  }

  @Test func identicalBytesWhateverTimesModesAndOrder() throws {
    let dir = try TemporaryDirectory()
    try makeProject(dir.appending("one"))
    try makeProject(dir.appending("two"), order: [4, 2, 0, 3, 1], mode: 0o600)
    // Different times everywhere in the second tree.
    let enumerator = FileManager.default.enumerator(atPath: dir.appending("two"))!
    for case let path as String in enumerator {
      var times = [timespec(tv_sec: 1_234_567_890, tv_nsec: 0), timespec(tv_sec: 1_234_567_890, tv_nsec: 0)]
      utimensat(AT_FDCWD, dir.appending("two/" + path), &times, AT_SYMLINK_NOFOLLOW)
    }
    let a = try build(dir.appending("one"), to: dir.appending("a.pkg"))
    let b = try build(dir.appending("two"), to: dir.appending("b.pkg"))
    #expect(a.output != nil && b.output != nil)
    #expect(try readFile(dir.appending("a.pkg")) == (try readFile(dir.appending("b.pkg"))))
    #expect(a.sha256 == b.sha256)
  }

  @Test func sourceDateEpochIsWrittenAndChangesTheBytes() throws {
    let dir = try TemporaryDirectory()
    try makeProject(dir.appending("p"))
    _ = try build(dir.appending("p"), to: dir.appending("a.pkg"))
    _ = try build(dir.appending("p"), to: dir.appending("b.pkg")) { $0.sourceDateEpoch = 1_700_000_000 }
    #expect(try readFile(dir.appending("a.pkg")) != (try readFile(dir.appending("b.pkg"))))
    let reader = try XARReader(path: dir.appending("b.pkg"))
    #expect(reader.entries.allSatisfy { $0.mtime?.secondsSinceEpoch == 1_700_000_000 })
    #expect(reader.creationTime?.secondsSinceEpoch == 1_700_000_000)
    #expect(try Build.Options.sourceDateEpoch(fromEnvironment: "1700000000") == 1_700_000_000)
    #expect(throws: OperationError.self) { try Build.Options.sourceDateEpoch(fromEnvironment: "yesterday") }
  }

  @Test func compressedFormatsAreStoredTheRestDeflated() throws {
    let dir = try TemporaryDirectory()
    try makeProject(dir.appending("p"))
    _ = try build(dir.appending("p"), to: dir.appending("a.pkg"))
    let reader = try XARReader(path: dir.appending("a.pkg"))
    let byPath = Dictionary(uniqueKeysWithValues: reader.entries.map { ($0.path, $0) })
    #expect(byPath["Contents/img/cover.png"]?.data?.encoding == XAREncoding.none)
    #expect(byPath["Contents/a.txt"]?.data?.encoding == .gzip)
    #expect(byPath["Contents/latest.json"]?.kind == .symlink)
    #expect(byPath["Contents/a.txt"]?.mode == 0o644)
    #expect(byPath["Contents/levels"]?.mode == 0o755)
    #expect(byPath["Contents/a.txt"]?.uid == 0)
    let none = try build(dir.appending("p"), to: dir.appending("n.pkg")) { $0.compression = .none }
    #expect(none.output != nil)
    #expect(
      try XARReader(path: dir.appending("n.pkg")).entries.allSatisfy {
        ($0.data?.encoding ?? XAREncoding.none) == XAREncoding.none
      })
  }

  @Test func junkIsLeftOutAndListed() throws {
    let dir = try TemporaryDirectory()
    try makeProject(dir.appending("p"))
    for junk in [
      "Contents/.DS_Store", "Contents/._a.txt", "Contents/__MACOSX/x", "Contents/Thumbs.db", "Contents/.git/HEAD",
      "Contents/levels/.1.json.swp",
    ] {
      try writeFile(dir.appending("p/" + junk), "junk")
    }
    try writeFile(dir.appending("p/README.md"), "for authors")
    let result = try build(dir.appending("p"), to: dir.appending("a.pkg"))
    #expect(result.output != nil, "\(result.inspection.findings)")
    let paths = try XARReader(path: dir.appending("a.pkg")).entries.map(\.path)
    #expect(
      !paths.contains {
        $0.contains(".DS_Store") || $0.contains("._") || $0.contains("__MACOSX") || $0.contains("Thumbs")
          || $0.contains(".git") || $0.hasSuffix(".swp")
      })
    #expect(
      Set(result.leftOut.map(\.path)) == [
        "README.md", "Contents/.DS_Store", "Contents/._a.txt", "Contents/__MACOSX", "Contents/Thumbs.db",
        "Contents/.git", "Contents/levels/.1.json.swp",
      ])
  }

  @Test func hardLinksAreStoredAsFilesAndExecuteBitsCleared() throws {
    let dir = try TemporaryDirectory()
    try makeProject(dir.appending("p"))
    #expect(link(dir.appending("p/Contents/a.txt"), dir.appending("p/Contents/b.txt")) == 0)
    chmod(dir.appending("p/Contents/levels/1.json"), 0o755)
    let result = try build(dir.appending("p"), to: dir.appending("a.pkg"))
    #expect(result.output != nil, "\(result.inspection.findings)")
    let reader = try XARReader(path: dir.appending("a.pkg"))
    let b = try #require(reader.entries.first { $0.path == "Contents/b.txt" })
    #expect(b.kind == .file)
    #expect(try reader.readData(of: b) == Array(String(repeating: "alpha ", count: 300).utf8))
    #expect(reader.entries.first { $0.path == "Contents/levels/1.json" }?.mode == 0o644)
  }

  /// Each error stops the build: nothing at the output, the folder around it unchanged.
  @Test(arguments: [
    ("executable", "no-executable"), ("external symlink", "no-external-symlink"), ("fifo", "special-file"),
    ("bad plist", "content-info"), ("too large", "size-limit"), ("wrong product", "content-info"),
    ("extra root file", "layout"),
  ])
  func errorsWriteNothing(problem: String, ruleID: String) throws {
    let dir = try TemporaryDirectory()
    let project = dir.appending("p")
    try makeProject(project)
    var change: (inout Build.Options) -> Void = { _ in }
    switch problem {
    case "executable":
      try writeFile(project + "/Contents/tool.png", [0xCF, 0xFA, 0xED, 0xFE] + Array(repeating: 0, count: 28))
    case "external symlink":
      try FileManager.default.createSymbolicLink(atPath: project + "/Contents/etc", withDestinationPath: "/etc")
    case "fifo": #expect(mkfifo(project + "/Contents/pipe", 0o644) == 0)
    case "bad plist":
      try writeFile(
        project + "/ContentInfo.plist", "<plist><dict><key>ContentVersion</key><string>x.y</string></dict></plist>")
    case "too large": change = { $0.validation.maxSize = 1000 }
    case "wrong product": change = { $0.validation.productIdentifier = "com.example.other" }
    default:
      try FileManager.default.removeItem(atPath: project + "/Contents")
      try writeFile(project + "/Contents", "not a folder")
    }
    let out = dir.appending("out")
    try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: true)
    let result = try build(project, to: out + "/x.pkg", change)
    #expect(result.output == nil)
    #expect(
      result.inspection.findings.contains { $0.ruleID == ruleID && $0.severity == .error },
      "\(result.inspection.findings)")
    #expect(try FileManager.default.contentsOfDirectory(atPath: out).isEmpty, "nothing written, no temporary left")
  }

  @Test func refusesToOverwriteWithoutForce() throws {
    let dir = try TemporaryDirectory()
    try makeProject(dir.appending("p"))
    try writeFile(dir.appending("x.pkg"), "old")
    #expect(throws: OperationError.self) { try build(dir.appending("p"), to: dir.appending("x.pkg")) }
    #expect(try readFile(dir.appending("x.pkg")) == Array("old".utf8))
    let forced = try build(dir.appending("p"), to: dir.appending("x.pkg")) { $0.force = true }
    #expect(forced.output != nil)
    #expect(try XARReader(path: dir.appending("x.pkg")).entries.count > 5)
  }

  @Test func plainFolderNeedsFlagsAndGetsAPlist() throws {
    let dir = try TemporaryDirectory()
    try writeFile(dir.appending("assets/levels/1.json"), "{}")
    #expect(throws: OperationError.self) { try build(dir.appending("assets"), to: dir.appending("x.pkg")) }
    let result = try build(dir.appending("assets"), to: dir.appending("x.pkg")) {
      $0.productIdentifier = "com.example.assets"
      $0.contentVersion = "2.0.1"
    }
    #expect(result.output != nil)
    let reader = try XARReader(path: dir.appending("x.pkg"))
    #expect(
      reader.entries.map(\.path) == ["ContentInfo.plist", "Contents", "Contents/levels", "Contents/levels/1.json"])
    let info = try ContentInfo(decoding: try reader.readData(of: reader.entries[0]))
    #expect(info.productIdentifier == "com.example.assets")
    #expect(info.contentVersion.description == "2.0.1")
  }

  @Test func projectFlagsOverrideButKeepOtherKeys() throws {
    let dir = try TemporaryDirectory()
    try makeProject(dir.appending("p"))
    var info = try ContentInfo(decoding: try readFile(dir.appending("p/ContentInfo.plist")))
    _ = info
    try writeFile(
      dir.appending("p/ContentInfo.plist"), contentInfoPlist(extra: "<key>Folder</key><string>Ch1</string>"))
    let result = try build(dir.appending("p"), to: dir.appending("x.pkg")) { $0.contentVersion = "3.0" }
    #expect(result.output != nil)
    let reader = try XARReader(path: dir.appending("x.pkg"))
    info = try ContentInfo(decoding: try reader.readData(of: reader.entries[0]))
    #expect(info.contentVersion.description == "3.0")
    #expect(info.properties["Folder"] == .string("Ch1"))
    #expect(
      try ContentInfo(decoding: try readFile(dir.appending("p/ContentInfo.plist"))).contentVersion.description == "1.0",
      "the project is not changed")
  }

  func contentInfoPlist(extra: String) -> String {
    "<?xml version=\"1.0\"?><plist version=\"1.0\"><dict><key>ContentVersion</key><string>1.0</string><key>IAPProductIdentifier</key><string>com.example.build</string>\(extra)</dict></plist>"
  }

  @Test(arguments: ["book-chapter1", "book-chapter2", "level-pack"])
  func bsdtarExtractsEverySampleToItsSource(sample: String) throws {
    let dir = try TemporaryDirectory()
    let project = repositoryRoot + "/samples/" + sample
    let result = try build(project, to: dir.appending("s.pkg"))
    #expect(result.output != nil, "\(result.inspection.findings)")
    #expect(try Validation.run(path: dir.appending("s.pkg"), options: ValidationOptions()).findings.isEmpty)
    try FileManager.default.createDirectory(atPath: dir.appending("x"), withIntermediateDirectories: true)
    try bsdtar(["-x", "-f", dir.appending("s.pkg"), "-C", dir.appending("x")])
    let extracted = try snapshot(dir.appending("x"))
    let source = try snapshot(project).filter { $0.key == "ContentInfo.plist" || $0.key.hasPrefix("Contents") }
    #expect(Set(extracted.keys) == Set(source.keys))
    for (path, node) in source {
      #expect(extracted[path]?.bytes == node.bytes, "\(path)")
      #expect(extracted[path]?.linkTarget == node.linkTarget, "\(path)")
    }
  }

  @Test func zipDeliveryFormIsDeterministicAndReadableByBsdtar() throws {
    let dir = try TemporaryDirectory()
    try makeProject(dir.appending("p"))
    let a = try build(dir.appending("p"), to: dir.appending("a.zip")) { $0.format = .zip }
    _ = try build(dir.appending("p"), to: dir.appending("b.zip")) { $0.format = .zip }
    #expect(a.output != nil)
    #expect(try readFile(dir.appending("a.zip")) == (try readFile(dir.appending("b.zip"))))
    try FileManager.default.createDirectory(atPath: dir.appending("x"), withIntermediateDirectories: true)
    try bsdtar(["-x", "-f", dir.appending("a.zip"), "-C", dir.appending("x")])
    #expect(try readFile(dir.appending("x/Contents/a.txt")) == Array(String(repeating: "alpha ", count: 300).utf8))
    #expect(
      try FileManager.default.destinationOfSymbolicLink(atPath: dir.appending("x/Contents/latest.json"))
        == "levels/2.json")
    let validation = try Validation.run(path: dir.appending("a.zip"), options: ValidationOptions())
    #expect(validation.format == .zip)
    #expect(validation.findings.isEmpty, "\(validation.findings)")
  }

  @Test func dryRunWritesNothing() throws {
    let dir = try TemporaryDirectory()
    try makeProject(dir.appending("p"))
    let result = try build(dir.appending("p"), to: dir.appending("x.pkg")) { $0.dryRun = true }
    #expect(result.output == nil)
    #expect(result.entries.count == 12)
    #expect(!FileManager.default.fileExists(atPath: dir.appending("x.pkg")))
  }
}

@Suite struct ParallelAndFileSystemTests {
  /// Many files, some over the whole-file limit: every thread count gives the same bytes.
  @Test func anyNumberOfThreadsGivesTheSameBytes() throws {
    let dir = try TemporaryDirectory()
    let project = dir.appending("p")
    try writeFile(
      project + "/ContentInfo.plist",
      ContentInfo(productIdentifier: "com.example.threads", contentVersion: ContentVersion("1.0")!).encoded())
    var rng = SeededGenerator(seed: 3)
    for i in 0..<300 {
      let size = i % 50 == 0 ? 5_000_000 : Int.random(in: 0..<40_000, using: &rng)
      let bytes = (0..<size).map { UInt8(($0 * 31 + i) % 97) }
      try writeFile(project + "/Contents/d\(i % 7)/f\(i).txt", bytes)
    }
    var outputs: [[UInt8]] = []
    for jobs in [1, 2, 4] {
      var options = Build.Options()
      options.output = dir.appending("j\(jobs).pkg")
      options.jobs = jobs
      let result = try Build.run(directory: project, options: options)
      #expect(result.output != nil)
      outputs.append(try readFile(dir.appending("j\(jobs).pkg")))
    }
    #expect(outputs[0] == outputs[1])
    #expect(outputs[0] == outputs[2])
  }

  /// The header goes in front of the heap without copying where the file system allows it
  /// (ext4, XFS), and by a copy elsewhere (tmpfs): the bytes are the same.
  @Test(.enabled(if: TestEnvironment.hasDevShm, "needs a tmpfs at /dev/shm"))
  func insertedHeaderAndCopiedHeapGiveTheSameBytes() throws {
    let disk = try TemporaryDirectory()
    let shm = "/dev/shm/pkgtool-test-\(getpid())"
    try FileManager.default.createDirectory(atPath: shm, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: shm) }
    let spec = TreeSpec.random(seed: 21, entries: 60)
    for path in [disk.appending("a.xar"), shm + "/a.xar"] {
      let writer = try XARWriter(path: path)
      for (p, node) in spec.nodes {
        switch node {
        case .directory: try writer.addDirectory(p, attributes: .init(mode: 0o755))
        case .file(let bytes):
          try writer.addFile(p, attributes: .init(mode: 0o644), compression: .zlib(level: 5), bytes: bytes)
        case .symlink(let t): try writer.addSymlink(p, target: t, attributes: .init(mode: 0o755))
        case .hardLink(let t): try writer.addHardLink(p, to: t, attributes: .init(mode: 0o644))
        }
      }
      let summary = try writer.finish()
      #expect(summary.size == UInt64(try readFile(path).count))
      #expect(summary.sha256.hex == (try Build.sha256(of: FileDescriptor.open(reading: path))))
    }
    #expect(try readFile(disk.appending("a.xar")) == (try readFile(shm + "/a.xar")))
    // File data (after the 20-byte TOC checksum at the heap's start) starts on a 4096-byte boundary.
    let reader = try XARReader(path: disk.appending("a.xar"))
    #expect((reader.header.heapStart + 20) % 4096 == 0)
  }
}
