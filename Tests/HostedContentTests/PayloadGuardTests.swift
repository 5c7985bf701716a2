import Foundation
import HostedContent
import Testing

@testable import TestSupport

/// The header guard in front of libarchive reads every payload that real writers make, in every
/// compression: it refuses only what the hostile cases hold.
@Suite struct PayloadGuardTests {
  static let formats = ["newc", "odc", "ustar", "pax", "gnutar"]
  static let compressions = ["", "gzip", "bzip2", "xz"]

  @Test(arguments: formats, compressions)
  func whatBsdtarWritesValidatesAndUnpacks(format: String, compression: String) throws {
    let scratch = try TemporaryDirectory()
    let source = scratch.appending("src")
    _ = try ExamplePackages.writeFolder(HostilePackage.base, at: source)
    // A long name (past ustar's 100 bytes) and a symlink, so long-name headers are written too.
    let deep = "Contents/" + String(repeating: "d", count: 120)
    try FileManager.default.createDirectory(atPath: source + "/" + deep, withIntermediateDirectories: true)
    try writeFile(source + "/" + deep + "/" + String(repeating: "f", count: 90) + ".txt", "long")
    try FileManager.default.createSymbolicLink(atPath: source + "/Contents/link", withDestinationPath: "a.txt")
    let tarPath = scratch.appending("payload")
    let result = try bsdtar(["-c", "--format", format, "-f", tarPath, "-C", source, "."])
    #expect(result.status == 0, "\(result.stderr)")
    var bytes = try readFile(tarPath)
    if !compression.isEmpty { bytes = try PayloadBytes.compress(bytes, compression) }
    let package = scratch.appending("flat.pkg")
    try HostilePackage.payload("\(format) \(compression)", "none") { [bytes] in bytes }.make(package)

    let report = try Validation.run(path: package, options: ValidationOptions())
    let errors = report.findings.filter { $0.severity == .error }
    #expect(errors.isEmpty, "\(format) \(compression): \(errors.map { "\($0.ruleID): \($0.message)" })")
    let out = scratch.appending("out")
    _ = try Unpack.run(package: package, destination: out, options: Unpack.Options())
    #expect(
      try String(contentsOfFile: out + "/" + deep + "/" + String(repeating: "f", count: 90) + ".txt", encoding: .utf8)
        == "long")
  }

  /// A cpio ends at its trailer: what follows (block padding, anything) is not read by libarchive
  /// and not judged by the guard.
  @Test func bytesAfterTheTrailerAreNotHeaders() throws {
    let e = PayloadBytes.self
    let cpio =
      e.newc(e.plistEntry) + e.newc("Contents", mode: 0o40755) + e.newcTrailer + Array("junk after the end".utf8)
    let scratch = try TemporaryDirectory()
    let package = scratch.appending("flat.pkg")
    try HostilePackage.payload("trailer", "none") { try e.gzip(cpio) }.make(package)
    let report = try Validation.run(path: package, options: ValidationOptions())
    #expect(!report.findings.contains { $0.ruleID == "archive-integrity" }, "\(report.findings.map(\.message))")
  }
}
