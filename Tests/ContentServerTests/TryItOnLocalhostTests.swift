import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// docs/serve.md's "Try it on localhost", run as written: each ```sh block of the section is one
/// bash script (`set -euo pipefail`), in one folder holding a copy of the repository's
/// `samples/`, with the built `pkgtool` and `pkgtool-serve` first on PATH. The block that starts
/// `pkgtool serve` runs in the background until the end; the doc's port, 8080, is a free one
/// here. The core's DocumentedCommandTests leaves these blocks to this suite.
@Suite struct TryItOnLocalhostTests {
  static let section = "## Try it on localhost"

  /// The ```sh blocks of the section, each as its text (continuation lines as written).
  static func blocks() throws -> [String] {
    let text = String(decoding: try readFile(repositoryRoot + "/docs/serve.md"), as: UTF8.self)
    guard let start = text.range(of: "\n" + section + "\n") else { return [] }
    var rest = text[start.upperBound...]
    if let next = rest.range(of: "\n## ") { rest = rest[..<next.lowerBound] }
    var blocks: [String] = []
    var current: [String]?
    var fenced = false
    for line in rest.split(separator: "\n", omittingEmptySubsequences: false) {
      if line.hasPrefix("```") {
        if let lines = current { blocks.append(lines.joined(separator: "\n") + "\n") }
        current = !fenced && line == "```sh" ? [] : nil
        fenced.toggle()
        continue
      }
      current?.append(String(line))
    }
    return blocks
  }

  /// Whether `block` is the one that starts the gate.
  static func startsServe(_ block: String) -> Bool { block.hasPrefix("pkgtool serve ") }

  @Test func theSectionShowsTheWholePath() throws {
    let blocks = try Self.blocks()
    #expect(blocks.count == 4, "\(blocks)")
    #expect(blocks.filter(Self.startsServe).count == 1)
    let all = blocks.joined()
    for step in [
      "pkgtool build samples/book-chapter1", "pkgtool publish", "--base-url http://127.0.0.1:8080",
      "pkgtool storekit-test chain",
      "--environment Sandbox", "--root-certificate chain/root.pem", "--public-key", "pkgtool storekit-test transaction",
      "/v1/downloads", "pkgtool install", "pkgtool storekit-test notification --chain chain --type REFUND",
      "/v1/notifications",
    ] {
      #expect(all.contains(step), "the section lacks \(step)")
    }
  }

  @Test func theSectionRunsAsWritten() throws {
    let dir = try TemporaryDirectory("pkgtool-try")
    try FileManager.default.copyItem(atPath: repositoryRoot + "/samples", toPath: dir.appending("samples"))
    let bin = (pkgtoolBinary as NSString).deletingLastPathComponent
    #expect(FileManager.default.isExecutableFile(atPath: bin + "/pkgtool-serve"))
    let environment = [
      "PATH": bin + ":" + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"),
      "HOME": dir.path, "TMPDIR": dir.path,
    ]
    let port = try PostgresTestServer.freePort()
    var server: Process?
    var serverLog = ""
    defer {
      if let server, server.isRunning {
        kill(server.processIdentifier, SIGTERM)
        server.waitUntilExit()
      }
    }
    var outputs: [String] = []
    for written in try Self.blocks() {
      let block = written.replacingOccurrences(of: "127.0.0.1:8080", with: "127.0.0.1:\(port)")
      if Self.startsServe(block) {
        let (process, log) = try Self.startServe(block, in: dir, environment: environment)
        server = process
        serverLog = log
        continue
      }
      let result = try runProcess(
        "/bin/bash", ["-euo", "pipefail", "-c", block], in: dir.path, environment: environment)
      #expect(result.status == 0, "docs/serve.md block:\n\(written)\n\(result.stdout)\(result.stderr)")
      try #require(result.status == 0)
      outputs.append(result.stdout)
    }
    try #require(outputs.count == 3 && server != nil)

    // The gate said plainly that its root is a test one.
    let log = String(decoding: try readFile(serverLog), as: UTF8.self)
    #expect(
      log.contains(
        "--root-certificate 'chain/root.pem' is not Apple Root CA - G3: a test root; transactions are not from the App Store"
      ), "\(log)")

    // The purchase: a 200 grant (curl --fail-with-body), then the install of what it points to.
    let grant =
      try JSONSerialization.jsonObject(with: Data(try readFile(dir.appending("grant.json")))) as? [String: Any]
    let url = try #require(grant?["url"] as? String)
    #expect(url.hasPrefix("http://127.0.0.1:\(port)/packages/com.example.book.chapter1-1.0.pkg?expires="))
    #expect(outputs[1].contains("\"url\""))
    let installed = dir.appending("Docs/com.example.book.chapter1/current")
    for file in ["chapter1.txt", "chapter1.png"] {
      #expect(
        try readFile(installed + "/" + file) == readFile(repositoryRoot + "/samples/book-chapter1/Contents/" + file))
    }

    // The refund is stored, and the same request is refused from then on: 403 revoked.
    let lines = outputs[2].split(separator: "\n").map(String.init)
    try #require(lines.count == 2, "\(outputs[2])")
    #expect(lines[0] == #"{"status":"stored"}"#, "\(lines[0])")
    let refusal = try JSONSerialization.jsonObject(with: Data(lines[1].utf8)) as? [String: Any]
    #expect(refusal?["error"] as? String == "revoked", "\(lines[1])")
    #expect(log.contains("POST /v1/downloads 403"), "\(log)")
    #expect(log.contains("notification REFUND"), "\(log)")

    let stopped = try #require(server)
    kill(stopped.processIdentifier, SIGTERM)
    stopped.waitUntilExit()
    #expect(stopped.terminationStatus == 0)
  }

  /// Runs the serve block in the background and waits until it listens; returns the process and
  /// the path of its standard error.
  static func startServe(_ block: String, in dir: TemporaryDirectory, environment: [String: String]) throws -> (
    Process, String
  ) {
    let out = dir.appending(".serve.out")
    let err = dir.appending(".serve.err")
    for path in [out, err] { _ = FileManager.default.createFile(atPath: path, contents: nil) }
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/bin/bash")
    // exec: the signal that stops the gate reaches it, not a shell.
    process.arguments = ["-euo", "pipefail", "-c", "exec " + block]
    process.currentDirectoryURL = URL(fileURLWithPath: dir.path)
    process.environment = environment
    process.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: out))
    process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: err))
    process.standardInput = FileHandle.nullDevice
    try process.run()
    let deadline = Date().addingTimeInterval(60)
    while Date() < deadline {
      if String(decoding: try readFile(out), as: UTF8.self).contains("listening on http://127.0.0.1:") {
        return (process, err)
      }
      if !process.isRunning { break }
      usleep(50_000)
    }
    if process.isRunning { kill(process.processIdentifier, SIGKILL) }
    throw TestFailure("the serve block did not start:\n\(block)\n\(String(decoding: try readFile(err), as: UTF8.self))")
  }
}
