import Foundation
import HostedContent
import SystemIO
import TestSupport
import Testing
import XAR

@Suite struct HostileUnpackTests {
  @Test func theSuiteIsLargeAndCoversEveryRuleItNeeds() {
    #expect(HostilePackage.all.count >= 80)
    #expect(HostilePackage.edges.count >= 25)
    #expect(Set(HostilePackage.all.map(\.name)).count == HostilePackage.all.count)
  }

  /// A sandbox with a file to keep and the package in `inner/`; its snapshot before anything ran.
  static func sandbox(holding hostile: HostilePackage) throws -> (TemporaryDirectory, String, [String: SnapshotNode]) {
    let sandbox = try TemporaryDirectory("pkgtool-sandbox")
    try FileManager.default.createDirectory(
      atPath: sandbox.appending("inner/deeper"), withIntermediateDirectories: true)
    try writeFile(sandbox.appending("inner/keep.txt"), "untouched")
    let package = sandbox.appending("inner/" + hostile.fileName)
    try hostile.make(package)
    return (sandbox, package, try snapshot(sandbox.path))
  }

  @Test(arguments: HostilePackage.all)
  func validateReportsTheRuleAndUnpackLeavesNoTrace(hostile: HostilePackage) throws {
    let (sandbox, package, before) = try Self.sandbox(holding: hostile)

    let result = try Validation.run(path: package, options: ValidationOptions())
    #expect(
      result.findings.contains { $0.ruleID == hostile.ruleID && $0.severity == .error },
      "\(hostile.name): expected \(hostile.ruleID), got \(result.findings.map { "\($0.ruleID): \($0.message)" })")

    let destination = sandbox.appending("inner/deeper/out")
    let unpacked = try Unpack.run(package: package, destination: destination, options: Unpack.Options())
    #expect(unpacked.output == nil, "\(hostile.name) was unpacked")
    #expect(!FileManager.default.fileExists(atPath: destination))
    #expect(try snapshot(sandbox.path) == before, "\(hostile.name) changed the sandbox")
    #expect(!FileManager.default.fileExists(atPath: "/tmp/pkgtool-absolute-escape.txt"))
    #expect(!FileManager.default.fileExists(atPath: "/tmp/pkgtool-escape.txt"))
  }

  /// `unpack --keep-going` on every hostile package: whatever it extracts stays inside the
  /// destination and is safe on its own: regular 0644 files that are not executable code, 0755
  /// folders, symlinks that stay inside Contents/; nothing else in the sandbox changes. Run with
  /// one writer thread and with four (the buffered path, where a half-read file is dropped).
  @Test(arguments: HostilePackage.all, [1, 4])
  func keepGoingExtractsOnlySafeEntriesAndNothingOutside(hostile: HostilePackage, threads: Int) throws {
    let (sandbox, package, before) = try Self.sandbox(holding: hostile)
    var options = Unpack.Options()
    options.keepGoing = true
    options.threads = threads
    let destination = sandbox.appending("inner/deeper/out")
    _ = try? Unpack.run(package: package, destination: destination, options: options)
    let after = try snapshot(sandbox.path).filter { !$0.key.hasPrefix("inner/deeper/out") }
    #expect(after == before, "\(hostile.name) changed the sandbox outside the destination")
    #expect(!FileManager.default.fileExists(atPath: "/tmp/pkgtool-absolute-escape.txt"))
    #expect(!FileManager.default.fileExists(atPath: "/tmp/pkgtool-escape.txt"))
    guard FileManager.default.fileExists(atPath: destination) else { return }
    for (path, node) in try snapshot(destination) {
      switch node.kind {
      case .file:
        #expect(node.mode == 0o644, "\(hostile.name): \(path) mode \(String(node.mode, radix: 8))")
        #expect(
          FileSignature.executableKind(Array(node.bytes.prefix(4096))) == nil,
          "\(hostile.name): \(path) is executable code")
      case .directory:
        #expect(node.mode == 0o755, "\(hostile.name): \(path)")
      case .symlink:
        let target = node.linkTarget ?? "/"
        #expect(!target.hasPrefix("/"), "\(hostile.name): \(path) -> \(target)")
        var parts = path.split(separator: "/").dropLast().map(String.init)
        var escaped = false
        for part in target.split(separator: "/") where part != "." {
          if part == ".." {
            if parts.isEmpty { escaped = true } else { parts.removeLast() }
          } else {
            parts.append(String(part))
          }
        }
        #expect(!escaped && parts.first == "Contents", "\(hostile.name): \(path) -> \(target) leaves Contents/")
      case .other:
        Issue.record("\(hostile.name): \(path) is a special file")
      }
    }
  }

  @Test func forceKeepsTheOldFolderWhenThePackageIsBad() throws {
    let dir = try TemporaryDirectory()
    let out = dir.appending("out")
    try writeFile(out + "/old.txt", "previous content")
    let hostile = HostilePackage.all.first { $0.name == "escaping relative symlink" }!
    try hostile.make(dir.appending("bad.pkg"))
    var options = Unpack.Options()
    options.force = true
    let result = try Unpack.run(package: dir.appending("bad.pkg"), destination: out, options: options)
    #expect(result.output == nil)
    #expect(try readFile(out + "/old.txt") == Array("previous content".utf8))
    #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path).sorted() == ["bad.pkg", "out"])
  }

  @Test func staleStagingFoldersOfDeadRunsAreRemoved() throws {
    let dir = try TemporaryDirectory()
    // A pid that cannot be running (beyond pid_max on Linux).
    let stale = dir.appending(".out.pkgtool-unpack-99999999-abc")
    try writeFile(stale + "/Contents/half.txt", "half")
    try Data(ExamplePackages.xarBytes(RuleExample.baseNodes)).write(to: URL(fileURLWithPath: dir.appending("ok.pkg")))
    let result = try Unpack.run(
      package: dir.appending("ok.pkg"), destination: dir.appending("out"), options: Unpack.Options())
    #expect(result.output != nil)
    #expect(!FileManager.default.fileExists(atPath: stale))
  }
}

/// The same content as plain XAR (pkgtool's), flat package (productbuild's shape) and zip.
enum Forms {
  /// A flat package around `source`: Distribution, NAME.pkg/PackageInfo, and a gzip'd odc cpio
  /// Payload written by bsdtar, as productbuild --content lays it out.
  static func flatPackage(of source: String, at path: String) throws {
    let scratch = try TemporaryDirectory()
    let payload = scratch.appending("Payload")
    try bsdtar(["-c", "--format", "odc", "-z", "-f", payload, "-C", source, "."])
    let writer = try XARWriter(path: path)
    try writer.addFile(
      "Distribution", attributes: .init(mode: 0o644), compression: .zlib(level: 6),
      bytes: Array("<?xml version=\"1.0\"?><installer-gui-script minSpecVersion=\"1\"/>".utf8))
    try writer.addDirectory("content.pkg", attributes: .init(mode: 0o755))
    try writer.addFile(
      "content.pkg/PackageInfo", attributes: .init(mode: 0o644), compression: .zlib(level: 6),
      bytes: Array("<pkg-info/>".utf8))
    let file = try FileDescriptor.open(reading: payload)
    try writer.addFile("content.pkg/Payload", attributes: .init(mode: 0o644), compression: .none, data: file)
    try writer.finish()
  }

  static func zip(of source: String, at path: String) throws {
    try bsdtar(["-c", "--format", "zip", "-f", path, "-C", source, "ContentInfo.plist", "Contents"])
  }
}

@Suite struct FormatEquivalenceTests {
  /// A content folder with a few findings in it (a warning, an error) to compare across forms.
  func makeSource(_ dir: TemporaryDirectory) throws -> String {
    let source = dir.appending("src")
    try ExamplePackages.writeFolder(
      RuleExample.baseNodes + [
        .directory("Contents/levels"), .file("Contents/levels/1.json", "{\"a\":1}"),
        .file("Contents/.DS_Store", "junk"), .file("Contents/tool.dat", bytes: [0x7F, 0x45, 0x4C, 0x46, 2, 1, 1, 0]),
        .symlink("Contents/latest.json", "levels/1.json"),
      ], at: source)
    return source
  }

  @Test func flatPackageAndZipGiveTheSameFindingsAsTheFolder() throws {
    let dir = try TemporaryDirectory()
    let source = try makeSource(dir)
    try Forms.flatPackage(of: source, at: dir.appending("flat.pkg"))
    try Forms.zip(of: source, at: dir.appending("content.zip"))
    try bsdtar(["-c", "--format", "xar", "-f", dir.appending("bsd.pkg"), "-C", source, "ContentInfo.plist", "Contents"])
    func key(_ r: InspectionResult) -> Set<String> { Set(r.findings.map { "\($0.ruleID)|\($0.path ?? "")" }) }
    let folder = try Validation.run(path: source, options: ValidationOptions())
    #expect(key(folder) == ["junk-file|Contents/.DS_Store", "no-executable|Contents/tool.dat"])
    for package in ["flat.pkg", "content.zip", "bsd.pkg"] {
      let result = try Validation.run(path: dir.appending(package), options: ValidationOptions())
      #expect(key(result) == key(folder), "\(package): \(result.findings)")
      #expect(result.contentInfo?.productIdentifier == "com.example.sample")
    }
    #expect(try Validation.run(path: dir.appending("flat.pkg"), options: ValidationOptions()).format == .flatPackage)
    #expect(try Validation.run(path: dir.appending("content.zip"), options: ValidationOptions()).format == .zip)
  }

  @Test(arguments: ["book-chapter1", "book-chapter2", "level-pack"])
  func everyFormOfASampleUnpacksToItsSource(sample: String) throws {
    let dir = try TemporaryDirectory()
    let project = repositoryRoot + "/samples/" + sample
    // The content as it goes into packages: the plist and Contents/ only.
    let source = dir.appending("src")
    try FileManager.default.createDirectory(atPath: source, withIntermediateDirectories: true)
    try bsdtar(["-c", "-f", dir.appending("copy.tar"), "-C", project, "ContentInfo.plist", "Contents"])
    try bsdtar(["-x", "-f", dir.appending("copy.tar"), "-C", source])
    var options = Build.Options()
    options.output = dir.appending("built.pkg")
    _ = try Build.run(directory: project, options: options)
    try Forms.flatPackage(of: source, at: dir.appending("flat.pkg"))
    try Forms.zip(of: source, at: dir.appending("content.zip"))
    let expected = try snapshot(source)
    for package in ["built.pkg", "flat.pkg", "content.zip"] {
      let out = dir.appending("out-\(package)")
      let result = try Unpack.run(package: dir.appending(package), destination: out, options: Unpack.Options())
      #expect(result.output == out, "\(package): \(result.inspection.findings)")
      let actual = try snapshot(out)
      #expect(Set(actual.keys) == Set(expected.keys), "\(package)")
      for (path, node) in expected {
        #expect(actual[path]?.kind == node.kind, "\(package) \(path)")
        #expect(actual[path]?.bytes == node.bytes, "\(package) \(path)")
        #expect(actual[path]?.linkTarget == node.linkTarget, "\(package) \(path)")
        if node.kind == .file { #expect(actual[path]?.mode == 0o644) }
        if node.kind == .directory { #expect(actual[path]?.mode == 0o755) }
      }
    }
  }
}
