import Foundation
import HostedContent
import TestSupport
import Testing
import XAR

/// One identity per file: the name says the form, the bytes agree, and every form pkgtool
/// writes goes through every command.
@Suite struct FormIdentityTests {
  @Test func theDeliveryZipRoundTripsThroughEveryCommand() throws {
    let dir = try TemporaryDirectory()
    let zip = dir.appending("level-pack.zip")
    let build = try pkgtool(["build", repositoryRoot + "/samples/level-pack", "--format", "zip", "-o", zip])
    #expect(build.status == 0, "\(build.stderr)")
    let validate = try pkgtool(["validate", zip])
    #expect(validate.status == 0, "\(validate.stdout)\(validate.stderr)")
    let unpack = try pkgtool(["unpack", zip, "-o", dir.appending("out")])
    #expect(unpack.status == 0, "\(unpack.stdout)\(unpack.stderr)")
    #expect(FileManager.default.fileExists(atPath: dir.appending("out/ContentInfo.plist")))
    try FileManager.default.createDirectory(atPath: dir.appending("Documents"), withIntermediateDirectories: true)
    let install = try pkgtool(["install", zip, "--into", dir.appending("Documents")])
    #expect(install.status == 0, "\(install.stdout)\(install.stderr)")
    // The same files as bsdtar extracts from the zip.
    try FileManager.default.createDirectory(atPath: dir.appending("bsdtar"), withIntermediateDirectories: true)
    try bsdtar(["-x", "-f", zip, "-C", dir.appending("bsdtar")])
    #expect(
      try snapshot(dir.appending("bsdtar/Contents")).keys.sorted()
        == (try snapshot(dir.appending("out/Contents")).keys.sorted()))
  }

  @Test func aTarOrZipNamedPkgIsRefusedByValidateUnpackAndInstall() throws {
    let dir = try TemporaryDirectory()
    try FileManager.default.createDirectory(atPath: dir.appending("Documents"), withIntermediateDirectories: true)
    try ExamplePackages.writeTar(RuleExample.baseNodes, to: dir.appending("t.pkg"))
    try ExamplePackages.writeZip(RuleExample.baseNodes, to: dir.appending("z.pkg"))
    for name in ["t.pkg", "z.pkg"] {
      let validate = try pkgtool(["validate", dir.appending(name)])
      #expect(validate.status == 1)
      #expect(validate.stdout.contains("package-form"), "\(validate.stdout)")
      let unpack = try pkgtool(["unpack", dir.appending(name), "-o", dir.appending("out")])
      #expect(unpack.status == 1)
      #expect(!FileManager.default.fileExists(atPath: dir.appending("out")))
      let install = try pkgtool(["install", dir.appending(name), "--into", dir.appending("Documents")])
      #expect(install.status == 1)
      #expect(try FileManager.default.contentsOfDirectory(atPath: dir.appending("Documents")).isEmpty)
    }
  }

  /// Apple's xar writes code 3 (SHA-256) and 4 (SHA-512) with the plain 28-byte header.
  @Test(arguments: [(XARChecksumAlgorithm.sha256, UInt32(3)), (.sha512, 4)])
  func applesHeaderChecksumCodesAreRead(algorithm: XARChecksumAlgorithm, code: UInt32) throws {
    let dir = try TemporaryDirectory()
    let toc = CraftedXAR.document("<file id=\"1\"><name>Contents</name><type>directory</type><mode>0755</mode></file>")
      .replacingOccurrences(
        of: "<checksum style=\"sha1\"><offset>0</offset><size>20</size>",
        with: "<checksum style=\"\(algorithm.styleName)\"><offset>0</offset><size>\(algorithm.digestSize)</size>")
    var x = CraftedXAR(toc: toc)
    x.checksumCode = code
    x.tocChecksum = algorithm
    try x.write(to: dir.appending("a.xar"))
    let reader = try XARReader(path: dir.appending("a.xar"))
    #expect(reader.header.checksumAlgorithm == algorithm)
    #expect(reader.entries.map(\.path) == ["Contents"])
  }
}
