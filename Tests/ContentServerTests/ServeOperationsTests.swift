import Foundation
import PurchaseProof
import TestSupport
import Testing

/// Operations: the per-client connection limit, the first-request timeout and `/metrics`, over
/// real loopback against the built `pkgtool serve`.
extension ServeEndToEndTests {
  /// Prometheus' text exposition format, parsed: each sample's name, labels and value.
  struct Exposition {
    struct Sample {
      var name: String
      var labels: [String: String]
      var value: Double
    }
    var samples: [Sample] = []
    /// `# TYPE name kind` lines.
    var types: [String: String] = [:]

    init(_ text: String) throws {
      for line in text.split(separator: "\n").map(String.init) {
        if line.hasPrefix("# TYPE ") {
          let parts = line.split(separator: " ")
          if parts.count == 4 { types[String(parts[2])] = String(parts[3]) }
          continue
        }
        if line.hasPrefix("#") || line.isEmpty { continue }
        samples.append(try Self.sample(line))
      }
    }

    /// `name{a="x",b="y"} value` or `name value`; label values with `\\`, `\"` and `\n` escapes.
    static func sample(_ line: String) throws -> Sample {
      var chars = Array(line)[...]
      var name = ""
      while let c = chars.first, c != "{" && c != " " {
        name.append(c)
        chars = chars.dropFirst()
      }
      var labels: [String: String] = [:]
      if chars.first == "{" {
        chars = chars.dropFirst()
        while chars.first != "}" {
          var key = ""
          while let c = chars.first, c != "=" {
            key.append(c)
            chars = chars.dropFirst()
          }
          guard chars.dropFirst().first == "\"" else { throw TestFailure("bad label in: \(line)") }
          chars = chars.dropFirst(2)
          var value = ""
          while let c = chars.first, c != "\"" {
            chars = chars.dropFirst()
            if c == "\\", let escaped = chars.first {
              value.append(escaped == "n" ? "\n" : escaped)
              chars = chars.dropFirst()
            } else {
              value.append(c)
            }
          }
          guard !chars.isEmpty else { throw TestFailure("unterminated label value in: \(line)") }
          chars = chars.dropFirst()
          labels[key.trimmingCharacters(in: .whitespaces)] = value
          if chars.first == "," { chars = chars.dropFirst() }
          guard !chars.isEmpty else { throw TestFailure("unterminated labels in: \(line)") }
        }
        chars = chars.dropFirst()
      }
      let rest = String(chars).trimmingCharacters(in: .whitespaces)
      guard let value = Double(rest.split(separator: " ").first.map(String.init) ?? "") else {
        throw TestFailure("bad value in: \(line)")
      }
      return Sample(name: name, labels: labels, value: value)
    }

    /// The value of the sample with exactly these labels.
    func value(_ name: String, _ labels: [String: String] = [:]) -> Double? {
      samples.first { $0.name == name && $0.labels == labels }?.value
    }
  }

  /// The metrics listener's URL, once `pkgtool serve` has printed it.
  func metricsURL(_ server: Server) throws -> String {
    let deadline = Date().addingTimeInterval(20)
    while Date() < deadline {
      let out = String(decoding: try readFile(server.outPath), as: UTF8.self)
      if let range = out.range(of: "metrics at http://127.0.0.1:"),
        let port = Int(out[range.upperBound...].prefix { $0.isNumber })
      {
        return "http://127.0.0.1:\(port)/metrics"
      }
      usleep(50_000)
    }
    throw TestFailure("pkgtool serve printed no metrics address: \(server.log)")
  }

  func scrape(_ url: String) throws -> Exposition {
    let answer = try curl([url])
    guard answer.status == 200 else { throw TestFailure("GET /metrics: \(answer.status)") }
    #expect(answer.headers.lowercased().contains("content-type: text/plain; version=0.0.4"))
    return try Exposition(String(decoding: answer.body, as: UTF8.self))
  }

  @Test func metricsCountGrantsDownloadsRefusalsAndNotifications() throws {
    let server = try Server(in: folder, ["--metrics-listen", "127.0.0.1:0", "--url-lifetime", "5m"])
    let metrics = try metricsURL(server)
    // Not on the public port.
    #expect(try curl([server.base + "/metrics"]).status == 404)

    let bought = purchase()
    let jws = try chain.jws(bought)
    let granted = try download(server, jws)
    #expect(granted.status == 200)
    let url = try #require(granted.json["url"] as? String)
    let fetched = try curl([url])
    let package = try readFile(bookPackage)
    #expect(fetched.status == 200 && fetched.body == package)
    // Refused: a package URL without its signature, a transaction for another product.
    let unsigned = try curl([server.base + "/packages/com.example.app.book1-1.0.pkg"])
    #expect(unsigned.status == 403 && unsigned.json["error"] as? String == "unsigned-url")
    // The refusal code is counted, not sent: the answer has no such header.
    #expect(!unsigned.headers.lowercased().contains("x-pkgtool-refusal"))
    let other = try download(server, jws, product: "com.example.app.big")
    #expect(other.status == 403 && other.json["error"] as? String == "wrong-product")
    #expect(try curl([server.base + "/nowhere"]).status == 404)
    // A refund, its retry, then the purchase refused as revoked.
    let refund = try chain.notificationBody(
      type: "REFUND",
      transaction: resigned(bought, ["revocationDate": Int64(Date().timeIntervalSince1970 * 1000) - 60_000]),
      signedDate: Date().addingTimeInterval(-30))
    #expect(try notify(server, refund).status == 200)
    #expect(try notify(server, refund).json["status"] as? String == "duplicate")
    let revoked = try download(server, jws)
    #expect(revoked.status == 403 && revoked.json["error"] as? String == "revoked")

    let text = try scrape(metrics)
    let requests = "pkgtool_serve_requests_total"
    #expect(text.types[requests] == "counter")
    #expect(text.value(requests, ["route": "/v1/downloads", "status": "200", "error": ""]) == 1)
    #expect(text.value(requests, ["route": "/v1/downloads", "status": "403", "error": "wrong-product"]) == 1)
    #expect(text.value(requests, ["route": "/v1/downloads", "status": "403", "error": "revoked"]) == 1)
    #expect(text.value(requests, ["route": "/packages/{name}", "status": "200", "error": ""]) == 1)
    #expect(text.value(requests, ["route": "/packages/{name}", "status": "403", "error": "unsigned-url"]) == 1)
    #expect(text.value(requests, ["route": "/v1/notifications", "status": "200", "error": ""]) == 2)
    // /nowhere, and /metrics asked of the public port.
    #expect(text.value(requests, ["route": "unmatched", "status": "404", "error": ""]) == 2)
    let notifications = "pkgtool_serve_notifications_total"
    #expect(text.value(notifications, ["type": "REFUND", "outcome": "stored"]) == 1)
    #expect(text.value(notifications, ["type": "REFUND", "outcome": "duplicate"]) == 1)
    // The package's bytes and the refusal's JSON, both on the package route.
    #expect(
      text.value("pkgtool_serve_response_bytes_total", ["route": "/packages/{name}"])
        == Double(package.count + unsigned.body.count))
    #expect(text.value("pkgtool_serve_downloads_in_flight") == 0)
    // `pkgtool publish` signs catalogs that expire in 30 days.
    let expiresIn = try #require(text.value("pkgtool_serve_catalog_expires_in_seconds"))
    #expect(expiresIn > 29 * 86_400 && expiresIn <= 30 * 86_400)
    #expect(text.types["pkgtool_serve_catalog_expires_in_seconds"] == "gauge")

    // A download under way is in flight (12 MB at 1 MB/s), and not once it has ended.
    var purchase = TestChain.payload(product: "com.example.app.big")
    purchase["transactionId"] = "2000000999999999"
    purchase["originalTransactionId"] = "2000000999999999"
    let big = try download(server, try chain.jws(purchase), product: "com.example.app.big")
    let bigURL = try #require(big.json["url"] as? String)
    let slow = Process()
    slow.executableURL = URL(fileURLWithPath: "/usr/bin/curl")
    slow.arguments = ["--silent", "--output", "/dev/null", "--limit-rate", "1M", "--max-time", "4", bigURL]
    try slow.run()
    var during: Double?
    let deadline = Date().addingTimeInterval(3)
    while during != 1 && Date() < deadline {
      usleep(200_000)
      during = try scrape(metrics).value("pkgtool_serve_downloads_in_flight")
    }
    #expect(during == 1)
    slow.waitUntilExit()
    var after: Double?
    for _ in 0..<50 where after != 0 {
      usleep(100_000)
      after = try scrape(metrics).value("pkgtool_serve_downloads_in_flight")
    }
    #expect(after == 0)
    #expect(server.stop() == 0)
  }

  /// One client opens 300 idle connections, more than its limit (16) and more than the server's
  /// (64): a request from another address is still served, every idle connection is closed (the
  /// ones over the limit at once, the others at the first-request timeout), and `/metrics` says
  /// how many each way. Before the per-client limit, the idle ones held all 64 connections for
  /// the 30 s idle timeout and the other client's request waited.
  @Test func aFloodOfIdleConnectionsFromOneClientLocksNoOtherOut() throws {
    let server = try Server(
      in: folder,
      [
        "--max-connections", "64", "--max-client-connections", "16", "--first-request-timeout", "3s",
        "--client-timeout", "30s", "--metrics-listen", "127.0.0.1:0",
      ])
    let metrics = try metricsURL(server)
    let port = try #require(server.base.split(separator: ":").last)
    let script = """
      import json, select, socket, sys, time
      socks = []
      for i in range(300):
          s = socket.socket()
          s.bind(("127.0.0.1", 0))
          s.settimeout(5)
          try:
              s.connect(("127.0.0.1", \(port)))
              socks.append(s)
          except Exception:
              s.close()
      print(len(socks), flush=True)
      start = time.time()
      open_ = list(socks)
      while open_ and time.time() - start < 20:
          ready, _, _ = select.select(open_, [], [], 0.5)
          for s in ready:
              try:
                  data = s.recv(1)
              except Exception:
                  data = b""
              if not data:
                  open_.remove(s)
                  s.close()
      print(len(open_), flush=True)
      """
    let flood = Process()
    flood.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    flood.arguments = ["python3", "-c", script]
    let pipe = Pipe()
    flood.standardOutput = pipe
    try flood.run()
    // Once the flood is open, another address (all of 127/8 is loopback on Linux) is served.
    let reader = pipe.fileHandleForReading
    var output = ""
    while !output.contains("\n"), case let data = reader.availableData, !data.isEmpty {
      output += String(decoding: data, as: UTF8.self)
    }
    let opened = try #require(Int(output.split(separator: "\n").first ?? ""))
    #expect(opened > 64)
    let other = try curl(["--interface", "127.0.0.2", "--max-time", "5", server.base + "/healthz"])
    #expect(other.status == 200)

    // Every idle connection is closed within the first-request timeout (and long before the
    // 30 s client timeout).
    output += String(decoding: reader.readDataToEndOfFile(), as: UTF8.self)
    flood.waitUntilExit()
    let stillOpen = Int(output.split(separator: "\n").dropFirst().first ?? "")
    #expect(stillOpen == 0, "\(output)")

    let text = try scrape(metrics)
    let refused = try #require(
      text.value("pkgtool_serve_connections_refused_total", ["reason": "per-client-limit"]))
    let timedOut = try #require(
      text.value("pkgtool_serve_connections_timed_out_total", ["reason": "first-request"]))
    // At least the 16 the client was allowed; more only if the flood outlasted their timeout.
    #expect(timedOut >= 16)
    #expect(refused + timedOut == Double(opened))
    #expect(text.value("pkgtool_serve_connections_open") == 0)
    #expect(text.value("pkgtool_serve_requests_total", ["route": "/healthz", "status": "200", "error": ""]) == 1)
    #expect(server.stop() == 0)
    #expect(server.log.contains("client 127.0.0.1 holds 16 connections"))
  }

  /// The first-request timeout closes a connection that never sent a request; one that did and
  /// then idles between requests (keep-alive) is closed by --client-timeout instead.
  @Test func theFirstRequestTimeoutLeavesKeepAliveToTheClientTimeout() throws {
    let server = try Server(in: folder, ["--first-request-timeout", "1s", "--client-timeout", "5s"])
    let port = try #require(server.base.split(separator: ":").last)
    let script = """
      import socket, time
      def until_closed(s, start):
          s.settimeout(20)
          try:
              while s.recv(4096):
                  pass
          except Exception:
              pass
          return time.time() - start
      silent = socket.create_connection(("127.0.0.1", \(port)))
      silent_start = time.time()
      kept = socket.create_connection(("127.0.0.1", \(port)))
      kept.sendall(b"GET /healthz HTTP/1.1\\r\\nHost: x\\r\\n\\r\\n")
      # The whole answer (head and Content-Length bytes), read within 10 s.
      kept.settimeout(10)
      answer = b""
      while b"\\r\\n\\r\\n" not in answer:
          part = kept.recv(4096)
          if not part: break
          answer += part
      head, _, body = answer.partition(b"\\r\\n\\r\\n")
      length = [int(l.split(b":")[1]) for l in head.lower().split(b"\\r\\n") if l.startswith(b"content-length:")]
      while length and len(body) < length[0]:
          part = kept.recv(4096)
          if not part: break
          body += part
      kept_start = time.time()
      print("%.2f %.2f %s" % (until_closed(silent, silent_start), until_closed(kept, kept_start), answer.split(b" ")[1].decode()))
      """
    let result = try runProcess("/usr/bin/env", ["python3", "-c", script])
    let fields = result.stdout.split(separator: " ").map(String.init)
    try #require(fields.count == 3, "\(result.stdout) \(result.stderr)")
    let silent = try #require(Double(fields[0]))
    let kept = try #require(Double(fields[1]))
    #expect(fields[2].hasPrefix("200"))
    // The silent one goes at the first-request timeout, well before the client timeout.
    #expect(silent >= 0.9 && silent < 4, "\(result.stdout)")
    // The one that made a request stays past the first-request timeout, until the client timeout.
    #expect(kept >= 4 && kept < 15, "\(result.stdout)")
    #expect(server.stop() == 0)
  }

  @Test func operationsOptionsAreCheckedAndTaught() throws {
    let base = [
      "serve", "--catalog", "catalog.json", "--packages", "dist", "--listen", "127.0.0.1:0", "--bundle-id",
      "com.example.app", "--root-certificate", "root.pem", "--public-key", "keys/signing.pub",
    ]
    // A port already taken: the metrics listener's failure names it.
    let server = try Server(in: folder)
    let taken = try #require(server.base.split(separator: ":").last)
    let cases: [([String], String)] = [
      (["--max-connections", "0"], "--max-connections is 0"),
      (["--max-client-connections=-1"], "--max-client-connections is -1"),
      (["--metrics-listen", "9464"], "--metrics-listen '9464' is not host:port"),
      (["--first-request-timeout", "forever"], "--first-request-timeout"),
      (["--metrics-listen", "127.0.0.1:\(taken)", "--state", "sqlite:taken.sqlite"], "metrics: 127.0.0.1:\(taken)"),
    ]
    for (arguments, named) in cases {
      let result = try pkgtool(base + arguments, in: folder.path)
      #expect(result.status == 2, "\(arguments)")
      // A start that failed late has logged lines before its error line.
      let last = String(result.stderr.split(separator: "\n").last(where: { $0.hasPrefix("pkgtool: error: ") }) ?? "")
      #expect(last.contains(named), "\(arguments): \(result.stderr)")
    }
    #expect(server.stop() == 0)
    let help = try pkgtool(["serve", "--help"])
    for option in ["--max-connections", "--max-client-connections", "--first-request-timeout", "--metrics-listen"] {
      #expect(help.stdout.contains(option), "\(option)")
    }
  }
}
