import Foundation
import TestSupport
import Testing

/// docs/catalog.md's Swift client (Foundation and swift-crypto, no pkgtool library) is the file
/// the package builds as `catalog-client-example`, and it verifies what pkgtool signs and refuses
/// what it must.
@Suite struct CatalogClientExampleTests {
  static let source = repositoryRoot + "/Examples/CatalogClient/main.swift"
  /// Built beside pkgtool by `swift build` (and so by `swift test`).
  static let binary = URL(fileURLWithPath: pkgtoolBinary).deletingLastPathComponent()
    .appendingPathComponent("catalog-client-example").path

  @Test func theDocumentShowsTheFileTheTestsRun() throws {
    let code = String(decoding: try readFile(Self.source), as: UTF8.self)
    let document = String(decoding: try readFile(repositoryRoot + "/docs/catalog.md"), as: UTF8.self)
    #expect(
      document.contains("```swift\n" + code + "```\n"), "docs/catalog.md's client block differs from \(Self.source)")
  }

  @Test func itVerifiesWhatPkgtoolSignsAndRefusesTheRest() throws {
    let dir = try TemporaryDirectory()
    let project = dir.appending("P")
    #expect(try pkgtool(["init", project, "--product-id", "com.example.client"]).status == 0)
    let package = dir.appending("com.example.client-1.0.pkg")
    #expect(try pkgtool(["build", project, "-o", package, "-q"]).status == 0)
    for name in ["k", "other"] { #expect(try pkgtool(["keygen", "-o", dir.appending(name)]).status == 0) }
    let catalog = dir.appending("catalog.json")
    let publish = try pkgtool([
      "publish", package, "--key", dir.appending("k"), "--base-url", "https://cdn.example.com/c/", "-o", catalog,
    ])
    #expect(publish.status == 0, "\(publish.stderr)")

    let good = try runProcess(Self.binary, [catalog, dir.appending("k.pub")])
    #expect(good.status == 0, "\(good.stderr)")
    #expect(good.stdout == "com.example.client 1.0 https://cdn.example.com/c/com.example.client-1.0.pkg\n")

    let foreign = try runProcess(Self.binary, [catalog, dir.appending("other.pub")])
    #expect(foreign.status == 1)
    #expect(foreign.stderr.contains("no signature of this key verifies"))

    var bytes = String(decoding: try readFile(catalog), as: UTF8.self)
    bytes = bytes.replacingOccurrences(of: "https://cdn.example.com/c/", with: "https://evil.example.com/c/")
    let tampered = dir.appending("tampered.json")
    try writeFile(tampered, bytes)
    let changed = try runProcess(Self.binary, [tampered, dir.appending("k.pub")])
    #expect(changed.status == 1)
    #expect(changed.stderr.contains("no signature of this key verifies"))

    let expiring = dir.appending("expiring.json")
    #expect(
      try pkgtool([
        "publish", package, "--key", dir.appending("k"), "--base-url", "https://cdn.example.com/c/", "-o", expiring,
        "--expires-in", "1s",
      ]).status == 0)
    Thread.sleep(forTimeInterval: 2)
    let expired = try runProcess(Self.binary, [expiring, dir.appending("k.pub")])
    #expect(expired.status == 1)
    #expect(expired.stderr.contains("expired"), "\(expired.stderr)")
  }
}
