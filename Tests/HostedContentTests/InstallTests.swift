import Foundation
import HostedContent
import SystemIO
import TestSupport
import Testing
import XAR

@Suite struct InstallTests {
  /// A package of `com.example.install` at `version` whose one file says which version it is.
  func package(_ version: String, in dir: TemporaryDirectory, files: Int = 1) throws -> String {
    let project = dir.appending("p\(version)")
    try writeFile(
      project + "/ContentInfo.plist",
      ContentInfo(productIdentifier: "com.example.install", contentVersion: ContentVersion(version)!).encoded())
    for i in 0..<files { try writeFile(project + "/Contents/file\(i).txt", "version \(version) file \(i)\n") }
    var options = Build.Options()
    options.output = dir.appending("v\(version).pkg")
    let result = try Build.run(directory: project, options: options)
    return try #require(result.output)
  }

  func current(_ docs: String) throws -> String {
    try FileManager.default.destinationOfSymbolicLink(atPath: docs + "/com.example.install/current")
  }

  @Test func upgradeSwitchesCurrentAndDowngradeIsRefused() throws {
    let dir = try TemporaryDirectory()
    let docs = dir.appending("Documents")
    try FileManager.default.createDirectory(atPath: docs, withIntermediateDirectories: true)
    let v1 = try package("1.0", in: dir)
    let v2 = try package("2.0", in: dir)

    let first = try Install.run(package: v1, into: docs, options: Install.Options())
    #expect(first.action == .installed)
    #expect(try current(docs) == "1.0")
    #expect(try readFile(docs + "/com.example.install/current/file0.txt") == Array("version 1.0 file 0\n".utf8))

    let second = try Install.run(package: v2, into: docs, options: Install.Options())
    #expect(second.action == .installed)
    #expect(second.previous == ContentVersion("1.0"))
    #expect(try current(docs) == "2.0")
    #expect(try readFile(docs + "/com.example.install/current/file0.txt") == Array("version 2.0 file 0\n".utf8))

    let again = try Install.run(package: v2, into: docs, options: Install.Options())
    #expect(again.action == .alreadyCurrent)

    let down = try Install.run(package: v1, into: docs, options: Install.Options())
    #expect(down.action == .refusedDowngrade)
    #expect(try current(docs) == "2.0")

    var allow = Install.Options()
    allow.allowDowngrade = true
    #expect(try Install.run(package: v1, into: docs, options: allow).action == .installed)
    #expect(try current(docs) == "1.0")

    let productFolder = try DirectoryHandle(path: docs + "/com.example.install")
    let record = try #require(Install.readRecord(productFolder, ContentVersion("2.0")!))
    #expect(record.sha256 == (try Build.sha256(of: FileDescriptor.open(reading: v2))))
  }

  @Test func keepOneLeavesOnlyTheNewest() throws {
    let dir = try TemporaryDirectory()
    let docs = dir.appending("Documents")
    try FileManager.default.createDirectory(atPath: docs, withIntermediateDirectories: true)
    _ = try Install.run(package: try package("1.0", in: dir), into: docs, options: Install.Options())
    _ = try Install.run(package: try package("1.5", in: dir), into: docs, options: Install.Options())
    var keep = Install.Options()
    keep.keep = 1
    let result = try Install.run(package: try package("2.0", in: dir), into: docs, options: keep)
    #expect(Set(result.removed) == ["1.0", "1.5"])
    let names = try FileManager.default.contentsOfDirectory(atPath: docs + "/com.example.install").sorted()
    #expect(names == [".pkgtool", "2.0", "current"])
  }

  @Test func anInvalidPackageChangesNothing() throws {
    let dir = try TemporaryDirectory()
    let docs = dir.appending("Documents")
    try FileManager.default.createDirectory(atPath: docs, withIntermediateDirectories: true)
    _ = try Install.run(package: try package("1.0", in: dir), into: docs, options: Install.Options())
    let before = try snapshot(docs)
    let hostile = HostilePackage.all.first { $0.name == "escaping relative symlink" }!
    try hostile.make(dir.appending("bad.pkg"))
    let result = try Install.run(package: dir.appending("bad.pkg"), into: docs, options: Install.Options())
    #expect(result.action == .invalid)
    #expect(try snapshot(docs) == before)
  }

  /// `kill -9` at random moments of the real binary's install: `current` always names a
  /// complete version.
  @Test func killDuringInstallLeavesCurrentComplete() throws {
    let dir = try TemporaryDirectory()
    let docs = dir.appending("Documents")
    try FileManager.default.createDirectory(atPath: docs, withIntermediateDirectories: true)
    let v1 = try package("1.0", in: dir, files: 300)
    _ = try Install.run(package: v1, into: docs, options: Install.Options())
    var rng = SeededGenerator(seed: 5)
    for trial in 0..<8 {
      let version = "1.\(trial + 1)"
      let pkg = try package(version, in: dir, files: 300)
      let process = Process()
      process.executableURL = URL(fileURLWithPath: pkgtoolBinary)
      process.arguments = ["install", pkg, "--into", docs]
      process.standardOutput = FileHandle.nullDevice
      process.standardError = FileHandle.nullDevice
      try process.run()
      usleep(UInt32.random(in: 0..<60_000, using: &rng))
      kill(process.processIdentifier, SIGKILL)
      process.waitUntilExit()
      let target = try current(docs)
      let folder = docs + "/com.example.install/" + target
      let files = try FileManager.default.contentsOfDirectory(atPath: folder)
      #expect(files.count == 300, "trial \(trial): current -> \(target) has \(files.count) files")
      #expect(try readFile(folder + "/file299.txt") == Array("version \(target) file 299\n".utf8))
    }
  }
}

@Suite struct BumpInfoDiffTests {
  @Test(arguments: [
    (Bump.Change.raise(.last), "1.4.2", "1.4.3"), (.raise(.major), "1.4", "2.0"), (.raise(.minor), "1.4.2", "1.5.0"),
    (.raise(.patch), "1.4", "1.4.1"), (.set(ContentVersion("3.0")!, force: false), "1.4", "3.0"),
  ])
  func bumpsXMLAndBinaryKeepingKeysAndFormat(change: Bump.Change, from: String, to: String) throws {
    for format in [PropertyListFormat.xml, .binary] {
      let dir = try TemporaryDirectory()
      var plist = PropertyList.dictionary([
        ("Extra", .array([.integer(1), .boolean(true)])), ("ContentVersion", .string(from)),
        ("IAPProductIdentifier", .string("com.example.bump")), ("Folder", .string("Ch")),
      ])
      _ = plist
      try writeFile(dir.appending("p/ContentInfo.plist"), plist.encoded(as: format))
      let result = try Bump.run(path: dir.appending("p"), change: change)
      #expect(result.old.description == from)
      #expect(result.new.description == to)
      let bytes = try readFile(dir.appending("p/ContentInfo.plist"))
      let info = try ContentInfo(decoding: bytes)
      #expect(info.format == format)
      #expect(info.contentVersion.description == to)
      guard case .dictionary(let pairs) = info.properties else {
        Issue.record("not a dictionary")
        return
      }
      #expect(pairs.map(\.key) == ["Extra", "ContentVersion", "IAPProductIdentifier", "Folder"])
      #expect(info.properties["Extra"] == .array([.integer(1), .boolean(true)]))
      plist = info.properties
    }
  }

  @Test func setRefusesALowerVersionUnlessForced() throws {
    let dir = try TemporaryDirectory()
    try writeFile(
      dir.appending("ContentInfo.plist"),
      ContentInfo(productIdentifier: "com.x", contentVersion: ContentVersion("2.0")!).encoded())
    #expect(throws: Bump.NotGreater.self) {
      try Bump.run(path: dir.appending("ContentInfo.plist"), change: .set(ContentVersion("1.0")!, force: false))
    }
    #expect(try ContentInfo(decoding: readFile(dir.appending("ContentInfo.plist"))).contentVersion.description == "2.0")
    #expect(
      try Bump.run(path: dir.appending("ContentInfo.plist"), change: .set(ContentVersion("1.0")!, force: true)).new
        .description == "1.0")
  }

  /// The same content as XAR, flat package, zip and folder: the same facts.
  @Test func infoFieldsAgreeAcrossFormats() throws {
    let dir = try TemporaryDirectory()
    let project = repositoryRoot + "/samples/level-pack"
    let source = dir.appending("src")
    try FileManager.default.createDirectory(atPath: source, withIntermediateDirectories: true)
    try bsdtar(["-c", "-f", dir.appending("c.tar"), "-C", project, "ContentInfo.plist", "Contents"])
    try bsdtar(["-x", "-f", dir.appending("c.tar"), "-C", source])
    var options = Build.Options()
    options.output = dir.appending("a.pkg")
    _ = try Build.run(directory: project, options: options)
    try Forms.flatPackage(of: source, at: dir.appending("flat.pkg"))
    try Forms.zip(of: source, at: dir.appending("content.zip"))
    let infos =
      try ["a.pkg", "flat.pkg", "content.zip"].map { try PackageInfo.run(path: dir.appending($0), includeFiles: true) }
      + [try PackageInfo.run(path: source, includeFiles: true)]
    #expect(infos.map(\.format) == ["xar", "flat-package", "zip", "directory"])
    for info in infos {
      #expect(info.productIdentifier == "com.example.game.levelpack1")
      #expect(info.contentVersion == "2.1.0")
      #expect(info.fileCount == 11)
      #expect(info.contentSize == infos[0].contentSize)
      #expect(info.valid)
      let files = (info.files ?? []).filter { $0.kind == "file" }.map { "\($0.path) \($0.size) \($0.sha256 ?? "")" }
        .sorted()
      #expect(
        files
          == (infos[0].files ?? []).filter { $0.kind == "file" }.map { "\($0.path) \($0.size) \($0.sha256 ?? "")" }
          .sorted())
    }
    #expect(infos[0].checksumStyle == "sha1")
    #expect(infos[2].checksumStyle == "crc32")
    #expect(infos[0].sha256?.count == 64)
    // Compression is content → stored data, apart from the index's overhead.
    let percent = try #require(infos[0].storedPercent)
    #expect(percent > 0 && percent < 100)
    let stored = try #require(infos[0].storedSize)
    #expect(stored < infos[0].contentSize)
    #expect(try #require(infos[0].overheadSize) + stored == infos[0].packageSize)
  }

  @Test func diffFindsAddedRemovedAndChanged() throws {
    let dir = try TemporaryDirectory()
    func make(_ name: String, _ version: String, _ files: [String: String]) throws -> String {
      let project = dir.appending(name)
      try writeFile(
        project + "/ContentInfo.plist",
        ContentInfo(productIdentifier: "com.example.diff", contentVersion: ContentVersion(version)!).encoded())
      for (path, text) in files { try writeFile(project + "/Contents/" + path, text) }
      var options = Build.Options()
      options.output = dir.appending(name + ".pkg")
      return try #require(try Build.run(directory: project, options: options).output)
    }
    let old = try make("old", "1.0", ["same.txt": "same", "gone.txt": "bye", "edit.txt": "before"])
    let new = try make("new", "1.1", ["same.txt": "same", "added.txt": "hello!", "edit.txt": "after, longer"])
    let d = try PackageDiff.run(old: old, new: new)
    #expect(d.oldVersion == "1.0" && d.newVersion == "1.1")
    #expect(d.added.map(\.path) == ["Contents/added.txt"])
    #expect(d.removed.map(\.path) == ["Contents/gone.txt"])
    #expect(d.changed.map(\.path).contains("Contents/edit.txt"))
    #expect(d.changed.first { $0.path == "Contents/edit.txt" }?.what == ["content"])
    #expect(!d.changed.map(\.path).contains("Contents/same.txt"))
    #expect(d.sizeDelta == Int64(d.newContentSize) - Int64(d.oldContentSize))
  }
}

/// Install reads a plain XAR as its TOC streams, like unpack: a package whose TOC is refused at
/// its end is invalid, even when its plist alone would give an answer without unpacking.
@Suite struct InstallStreamingTests {
  /// Builds version `version` of `com.example.install`, then flips a byte of its TOC checksum
  /// (the heap's first bytes) when `damaged`.
  static func package(_ version: String, in dir: TemporaryDirectory, damaged: Bool, hardLink: Bool = false) throws
    -> String
  {
    var nodes: [RuleExample.Node] = [
      .file(
        ContentInfo.fileName,
        String(
          decoding: ContentInfo(productIdentifier: "com.example.install", contentVersion: ContentVersion(version)!)
            .encoded(), as: UTF8.self))
    ]
    for i in 0..<300 { nodes.append(.file("Contents/d\(i % 4)/f\(i).txt", "version \(version) file \(i)\n")) }
    if hardLink { nodes.append(RuleExample.Node("Contents/link.txt", .hardLink("Contents/d0/f0.txt"))) }
    var bytes = ExamplePackages.xarBytes(nodes, compress: true)
    if damaged {
      let headerSize = Int(bytes[4]) << 8 | Int(bytes[5])
      let tocLength = bytes[8..<16].reduce(0) { $0 << 8 | Int($1) }
      bytes[headerSize + tocLength] ^= 0xFF
    }
    let path = dir.appending("v\(version)\(damaged ? "-damaged" : "").pkg")
    try Data(bytes).write(to: URL(fileURLWithPath: path))
    return path
  }

  @Test func aDamagedTOCIsInvalidBeforeAnyAnswer() throws {
    let dir = try TemporaryDirectory()
    let docs = dir.appending("Documents")
    try FileManager.default.createDirectory(atPath: docs, withIntermediateDirectories: true)
    #expect(
      try Install.run(package: Self.package("2.0", in: dir, damaged: false), into: docs, options: Install.Options())
        .action == .installed)
    let before = try snapshot(docs)
    // A lower version (a downgrade) and a new one, both with a TOC whose checksum fails.
    for version in ["1.0", "3.0"] {
      let result = try Install.run(
        package: Self.package(version, in: dir, damaged: true), into: docs, options: Install.Options())
      #expect(result.action == .invalid, "\(version)")
      #expect(result.inspection?.findings.map(\.ruleID) == ["archive-integrity"], "\(version)")
      #expect(try snapshot(docs) == before, "\(version)")
    }
  }

  /// Nothing in DOCS is touched for a package whose TOC is refused once it is parsed whole:
  /// not the older versions `--keep` would prune (the TOC is refused here by `--max-entries`, for
  /// bytes an earlier install took), not a lock in an empty product folder, and a name in the way
  /// is no error of its own. Found by an attacker's look at the streamed install.
  @Test func nothingIsTouchedBeforeTheTOCStands() throws {
    let dir = try TemporaryDirectory()
    let docs = dir.appending("Documents")
    try FileManager.default.createDirectory(atPath: docs, withIntermediateDirectories: true)
    let v1 = try Self.package("1.0", in: dir, damaged: false)
    let v2 = try Self.package("2.0", in: dir, damaged: false)
    for package in [v1, v2] {
      #expect(try Install.run(package: package, into: docs, options: Install.Options()).action == .installed)
    }
    let before = try snapshot(docs)
    var options = Install.Options()
    options.keep = 1
    options.limits.maxEntries = 300
    let again = try Install.run(package: v2, into: docs, options: options)
    #expect(again.action == .invalid)
    #expect(again.removed.isEmpty)
    #expect(try snapshot(docs) == before)

    // A damaged package whose product name is taken by a file, or by an empty folder.
    let damaged = try Self.package("3.0", in: dir, damaged: true)
    for taken in ["file", "folder"] {
      let other = dir.appending("Other-\(taken)")
      try FileManager.default.createDirectory(atPath: other, withIntermediateDirectories: true)
      if taken == "file" {
        try writeFile(other + "/com.example.install", "not a folder")
      } else {
        try FileManager.default.createDirectory(
          atPath: other + "/com.example.install", withIntermediateDirectories: true)
      }
      let before = try snapshot(other)
      let result = try Install.run(package: damaged, into: other, options: Install.Options())
      #expect(result.action == .invalid, "\(taken)")
      #expect(try snapshot(other) == before, "\(taken)")
    }
  }

  /// A hard link stops the streaming parser; the rest of the entries come from the TOC read
  /// whole, and every file is installed.
  @Test func aPackageWithAHardLinkInstallsWhole() throws {
    let dir = try TemporaryDirectory()
    let docs = dir.appending("Documents")
    try FileManager.default.createDirectory(atPath: docs, withIntermediateDirectories: true)
    let result = try Install.run(
      package: Self.package("1.0", in: dir, damaged: false, hardLink: true), into: docs, options: Install.Options())
    #expect(result.action == .installed, "\(result.inspection?.findings ?? [])")
    for i in [0, 150, 299] {
      #expect(
        try readFile(docs + "/com.example.install/current/d\(i % 4)/f\(i).txt")
          == Array("version 1.0 file \(i)\n".utf8))
    }
    #expect(try readFile(docs + "/com.example.install/current/link.txt") == Array("version 1.0 file 0\n".utf8))
  }
}
