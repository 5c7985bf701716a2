import Dispatch
import Foundation
import HostedContent
import SystemIO
import TestSupport
import Testing
import XAR

/// Install must never leave `--into`: hostile product ids, concurrent installs, re-installs.
@Suite struct InstallHardeningTests {
  func plist(product: String, version: String) -> String {
    """
    <?xml version="1.0" encoding="UTF-8"?>
    <plist version="1.0"><dict><key>ContentVersion</key><string>\(version)</string>\
    <key>IAPProductIdentifier</key><string>\(product)</string></dict></plist>
    """
  }

  func hostilePackage(product: String, version: String = "1.0", at path: String) throws {
    let nodes: [RuleExample.Node] = [
      .file(ContentInfo.fileName, plist(product: product, version: version)),
      .directory("Contents"),
      .file("Contents/readme.txt", "x\n"),
    ]
    try Data(ExamplePackages.xarBytes(nodes)).write(to: URL(fileURLWithPath: path))
  }

  func package(
    _ version: String, product: String = "com.example.install", text: String? = nil, in dir: TemporaryDirectory
  ) throws -> String {
    let project = dir.appending("p-\(product)-\(version)-\(text?.count ?? 0)")
    try writeFile(
      project + "/ContentInfo.plist",
      ContentInfo(productIdentifier: product, contentVersion: ContentVersion(version)!).encoded())
    try writeFile(project + "/Contents/file.txt", text ?? "version \(version)\n")
    var options = Build.Options()
    options.output = dir.appending("\(product)-\(version)-\(text?.count ?? 0).pkg")
    return try #require(try Build.run(directory: project, options: options).output)
  }

  @Test(arguments: ["..", ".", ".hidden", "com..example", "com.example.", "../x", "com/example"])
  func aProductIdThatIsNotReverseDNSIsRefusedAndNothingOutsideDocsChanges(product: String) throws {
    let dir = try TemporaryDirectory()
    let outside = dir.appending("outside")
    let docs = outside + "/Documents"
    try FileManager.default.createDirectory(atPath: docs, withIntermediateDirectories: true)
    // What `..` would hit: a version folder and `current` beside DOCS.
    try writeFile(outside + "/1.0/keep.txt", "precious")
    try writeFile(docs + "/0.5/keep.txt", "precious too")
    let pkg = dir.appending("hostile.pkg")
    try hostilePackage(product: product, at: pkg)
    let before = try snapshot(dir.path)

    let validation = try Validation.run(path: pkg, options: ValidationOptions())
    #expect(
      validation.findings.contains { $0.ruleID == "content-info" && $0.severity == .error },
      "\(product): \(validation.findings)")

    var options = Install.Options()
    options.keep = 1
    let result = try Install.run(package: pkg, into: docs, options: options)
    #expect(result.action == .invalid)
    #expect(try snapshot(dir.path) == before)
  }

  @Test func aVersionFolderNameComesOnlyFromDigitsAndDots() throws {
    for bad in ["../1", "1.0/..", "1..0", ".1", "1.0.0.0", "1.a"] {
      #expect(ContentVersion(bad) == nil, "\(bad)")
    }
  }

  @Test func aSecondInstallWaitsForTheLockAndGivesUpWithOneClearError() throws {
    let dir = try TemporaryDirectory()
    let docs = dir.appending("Documents")
    try FileManager.default.createDirectory(atPath: docs + "/com.example.install", withIntermediateDirectories: true)
    let v1 = try package("1.0", in: dir)
    try FileManager.default.createDirectory(
      atPath: docs + "/com.example.install/.pkgtool", withIntermediateDirectories: true)
    do {
      let held = try FileLock(
        Install.lockFile, in: DirectoryHandle(path: docs + "/com.example.install/.pkgtool"), timeout: 0)
      var options = Install.Options()
      options.lockTimeout = 0.3
      #expect(throws: OperationError.self) { try Install.run(package: v1, into: docs, options: options) }
      #expect(!FileManager.default.fileExists(atPath: docs + "/com.example.install/1.0"))

      // The binary: exit 2 and one line.
      let cli = try pkgtool(["install", v1, "--into", docs, "--lock-timeout", "0.3"])
      #expect(cli.status == 2)
      #expect(cli.stderr.split(separator: "\n").count == 1)
      #expect(cli.stderr.contains("another pkgtool is working"))
      withExtendedLifetime(held) {}
    }

    // Released: the install goes through.
    #expect(try Install.run(package: v1, into: docs, options: Install.Options()).action == .installed)
  }

  @Test func twoInstallsAtOnceNeverLoseBothVersionsNorLeaveCurrentOnTheLowerOne() throws {
    let dir = try TemporaryDirectory()
    let v2 = try package("2.0", in: dir)
    let v3 = try package("3.0", in: dir)
    for round in 0..<6 {
      let docs = dir.appending("Documents\(round)")
      try FileManager.default.createDirectory(atPath: docs, withIntermediateDirectories: true)
      let group = DispatchGroup()
      let results = ResultBox()
      for pkg in round % 2 == 0 ? [v2, v3] : [v3, v2] {
        group.enter()
        DispatchQueue.global().async {
          let r = try? pkgtool(["install", pkg, "--into", docs, "--keep", "1"])
          results.append(r?.status ?? -1)
          group.leave()
        }
      }
      group.wait()
      let product = docs + "/com.example.install"
      // 3.0 always ends current: either 2.0 went first and 3.0 replaced it, or 3.0 went first
      // and 2.0 was refused as a downgrade (exit 1).
      #expect(
        try FileManager.default.destinationOfSymbolicLink(atPath: product + "/current") == "3.0", "round \(round)")
      #expect(try readFile(product + "/current/file.txt") == Array("version 3.0\n".utf8))
      let versions = try FileManager.default.contentsOfDirectory(atPath: product).filter {
        !$0.hasPrefix(".") && $0 != "current"
      }
      #expect(versions == ["3.0"], "round \(round): \(versions)")
      #expect(results.values.sorted().allSatisfy { $0 == 0 || $0 == 1 }, "\(results.values)")
    }
  }

  @Test func reinstallingASameVersionWithOtherBytesSwapsInOneStepAndSaysSo() throws {
    let dir = try TemporaryDirectory()
    let docs = dir.appending("Documents")
    try FileManager.default.createDirectory(atPath: docs, withIntermediateDirectories: true)
    let first = try package("1.0", text: "first bytes\n", in: dir)
    let second = try package("1.0", text: "second bytes, other\n", in: dir)
    #expect(try Install.run(package: first, into: docs, options: Install.Options()).action == .installed)
    let product = docs + "/com.example.install"
    // A reader that holds the version folder open keeps seeing a whole folder.
    let held = try DirectoryHandle(path: product + "/1.0")
    let result = try Install.run(package: second, into: docs, options: Install.Options())
    #expect(result.action == .replaced)
    #expect(result.replacedSHA256 == (try Build.sha256(of: FileDescriptor.open(reading: first))))
    #expect(try readFile(product + "/current/file.txt") == Array("second bytes, other\n".utf8))
    #expect(try FileManager.default.contentsOfDirectory(atPath: product).sorted() == [".pkgtool", "1.0", "current"])
    _ = held

    let cli = try pkgtool(["install", first, "--into", docs])
    #expect(cli.status == 0)
    #expect(cli.stderr.contains("warning") && cli.stderr.contains("other bytes"))
    #expect(try readFile(product + "/current/file.txt") == Array("first bytes\n".utf8))
  }
}

final class ResultBox: @unchecked Sendable {
  private let lock = NSLock()
  private var storage: [Int32] = []
  func append(_ value: Int32) {
    lock.lock()
    storage.append(value)
    lock.unlock()
  }
  var values: [Int32] {
    lock.lock()
    defer { lock.unlock() }
    return storage
  }
}
