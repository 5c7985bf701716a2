import Foundation
import HostedContent
import TestSupport
import Testing

/// The packaging tool stays light: `pkgtool` links no server package, and `pkgtool serve` is a
/// program of its own (`pkgtool-serve`) that pkgtool runs from beside itself, else from PATH.
@Suite struct CoreSplitTests {
  /// The names of the symbols the built `pkgtool` defines (nm), mangled.
  func symbols(of binary: String) throws -> [Substring] {
    let result = try runProcess("/usr/bin/env", ["nm", "--defined-only", "--format=just-symbols", binary])
    try #require(result.status == 0, "nm: \(result.stderr)")
    return result.stdout.split(separator: "\n")
  }

  @Test func theCoreBinaryLinksNoServerPackage() throws {
    let names = try symbols(of: pkgtoolBinary)
    // A Swift symbol starts with its module's name, its length first: $s10PkgToolCLI….
    func count(_ module: String) -> Int { names.filter { $0.hasPrefix("$s\(module.count)\(module)") }.count }
    // The binary is the real one: its own code is there.
    #expect(count("PkgToolCLI") > 100 && count("XAR") > 100 && count("HostedContent") > 1000)
    for module in [
      "NIOCore", "NIOPosix", "NIOHTTP1", "Hummingbird", "HummingbirdCore", "ServiceLifecycle", "X509", "SwiftASN1",
      "SQLiteNIO", "PostgresNIO", "Prometheus", "CoreMetrics", "NIOHTTPTypes",
      "ContentServer", "PurchaseProof",
    ] {
      #expect(count(module) == 0, "\(module): \(names.filter { $0.hasPrefix("$s\(module.count)\(module)") }.prefix(3))")
    }
  }

  /// A `pkgtool` with no `pkgtool-serve` beside it nor on PATH: `serve` says what to install,
  /// in one line, and exits 2; every other command works as before.
  @Test func serveWithoutTheServerProgramSaysWhatToInstall() throws {
    let folder = try TemporaryDirectory()
    let lone = folder.appending("bin/pkgtool")
    try FileManager.default.createDirectory(atPath: folder.appending("bin"), withIntermediateDirectories: true)
    try FileManager.default.copyItem(atPath: pkgtoolBinary, toPath: lone)
    let environment = ["PATH": "/usr/bin:/bin"]
    for arguments in [["serve", "--help"], ["serve", "--catalog", "c.json"], ["help", "serve"]] {
      let result = try runProcess(lone, arguments, in: folder.path, environment: environment)
      #expect(result.status == 2, "\(arguments): \(result.stderr)")
      #expect(result.stderr.hasPrefix("pkgtool: error: 'pkgtool serve' needs the server program 'pkgtool-serve'"))
      #expect(result.stderr.contains("bin/pkgtool' nor on PATH"), "\(result.stderr)")
      #expect(result.stderr.contains("scripts/install.sh"), "\(result.stderr)")
      #expect(result.stderr.split(separator: "\n").count == 1, "\(result.stderr)")
    }
    // storekit-test is the server program's too (it needs X.509): the same line, its own name.
    for arguments in [["storekit-test", "chain", "-o", "chain"], ["help", "storekit-test"]] {
      let result = try runProcess(lone, arguments, in: folder.path, environment: environment)
      #expect(result.status == 2, "\(arguments): \(result.stderr)")
      #expect(
        result.stderr.hasPrefix("pkgtool: error: 'pkgtool storekit-test' needs the server program 'pkgtool-serve'"),
        "\(result.stderr)")
      #expect(result.stderr.split(separator: "\n").count == 1, "\(result.stderr)")
    }
    #expect(!FileManager.default.fileExists(atPath: folder.appending("chain")))
    let version = try runProcess(lone, ["--version"], environment: environment)
    #expect(version.status == 0 && version.stdout == PkgTool.version + "\n")
    // Listed still: the root help names the command and where its options are.
    let help = try runProcess(lone, ["--help"], environment: environment)
    #expect(help.stdout.contains("serve") && help.stdout.contains("Serve a catalog's packages"))
  }

  /// With a `pkgtool-serve` on PATH (here a script standing in for it), `pkgtool serve` runs it
  /// with the arguments as given, in place of itself: its output and its exit code are the command's.
  @Test func serveRunsTheServerProgramFromPath() throws {
    let folder = try TemporaryDirectory()
    let bin = folder.appending("bin")
    let other = folder.appending("other")
    for dir in [bin, other] { try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true) }
    try FileManager.default.copyItem(atPath: pkgtoolBinary, toPath: bin + "/pkgtool")
    let stand = other + "/pkgtool-serve"
    try writeFile(stand, "#!/bin/sh\necho \"args: $*\"\nexit 7\n", mode: 0o755)
    let result = try runProcess(
      bin + "/pkgtool", ["serve", "--listen", "127.0.0.1:0", "a b"], environment: ["PATH": other + ":/usr/bin:/bin"])
    #expect(result.status == 7, "\(result.stderr)")
    #expect(result.stdout.hasSuffix("args: --listen 127.0.0.1:0 a b\n"), "\(result.stdout)")
    let help = try runProcess(bin + "/pkgtool", ["help", "serve"], environment: ["PATH": other + ":/usr/bin:/bin"])
    #expect(help.status == 7 && help.stdout.hasSuffix("args: --help\n"), "\(help.stdout)")
    // storekit-test runs the same program, its name first.
    let test = try runProcess(
      bin + "/pkgtool", ["storekit-test", "chain", "-o", "a b"], environment: ["PATH": other + ":/usr/bin:/bin"])
    #expect(test.status == 7 && test.stdout.hasSuffix("args: storekit-test chain -o a b\n"), "\(test.stdout)")
    let testHelp = try runProcess(
      bin + "/pkgtool", ["help", "storekit-test", "transaction"], environment: ["PATH": other + ":/usr/bin:/bin"])
    #expect(
      testHelp.status == 7 && testHelp.stdout.hasSuffix("args: storekit-test transaction --help\n"),
      "\(testHelp.stdout)")
    // What is not a program is passed over: a folder of that name, a file that may not be run.
    let blocking = folder.appending("blocking")
    try FileManager.default.createDirectory(atPath: blocking + "/pkgtool-serve", withIntermediateDirectories: true)
    let plain = folder.appending("plain")
    try FileManager.default.createDirectory(atPath: plain, withIntermediateDirectories: true)
    try writeFile(plain + "/pkgtool-serve", "#!/bin/sh\nexit 9\n", mode: 0o644)
    let past = try runProcess(
      bin + "/pkgtool", ["serve", "x"], environment: ["PATH": "\(blocking):\(plain):\(other):/usr/bin:/bin"])
    #expect(past.status == 7 && past.stdout.hasSuffix("args: x\n"), "\(past.stderr)")
  }
}
