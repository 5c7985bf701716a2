import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// docs/self-hosting.md, run as written: its `sh` blocks line by line in one folder, and its
/// `console` blocks that start `pkgtool serve` run here too, the server stopped before the next
/// start and at the end. The built pkgtool and catalog-client-example come first on PATH.
/// `https://content.example.com` is the gate and `https://cdn.example.com/roots` a static host,
/// both on loopback. Also: the example client against a real gate, its download cut part way
/// and resumed.
@Suite(.serialized) struct SelfHostingDocumentTests {
  static let document = "docs/self-hosting.md"

  /// A block of the page: an `sh` block's lines, or a `console` block's `$` lines.
  struct Block {
    var isShell: Bool
    var lines: [String]
  }

  /// Every `sh` and `console` block, in order; continuation lines joined, comments and blank
  /// lines dropped (a `console` block keeps only its `$` lines, without the `$ `).
  static func blocks() throws -> [Block] {
    let text = String(decoding: try readFile(repositoryRoot + "/" + document), as: UTF8.self)
    var blocks: [Block] = []
    var current: Block?
    var pending = ""
    for raw in text.split(separator: "\n", omittingEmptySubsequences: false) {
      let line = String(raw)
      if line.hasPrefix("```") {
        if let block = current {
          blocks.append(block)
          current = nil
        } else if line == "```sh" || line == "```console" {
          current = Block(isShell: line == "```sh", lines: [])
        }
        continue
      }
      guard current != nil else { continue }
      var command = line.trimmingCharacters(in: .whitespaces)
      if !pending.isEmpty {
        command = pending + " " + command
        pending = ""
      } else if current!.isShell {
        if command.hasPrefix("#") || command.isEmpty { continue }
      } else {
        guard command.hasPrefix("$ ") else { continue }
        command.removeFirst(2)
      }
      if command.hasSuffix("\\") {
        pending = String(command.dropLast()).trimmingCharacters(in: .whitespaces)
        continue
      }
      current!.lines.append(command)
    }
    return blocks
  }

  /// A TCP port nobody listens on now (bound, read, closed): the page's addresses must be known
  /// before the gate starts, since its `--public-url` names its own port.
  static func freePort() throws -> Int {
    let socketFD = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard socketFD >= 0 else { throw TestFailure("socket: \(errno)") }
    defer { close(socketFD) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = 0
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafeMutablePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        bind(socketFD, $0, length) == 0 && getsockname(socketFD, $0, &length) == 0
      }
    }
    guard bound else { throw TestFailure("bind: \(errno)") }
    return Int(UInt16(bigEndian: address.sin_port))
  }

  static var binaries: String { (pkgtoolBinary as NSString).deletingLastPathComponent }

  static func shell(_ line: String, in dir: String) throws -> ProcessResult {
    let path = binaries + ":" + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin")
    return try runProcess(
      "/bin/bash", ["-euo", "pipefail", "-c", line], in: dir,
      environment: ["PATH": path, "HOME": dir, "TMPDIR": dir + "/tmp"])
  }

  /// A running `pkgtool serve`, started by a shell line (`exec`ed, so SIGTERM reaches it).
  final class Gate {
    let process = Process()
    let log: String

    init(_ line: String, in dir: String) throws {
      log = dir + "/gate-\(UUID().uuidString).log"
      _ = FileManager.default.createFile(atPath: log, contents: nil)
      process.executableURL = URL(fileURLWithPath: "/bin/bash")
      process.arguments = ["-c", "exec " + line]
      process.currentDirectoryURL = URL(fileURLWithPath: dir)
      let path = SelfHostingDocumentTests.binaries + ":" + (ProcessInfo.processInfo.environment["PATH"] ?? "")
      process.environment = ProcessInfo.processInfo.environment.merging(["PATH": path]) { $1 }
      let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: log))
      process.standardOutput = handle
      process.standardError = handle
      process.standardInput = FileHandle.nullDevice
      try process.run()
      let deadline = Date().addingTimeInterval(60)
      while Date() < deadline {
        if String(decoding: try readFile(log), as: UTF8.self).contains("listening on http://") { return }
        if !process.isRunning { break }
        usleep(50_000)
      }
      stop()
      throw TestFailure("pkgtool serve did not start: \(String(decoding: try readFile(log), as: UTF8.self))")
    }

    func stop() {
      guard process.isRunning else { return }
      kill(process.processIdentifier, SIGTERM)
      let deadline = Date().addingTimeInterval(20)
      while process.isRunning && Date() < deadline { usleep(50_000) }
      if process.isRunning { kill(process.processIdentifier, SIGKILL) }
    }

    deinit { if process.isRunning { kill(process.processIdentifier, SIGKILL) } }
  }

  @Test func thePageRunsAsWritten() throws {
    let dir = try TemporaryDirectory("pkgtool-self-hosting")
    try FileManager.default.createDirectory(atPath: dir.appending("tmp"), withIntermediateDirectories: true)
    try FileManager.default.createDirectory(atPath: dir.appending("cdn/roots"), withIntermediateDirectories: true)
    try writeFile(dir.appending("chapter1.txt"), "Once upon a time.\n")
    // What the page starts from: dist/com.example.book-1.1.pkg.
    for line in [
      "pkgtool init MyBook --product-id com.example.book", "cp chapter1.txt MyBook/Contents/", "pkgtool bump MyBook",
      "mkdir -p dist && pkgtool build MyBook -o dist/com.example.book-1.1.pkg",
    ] {
      let result = try Self.shell(line, in: dir.path)
      #expect(result.status == 0, "setup: \(line)\n\(result.stderr)")
    }
    let cdn = try HostileHTTPServer(serving: dir.appending("cdn/roots"))
    let port = try Self.freePort()
    func local(_ line: String) -> String {
      line.replacingOccurrences(of: "https://content.example.com", with: "http://127.0.0.1:\(port)")
        .replacingOccurrences(of: "127.0.0.1:8080", with: "127.0.0.1:\(port)")
        .replacingOccurrences(of: "https://cdn.example.com/roots", with: cdn.base + "/files")
    }
    let blocks = try Self.blocks()
    #expect(blocks.filter(\.isShell).count >= 4)
    #expect(blocks.contains { !$0.isShell && $0.lines.contains { $0.hasPrefix("pkgtool serve ") } })
    var gate: Gate?
    defer { gate?.stop() }
    var ran = 0
    for block in blocks {
      for written in block.lines {
        let line = local(written)
        if !block.isShell && written.hasPrefix("pkgtool serve ") {
          gate?.stop()
          gate = try Gate(line, in: dir.path)
          continue
        }
        let result = try Self.shell(line, in: dir.path)
        let gateLog = gate.map { String(decoding: (try? readFile($0.log)) ?? [], as: UTF8.self) } ?? ""
        try #require(result.status == 0, "\(Self.document): \(written)\n\(result.stdout)\(result.stderr)\n\(gateLog)")
        ran += 1
      }
    }
    #expect(ran >= 17)
    // What the page says happened.
    #expect(try readFile(dir.appending("book.pkg")) == readFile(dir.appending("dist/com.example.book-1.1.pkg")))
    #expect(
      String(decoding: try readFile(dir.appending("Documents/com.example.book/current/chapter1.txt")), as: UTF8.self)
        == "Once upon a time.\n")
    #expect(
      try FileManager.default.destinationOfSymbolicLink(atPath: dir.appending("Documents/com.example.book/current"))
        .hasSuffix("1.2"))
    #expect(try readFile(dir.appending("book-1.2.pkg")) == readFile(dir.appending("dist/com.example.book-1.2.pkg")))
    let trust = String(decoding: try readFile(dir.appending("Documents/.pkgtool/trust.json")), as: UTF8.self)
    #expect(trust.contains("\"rootVersion\" : 2"), "\(trust)")
    #expect(cdn.requests.contains("/files/root-2.json"), "\(cdn.requests)")
  }

  /// The example client against a real gate, through a proxy that cuts the first download part
  /// way: the first run stops with the bytes on disk, the second asks for the rest (`Range` from
  /// them, `If-Range` with the ETag), gets a 206, and hands over the catalog's exact bytes.
  @Test func theExampleClientResumesADownloadCutPartWay() throws {
    let dir = try TemporaryDirectory("pkgtool-client-resume")
    let chain = try TestChain()
    try writeFile(dir.appending("root.pem"), try chain.rootPEM())
    try writeFile(dir.appending("url.key"), (0..<32).map { UInt8($0 * 5 & 0xFF) }, mode: 0o600)
    var generator = SystemRandomNumberGenerator()
    let random = (0..<1_000_000).map { _ in UInt8.random(in: 0...255, using: &generator) }
    try writeFile(dir.appending("big/data.bin"), random)
    let package = dir.appending("dist/com.example.app.big-1.0.pkg")
    let port = try Self.freePort()
    for line in [
      "mkdir -p dist && pkgtool build big --product-id com.example.app.big --content-version 1.0 -o \(package) -q",
      "pkgtool keygen -o keys/content -q",
      "pkgtool publish \(package) --key keys/content --base-url http://127.0.0.1:\(port)/packages -o catalog.json -q",
    ] {
      let result = try Self.shell(line, in: dir.path)
      try #require(result.status == 0, "\(line)\n\(result.stderr)")
    }
    let proxy = try CuttingHTTPServer(.upstream("http://127.0.0.1:\(port)"), cutAfter: 300_000, cuts: 1)
    let gate = try Gate(
      "pkgtool serve --catalog catalog.json --packages dist --public-key keys/content.pub --listen 127.0.0.1:\(port)"
        + " --public-url \(proxy.base) --bundle-id com.example.app --root-certificate root.pem --url-key url.key"
        + " --state sqlite:gate.sqlite", in: dir.path)
    defer { gate.stop() }
    try writeFile(dir.appending("transaction.jws"), try chain.jws(TestChain.payload(product: "com.example.app.big")))

    let client = Self.binaries + "/catalog-client-example"
    let gateBase = "http://127.0.0.1:\(port)"
    let arguments = [
      gateBase + "/catalog.json", "keys/content.pub", gateBase, "com.example.app.big", "transaction.jws", "book.pkg",
    ]
    let first = try runProcess(client, arguments, in: dir.path)
    #expect(first.status == 1, "\(first.stdout)\(first.stderr)")
    #expect(first.stderr.contains("the download was cut"), "\(first.stderr)")
    #expect(!FileManager.default.fileExists(atPath: dir.appending("book.pkg")))
    let kept = try readFile(dir.appending("book.pkg.partial")).count
    let whole = try readFile(package)
    #expect(kept > 0 && kept < whole.count, "\(kept) of \(whole.count)")

    let second = try runProcess(client, arguments, in: dir.path)
    #expect(second.status == 0, "\(second.stdout)\(second.stderr)")
    #expect(second.stdout.contains("book.pkg: com.example.app.big 1.0, \(whole.count) bytes"), "\(second.stdout)")
    #expect(try readFile(dir.appending("book.pkg")) == whole)
    #expect(!FileManager.default.fileExists(atPath: dir.appending("book.pkg.partial")))
    let requests = proxy.requests
    #expect(requests.count == 2, "\(requests)")
    if requests.count == 2 {
      #expect(requests[0].range == nil && requests[0].status == 200, "\(requests)")
      #expect(requests[1].range == "bytes=\(kept)-" && requests[1].status == 206, "\(requests)")
      #expect(requests[1].ifRange?.hasPrefix("\"") == true, "\(requests)")
    }
  }
}
