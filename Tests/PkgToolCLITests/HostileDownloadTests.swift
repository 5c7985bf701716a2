import Foundation
import HostedContent
import TestSupport
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// Issue 44, part 6: what a hostile server, a user's curl configuration or a killed run did to
/// `pkgtool unpack URL` and `install URL`. The built binary, real curl, real sockets on loopback
/// (``HostileHTTPServer``, over TLS with a certificate openssl makes for the test). Each case
/// failed on the code before its fix.
@Suite struct HostileDownloadTests {
  struct Setup {
    let dir: TemporaryDirectory
    /// The folder the servers serve: `book.pkg`, about 200 kB that does not compress.
    var served: String { dir.appending("served") }
    /// The TMPDIR every pkgtool run here is given.
    var temporary: String { dir.appending("tmp") }
    /// `TMPDIR` and a `HOME` with no `.curlrc`.
    var environment: [String: String] {
      ["TMPDIR": temporary, "HOME": dir.appending("home"), "CURL_HOME": dir.appending("home")]
    }

    func downloadFolders() throws -> [String] {
      try FileManager.default.contentsOfDirectory(atPath: temporary).filter { $0.hasPrefix("pkgtool-download") }
        .sorted()
    }
  }

  func setup() throws -> Setup {
    let s = Setup(dir: try TemporaryDirectory("pkgtool-hostile-download"))
    for folder in [s.served, s.temporary, s.dir.appending("home"), s.dir.appending("project")] {
      try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    }
    var generator = SystemRandomNumberGenerator()
    try writeFile(
      s.dir.appending("project/data/random.bin"),
      (0..<200_000).map { _ in UInt8.random(in: 0...255, using: &generator) })
    let built = try pkgtool(
      ["build", "project", "--product-id", "com.example.hostile", "--content-version", "1.0", "-o", "served/book.pkg"],
      in: s.dir.path)
    guard built.status == 0 else { throw TestFailure("build: \(built.stderr)") }
    return s
  }

  func unpack(_ s: Setup, _ url: String, _ output: String, _ extra: [String] = [], environment: [String: String] = [:])
    throws -> ProcessResult
  {
    try pkgtool(
      ["unpack", url, "-o", output, "-q"] + extra, in: s.dir.path,
      environment: s.environment.merging(environment) { $1 })
  }

  /// Exit 2, one line that names `url` and says `message`, no output, nothing left in TMPDIR.
  func expectRefused(_ result: ProcessResult, _ s: Setup, _ url: String, _ message: String, output: String = "out")
    throws
  {
    #expect(result.status == 2, "\(result.stdout)\(result.stderr)")
    #expect(result.stderr.hasPrefix("pkgtool: error: cannot download '\(url)': "), "\(result.stderr)")
    #expect(result.stderr.contains(message), "\(result.stderr)")
    #expect(result.stderr.split(separator: "\n").count == 1, "\(result.stderr)")
    #expect(!FileManager.default.fileExists(atPath: s.dir.appending(output)))
    #expect(try s.downloadFolders() == [])
  }

  @Test func anHTTPSDownloadNeverFollowsARedirectToHTTP() throws {
    let s = try setup()
    let certificate = try TestCertificate()
    let plain = try HostileHTTPServer(serving: s.served)
    let tls = try HostileHTTPServer(serving: s.served, certificate: certificate)
    let trusted = ["CURL_CA_BUNDLE": certificate.certificate]

    // TLS on loopback works: https, and https to https.
    let direct = try unpack(s, tls.base + "/files/book.pkg", "direct", environment: trusted)
    #expect(direct.status == 0, "\(direct.stderr)")
    let secure = try unpack(
      s, tls.base + "/redirect?to=" + tls.base + "/files/book.pkg", "secure", environment: trusted)
    #expect(secure.status == 0, "\(secure.stderr)")
    // http to http (and http to https) is still followed.
    let relayed = try unpack(s, plain.base + "/redirect?to=" + plain.base + "/files/book.pkg", "relayed")
    #expect(relayed.status == 0, "\(relayed.stderr)")

    let downgrade = tls.base + "/redirect?to=" + plain.base + "/files/book.pkg"
    try expectRefused(
      try unpack(s, downgrade, "out", environment: trusted), s, downgrade,
      "redirected it to a plain http:// address")
    // curl never asked the plain server: only the relayed download did.
    #expect(plain.requests == ["/redirect?to=\(plain.base)/files/book.pkg", "/files/book.pkg"], "\(plain.requests)")
  }

  /// A `.curlrc` in CURL_HOME and HOME, the first place curl looks: pkgtool's download behaves
  /// as without it.
  @Test func aCurlrcChangesNothing() throws {
    let s = try setup()
    let home = s.dir.appending("home")
    let plain = try HostileHTTPServer(serving: s.served)
    let url = plain.base + "/files/book.pkg"
    try writeFile(
      home + "/.curlrc", "proxy = \"http://127.0.0.1:1\"\noutput = \"\(home)/stolen\"\n")
    let proxied = try unpack(s, url, "out")
    #expect(proxied.status == 0, "\(proxied.stderr)")
    #expect(!FileManager.default.fileExists(atPath: home + "/stolen"))
    #expect(plain.requests == ["/files/book.pkg"])

    // `insecure` would accept a certificate nobody trusts.
    let tls = try HostileHTTPServer(serving: s.served, certificate: try TestCertificate())
    try writeFile(home + "/.curlrc", "insecure\n")
    let untrusted = tls.base + "/files/book.pkg"
    try expectRefused(try unpack(s, untrusted, "refused"), s, untrusted, "set CURL_CA_BUNDLE", output: "refused")
  }

  @Test func aTricklingServerIsGivenUpOnAtTheTimeout() throws {
    let s = try setup()
    let server = try HostileHTTPServer(serving: s.served, bytesPerTick: 150)
    let url = server.base + "/slow/book.pkg"
    for command in [["unpack", url, "-o", "out"], ["install", url, "--into", "out"]] {
      let start = Date()
      let result = try pkgtool(command + ["--timeout", "2s", "-q"], in: s.dir.path, environment: s.environment)
      let took = Date().timeIntervalSince(start)
      try expectRefused(result, s, url, "it did not finish within --timeout 2s")
      #expect(result.stderr.contains("give --timeout more time"), "\(result.stderr)")
      #expect(took < 8, "\(command[0]) took \(took) s")
    }
    let refused = try pkgtool(["unpack", url, "-o", "out", "--timeout", "soon"], in: s.dir.path)
    #expect(refused.status == 2 && refused.stderr.contains("not a duration"), "\(refused.stderr)")
  }

  /// Without --timeout: the library's minimum average rate, with a short first period so the
  /// test is quick.
  @Test func aTricklingServerIsGivenUpOnUnderTheMinimumRate() throws {
    let s = try setup()
    let server = try HostileHTTPServer(serving: s.served, bytesPerTick: 150)
    let url = server.base + "/slow/book.pkg"
    let start = Date()
    let download = ResumingDownload(
      address: url, limit: nil, deadline: .minimumRate(bytesPerSecond: 16_000, after: 1.5))
    do {
      try download.run(into: s.dir.appending("download.pkg"))
      Issue.record("the download did not stop")
    } catch {
      #expect("\(error)".contains("cannot download '\(url)': it arrives too slowly: "), "\(error)")
      #expect("\(error)".contains("under the 16000 bytes/s"), "\(error)")
    }
    #expect(Date().timeIntervalSince(start) < 6)
  }

  /// A download killed with SIGKILL leaves its folder; the next download removes it, and never
  /// the folder of a download still running.
  @Test func aLaterDownloadRemovesWhatAKilledOneLeft() throws {
    let s = try setup()
    let server = try HostileHTTPServer(serving: s.served, bytesPerTick: 1500)
    let slow = server.base + "/slow/book.pkg"

    func start() throws -> Process {
      let process = Process()
      // Through exec from Python, which first resets the signal mask and dispositions the test
      // runner's children inherit (SIGINT and SIGTERM blocked or ignored): the pid is pkgtool's.
      process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
      process.arguments = [
        "python3", "-c",
        "import os, signal, sys; signal.pthread_sigmask(signal.SIG_SETMASK, []); "
          + "[signal.signal(n, signal.SIG_DFL) for n in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)]; "
          + "os.execv(sys.argv[1], sys.argv[1:])",
        pkgtoolBinary, "unpack", slow, "-o", "killed", "-q",
      ]
      process.currentDirectoryURL = URL(fileURLWithPath: s.dir.path)
      process.environment = ProcessInfo.processInfo.environment.merging(s.environment) { $1 }
      process.standardInput = FileHandle.nullDevice
      process.standardOutput = FileHandle.nullDevice
      process.standardError = FileHandle.nullDevice
      try process.run()
      // Under way: its folder holds some bytes, and is older than the two seconds a folder
      // in the making is given.
      let deadline = Date().addingTimeInterval(20)
      while Date() < deadline {
        if let folder = try s.downloadFolders().first,
          let size = try? FileManager.default.attributesOfItem(atPath: s.temporary + "/" + folder + "/download.pkg")[
            .size] as? Int, size > 0
        {
          break
        }
        usleep(50_000)
      }
      Thread.sleep(forTimeInterval: 2.5)
      return process
    }

    let running = try start()
    let live = try s.downloadFolders()
    #expect(live.count == 1 && live[0].hasPrefix("pkgtool-download-\(running.processIdentifier)-"), "\(live)")
    // A download while the other runs leaves the other's folder alone.
    let meanwhile = try unpack(s, server.base + "/files/book.pkg", "meanwhile")
    #expect(meanwhile.status == 0, "\(meanwhile.stderr)")
    #expect(try s.downloadFolders() == live)

    kill(running.processIdentifier, SIGKILL)
    running.waitUntilExit()
    #expect(try s.downloadFolders() == live)
    let after = try unpack(s, server.base + "/files/book.pkg", "after")
    #expect(after.status == 0, "\(after.stderr)")
    #expect(try s.downloadFolders() == [])

    // Ctrl-C still leaves nothing.
    let interrupted = try start()
    kill(interrupted.processIdentifier, SIGINT)
    interrupted.waitUntilExit()
    #expect(interrupted.terminationStatus == 130)
    #expect(try s.downloadFolders() == [])
    #expect(!FileManager.default.fileExists(atPath: s.dir.appending("killed")))
  }

  /// The owner's process id now names another process (this test runner): the folder's lock is
  /// free, so it is a leftover once it is older than ten minutes; a fresh one is kept.
  @Test func aLeftoverWhoseProcessIdWasReusedGoesWhenOld() throws {
    let s = try setup()
    let server = try HostileHTTPServer(serving: s.served)
    let old = "pkgtool-download-\(getpid())-abcdef"
    let fresh = "pkgtool-download-\(getpid())-ghijkl"
    let unrelated = "pkgtool-download-notes"
    for name in [old, fresh, unrelated] {
      try FileManager.default.createDirectory(
        atPath: s.temporary + "/" + name + "/inner", withIntermediateDirectories: true)
    }
    try FileManager.default.setAttributes(
      [.modificationDate: Date().addingTimeInterval(-3600)], ofItemAtPath: s.temporary + "/" + old)
    try FileManager.default.setAttributes(
      [.modificationDate: Date().addingTimeInterval(-3600)], ofItemAtPath: s.temporary + "/" + unrelated)
    let result = try unpack(s, server.base + "/files/book.pkg", "out")
    #expect(result.status == 0, "\(result.stderr)")
    #expect(try s.downloadFolders() == [fresh, unrelated])
  }
}
