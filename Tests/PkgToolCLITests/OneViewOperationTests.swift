import Foundation
import HostedContent
import TestSupport
import Testing
import XAR

/// One view per command: what a command checks is what it reads and writes. The package is
/// opened once (strace counts the opens of the real binary), every byte decoded counts against
/// `--max-size` whether it is written or dropped, a reading stopped at the limit is never
/// "valid", what a command derives counts too, nothing leaves `cat` before it is verified, and
/// every message escapes control characters.
@Suite struct OneViewOperationTests {
  // MARK: - Helpers

  /// True when strace can trace a child here (it needs ptrace; scripts/bootstrap.sh installs it).
  static let straceWorks: Bool = {
    guard FileManager.default.isExecutableFile(atPath: "/usr/bin/strace") else { return false }
    return (try? runProcess("/usr/bin/strace", ["-f", "-qq", "-o", "/dev/null", "/bin/true"]).status) == 0
  }()

  /// Runs the real binary under strace, tracing `calls`; returns its result and the trace.
  static func traced(_ calls: String, _ arguments: [String]) throws -> (ProcessResult, [String]) {
    let scratch = try TemporaryDirectory("pkgtool-strace")
    let log = scratch.appending("trace")
    let result = try runProcess(
      "/usr/bin/strace", ["-f", "-qq", "-s", "0", "-o", log, "-e", "trace=\(calls)", pkgtoolBinary] + arguments)
    let lines = String(decoding: try readFile(log), as: UTF8.self).split(separator: "\n").map(String.init)
    return (result, lines)
  }

  /// How many times the traced process opened a path ending in `name`.
  static func opens(of name: String, in trace: [String]) -> Int {
    trace.filter { ($0.contains("open") && $0.contains("/\(name)\"")) }.count
  }

  /// The bytes the traced process wrote with write-family calls (to any descriptor).
  static func bytesWritten(in trace: [String]) -> UInt64 {
    trace.reduce(0) { sum, line in
      guard line.contains("write("), let equals = line.range(of: " = ", options: .backwards) else { return sum }
      return sum + (UInt64(line[equals.upperBound...].prefix { $0.isNumber }) ?? 0)
    }
  }

  typealias Node = RuleExample.Node
  static let base = RuleExample.baseNodes

  /// A small valid package with a text file; its path.
  static func package(in dir: TemporaryDirectory, name: String = "one-view-1.0.pkg", nodes: [Node] = []) throws
    -> String
  {
    let path = dir.appending(name)
    let content: [Node] = nodes.isEmpty ? [.file("Contents/a.txt", String(repeating: "text ", count: 2000))] : nodes
    try Data(ExamplePackages.xarBytes(base + content, compress: true)).write(to: URL(fileURLWithPath: path))
    return path
  }

  /// A signed catalog listing `package`; returns (catalog, public key).
  static func catalog(for package: String, in dir: TemporaryDirectory) throws -> (String, String) {
    let key = dir.appending("key")
    try #require(try pkgtool(["keygen", "-o", key, "-q"]).status == 0)
    let catalog = dir.appending("catalog.json")
    let published = try pkgtool([
      "publish", package, "--key", key, "--base-url", "https://cdn.example.com/c", "-o", catalog, "-q",
    ])
    try #require(published.status == 0, "\(published.stderr)")
    return (catalog, key + ".pub")
  }

  // MARK: - 11, 17: open once

  @Test(.enabled(if: straceWorks)) func installUnpackAndCheckOpenThePackageOnce() throws {
    let dir = try TemporaryDirectory()
    let package = try Self.package(in: dir)
    let (catalog, publicKey) = try Self.catalog(for: package, in: dir)
    let docs = dir.appending("docs")
    try FileManager.default.createDirectory(atPath: docs, withIntermediateDirectories: true)
    let runs: [[String]] = [
      ["install", package, "--into", docs, "--catalog", catalog, "--public-key", publicKey, "-q"],
      ["unpack", package, "-o", dir.appending("out-catalog"), "--catalog", catalog, "--public-key", publicKey, "-q"],
      ["unpack", package, "-o", dir.appending("out-plain"), "-q"],
      ["validate", package, "-q"],
      ["info", package],
      ["cat", package, "Contents/a.txt"],
    ]
    for arguments in runs {
      let (result, trace) = try Self.traced("open,openat,openat2", arguments)
      #expect(result.status == 0, "\(arguments[0]): \(result.stderr)")
      #expect(
        Self.opens(of: "one-view-1.0.pkg", in: trace) == 1,
        "\(arguments.joined(separator: " ")) opened the package \(Self.opens(of: "one-view-1.0.pkg", in: trace)) times")
    }
  }

  @Test(.enabled(if: straceWorks)) func publishValidatesAndHashesOneOpenFile() throws {
    let dir = try TemporaryDirectory()
    let package = try Self.package(in: dir)
    let key = dir.appending("key")
    try #require(try pkgtool(["keygen", "-o", key, "-q"]).status == 0)
    let (result, trace) = try Self.traced(
      "open,openat,openat2",
      ["publish", package, "--key", key, "--base-url", "https://cdn.example.com/c", "-o", dir.appending("c.json")])
    #expect(result.status == 0, "\(result.stderr)")
    #expect(Self.opens(of: "one-view-1.0.pkg", in: trace) == 1)
  }

  /// A zip is read through libarchive: it too goes through the one descriptor.
  @Test(.enabled(if: straceWorks)) func aZipIsOpenedOnceToo() throws {
    let dir = try TemporaryDirectory()
    let zip = dir.appending("one-view-1.0.zip")
    try ExamplePackages.writeZip(Self.base + [.file("Contents/a.txt", "text")], to: zip)
    let docs = dir.appending("docs")
    try FileManager.default.createDirectory(atPath: docs, withIntermediateDirectories: true)
    for arguments in [["install", zip, "--into", docs, "-q"], ["unpack", zip, "-o", dir.appending("out"), "-q"]] {
      let (result, trace) = try Self.traced("open,openat,openat2", arguments)
      #expect(result.status == 0, "\(arguments[0]): \(result.stderr)")
      #expect(Self.opens(of: "one-view-1.0.zip", in: trace) == 1, "\(arguments[0])")
    }
  }

  // MARK: - 12: dropped bytes count

  /// Entries the sink refuses (`..` in their paths), each a deflate bomb of zeros.
  static func refusedBombs(count: Int, each: Int) -> [Node] {
    (0..<count).map { Node.file("Contents/../bomb-\($0).bin", bytes: [UInt8](repeating: 0, count: each)) }
  }

  @Test func unpackAndInstallStopWhereValidateStopsOnRefusedEntries() throws {
    let dir = try TemporaryDirectory()
    let package = try Self.package(in: dir, nodes: Self.refusedBombs(count: 8, each: 4_000_000))
    let docs = dir.appending("docs")
    try FileManager.default.createDirectory(atPath: docs, withIntermediateDirectories: true)
    let limit = "1000000"
    let validated = try pkgtool(["validate", package, "--max-size", limit, "--reporter", "json"])
    #expect(validated.stdout.contains("\"size-limit\""))
    for arguments in [
      ["unpack", package, "-o", dir.appending("out"), "--max-size", limit, "--json"],
      ["unpack", package, "-o", dir.appending("out-k"), "--max-size", limit, "--json", "--keep-going"],
      ["install", package, "--into", docs, "--max-size", limit, "--json"],
    ] {
      let result = try pkgtool(arguments)
      #expect(result.status == 1, "\(arguments.joined(separator: " ")): \(result.stderr)")
      #expect(
        result.stdout.contains("\"size-limit\"") && result.stdout.contains("reading stopped there"),
        "\(arguments.joined(separator: " ")) read past the limit: \(result.stdout)")
    }
  }

  /// Files a rule flags are skipped by --keep-going and drained: the same budget.
  @Test func keepGoingSkippedEntriesCountAgainstTheLimit() throws {
    let dir = try TemporaryDirectory()
    let script = Array("#!/bin/sh\n".utf8) + [UInt8](repeating: 0x20, count: 4_000_000)
    let nodes: [Node] = (0..<8).map { Node.file("Contents/tool-\($0).sh", bytes: script) }
    let package = try Self.package(in: dir, nodes: nodes)
    let result = try pkgtool([
      "unpack", package, "-o", dir.appending("out"), "--max-size", "1000000", "--keep-going", "--json",
    ])
    #expect(result.status == 1)
    #expect(result.stdout.contains("reading stopped there"), "\(result.stdout)")
  }

  // MARK: - 13: terminal safety

  @Test func catsErrorForASymlinkEscapesItsTarget() throws {
    let dir = try TemporaryDirectory()
    // XML cannot carry an escape: a zip can.
    let package = dir.appending("one-view-1.0.zip")
    try ExamplePackages.writeZip(
      Self.base + [.file("Contents/a.txt", "a"), .symlink("Contents/link", "a\u{1B}]0;pwned\u{07}.txt")], to: package)
    let result = try pkgtool(["cat", package, "Contents/link"])
    #expect(result.status == 2)
    #expect(result.stderr.contains("is a symlink"))
    #expect(!result.stderr.unicodeScalars.contains { $0.value == 0x1B || $0.value == 0x07 }, "\(result.stderr)")
  }

  /// Runs `pkgtool arguments` on a pseudo-terminal; returns everything it showed there.
  static func onTerminal(_ arguments: [String]) throws -> (output: [UInt8], status: Int32) {
    let script = """
      import os, pty, sys
      pid, fd = pty.fork()
      if pid == 0:
          os.execv(sys.argv[1], sys.argv[1:])
      out = b''
      while True:
          try:
              d = os.read(fd, 65536)
          except OSError:
              break
          if not d:
              break
          out += d
      _, status = os.waitpid(pid, 0)
      sys.stdout.write(out.hex() + ' ' + str(os.waitstatus_to_exitcode(status)))
      """
    let result = try runProcess("/usr/bin/env", ["python3", "-c", script, pkgtoolBinary] + arguments)
    let parts = result.stdout.split(separator: " ")
    let hex = Array(parts.first ?? "")
    var bytes: [UInt8] = []
    var i = 0
    while i + 1 < hex.count {
      bytes.append(UInt8(String(hex[i...i + 1]), radix: 16) ?? 0)
      i += 2
    }
    return (bytes, Int32(parts.last ?? "") ?? -1)
  }

  @Test func catToATerminalChecksEveryChunk() throws {
    let dir = try TemporaryDirectory()
    // Plain text past the first 256 KiB chunk, then an escape sequence.
    let text = String(repeating: "plain text line\n", count: 40_000) + "\u{1B}]0;pwned\u{07}\n"
    let package = try Self.package(in: dir, nodes: [.file("Contents/late.txt", text)])
    let (output, status) = try Self.onTerminal(["cat", package, "Contents/late.txt"])
    #expect(status == 2)
    #expect(!output.contains(0x1B), "an escape sequence reached the terminal")
    #expect(!output.contains(0x07))
    // Checked before writing: nothing of the entry was shown.
    #expect(!String(decoding: output, as: UTF8.self).contains("plain text line"))
  }

  // MARK: - 15: never valid about what was not read

  /// An asset-pack folder (from export) with a large file, then an executable past the limit.
  @Test func anAssetPackFolderReadOnlyUpToTheLimitIsNotValid() throws {
    let dir = try TemporaryDirectory()
    let package = try Self.package(in: dir, nodes: [.file("Contents/a.txt", "a")])
    let pack = dir.appending("Pack")
    let exported = try pkgtool(["export", "background-assets", package, "-o", pack, "-q"])
    try #require(exported.status == 0, "\(exported.stderr)")
    #expect(try pkgtool(["validate", pack, "-q"]).status == 0)
    try writeFile(pack + "/Contents/0-large.bin", [UInt8](repeating: 0x41, count: 2_000_000))
    try writeFile(pack + "/Contents/zz-tool", Array("#!/bin/sh\necho hi\n".utf8), mode: 0o755)
    let result = try pkgtool(["validate", pack, "--max-size", "1000000", "--reporter", "json"])
    #expect(result.status == 1, "\(result.stdout)")
    #expect(result.stdout.contains("\"size-limit\""))
  }

  /// A rule set without size-limit still reports the stop.
  @Test func aStopIsAnErrorWhateverTheRuleSet() throws {
    let dir = try TemporaryDirectory()
    let package = try Self.package(
      in: dir, nodes: [.file("Contents/big.bin", bytes: [UInt8](repeating: 7, count: 3_000_000))])
    let result = try Validation.run(
      path: package, options: ValidationOptions(maxSize: 1_000_000), rules: [ArchiveIntegrityRule.self])
    #expect(result.failed(strict: false))
    #expect(result.findings.contains { $0.ruleID == "size-limit" && $0.severity == .error })
  }

  // MARK: - 16: derived bytes count

  @Test(.enabled(if: straceWorks)) func exportCountsSymlinkCopiesAgainstTheLimit() throws {
    let dir = try TemporaryDirectory()
    let links: [Node] = (0..<30).map { .symlink("Contents/link-\($0).bin", "big.bin") }
    let package = try Self.package(
      in: dir, nodes: [.file("Contents/big.bin", bytes: [UInt8](repeating: 0, count: 1_000_000))] + links)
    let pack = dir.appending("Pack")
    let (result, trace) = try Self.traced(
      "write,pwrite64,writev,pwritev,pwritev2,copy_file_range,sendfile",
      ["export", "background-assets", package, "-o", pack, "--max-size", "10000000"])
    #expect(result.status == 1, "\(result.stdout)\(result.stderr)")
    #expect(result.stdout.contains("[size-limit]"), "\(result.stdout)")
    #expect(!FileManager.default.fileExists(atPath: pack))
    let written = Self.bytesWritten(in: trace)
    #expect(written <= 10_000_000, "export wrote \(written) bytes under a 10,000,000-byte limit")
  }

  // MARK: - 17: verify before emitting

  @Test func catWritesNothingOfATamperedEntry() throws {
    let dir = try TemporaryDirectory()
    let text = String(repeating: "genuine bytes ", count: 100)
    let path = dir.appending("tampered.pkg")
    var bytes = ExamplePackages.xarBytes(Self.base + [.file("Contents/t.txt", text)], compress: false)
    // The entry is stored as it is: change one byte of it in the heap.
    let needle = Array("genuine bytes genuine".utf8)
    let at = try #require(
      (0...(bytes.count - needle.count)).first { Array(bytes[$0..<($0 + needle.count)]) == needle })
    bytes[at] = UInt8(ascii: "G")
    try Data(bytes).write(to: URL(fileURLWithPath: path))
    let result = try pkgtool(["cat", path, "Contents/t.txt"])
    #expect(result.status != 0)
    #expect(result.stdout.isEmpty, "cat wrote \(result.stdout.utf8.count) bytes of a tampered entry")
    #expect(result.stderr.contains("checksum"))
  }

  /// A large entry is read twice (verify, then write): still whole and right.
  @Test func catOfALargeEntryIsWhole() throws {
    let dir = try TemporaryDirectory()
    var content = [UInt8](repeating: 0, count: (8 << 20) + 300_000)  // past PackageInfo.catInMemoryLimit
    for i in content.indices { content[i] = UInt8(truncatingIfNeeded: i &* 2_654_435_761 >> 7) }
    let package = try Self.package(in: dir, nodes: [.file("Contents/large.bin", bytes: content)])
    let out = dir.appending("out.bin")
    let result = try runProcess(
      "/bin/sh", ["-c", "\"$0\" cat \"$1\" Contents/large.bin > \"$2\"", pkgtoolBinary, package, out])
    #expect(result.status == 0, "\(result.stderr)")
    #expect(try readFile(out) == content)
  }
}
