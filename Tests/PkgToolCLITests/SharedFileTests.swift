import Foundation
import HostedContent
import TestSupport
import Testing

/// Commands that change a shared file, run at the same time: none loses another's update.
@Suite struct SharedFileTests {
  /// Runs `commands` at once, each as its own pkgtool process; returns their results.
  func concurrently(_ commands: [[String]], in directory: String? = nil) throws -> [ProcessResult] {
    final class Box: @unchecked Sendable {
      var results: [ProcessResult?]
      let lock = NSLock()
      init(_ count: Int) { results = Array(repeating: nil, count: count) }
    }
    let box = Box(commands.count)
    DispatchQueue.concurrentPerform(iterations: commands.count) { i in
      let result = try? pkgtool(commands[i], in: directory)
      box.lock.lock()
      box.results[i] = result
      box.lock.unlock()
    }
    return box.results.map { $0! }
  }

  @Test func eightBumpsAtOnceGiveEightVersions() throws {
    let dir = try TemporaryDirectory()
    #expect(try pkgtool(["init", "B", "--product-id", "com.example.b"], in: dir.path).status == 0)
    let results = try concurrently(Array(repeating: ["bump", "B"], count: 8), in: dir.path)
    #expect(results.allSatisfy { $0.status == 0 }, "\(results.map(\.stderr))")
    let lines = Set(results.map { $0.stdout.trimmingCharacters(in: .whitespacesAndNewlines) })
    #expect(lines.count == 8, "\(lines)")
    let plist = try ContentInfo(decoding: try readFile(dir.appending("B/ContentInfo.plist")))
    #expect(plist.contentVersion.description == "1.8")
  }

  @Test func sixPublishesAtOnceKeepEveryProduct() throws {
    let dir = try TemporaryDirectory()
    #expect(try pkgtool(["keygen", "-o", dir.appending("k")]).status == 0)
    var commands: [[String]] = []
    for i in 0..<6 {
      let pkg = dir.appending("p\(i).pkg")
      var nodes = RuleExample.baseNodes
      nodes[0] = .file(
        ContentInfo.fileName,
        """
        <?xml version="1.0" encoding="UTF-8"?>
        <plist version="1.0"><dict><key>ContentVersion</key><string>1.0</string>\
        <key>IAPProductIdentifier</key><string>com.example.p\(i)</string></dict></plist>
        """)
      try Data(ExamplePackages.xarBytes(nodes)).write(to: URL(fileURLWithPath: pkg))
      commands.append([
        "publish", pkg, "--key", dir.appending("k"), "--base-url", "https://cdn.example.com/c", "-o",
        dir.appending("catalog.json"),
      ])
    }
    let results = try concurrently(commands)
    #expect(results.allSatisfy { $0.status == 0 }, "\(results.map(\.stderr))")
    let catalog = try CatalogFile.verify(
      contentsOf: dir.appending("catalog.json"),
      publicKey: try CatalogPublicKey(contentsOf: dir.appending("k.pub")))
    #expect(catalog.products.count == 6)
    #expect(catalog.sequence == 6)
    #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path).filter { $0.hasPrefix(".") }.isEmpty)
  }

  /// What a base URL may not carry into a signed, public catalog.
  @Test(arguments: [
    "https://user:secret@cdn.example.com/c", "https://cdn.example.com/c#v", "https://cdn.example.com/c?sig=1",
  ])
  func aBaseURLWithCredentialsQueryOrFragmentIsRefused(url: String) throws {
    let dir = try TemporaryDirectory()
    #expect(try pkgtool(["keygen", "-o", dir.appending("k")]).status == 0)
    let pkg = dir.appending("p.pkg")
    try Data(ExamplePackages.xarBytes(RuleExample.baseNodes)).write(to: URL(fileURLWithPath: pkg))
    let result = try pkgtool([
      "publish", pkg, "--key", dir.appending("k"), "--base-url", url, "-o", dir.appending("catalog.json"),
    ])
    #expect(result.status == 2, "\(result.stderr)")
    #expect(!result.stderr.contains("secret"), "\(result.stderr)")
    #expect(!FileManager.default.fileExists(atPath: dir.appending("catalog.json")))
  }
}
