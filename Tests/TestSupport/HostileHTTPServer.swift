import Foundation

/// A small HTTP/1.1 server on loopback (Python's http.server, a real socket), over TLS when
/// given a certificate (``TestCertificate``). It serves the files of one folder:
/// - `/files/NAME`: NAME whole;
/// - `/slow/NAME`: NAME with its full `Content-Length`, then `bytesPerTick` bytes every 0.1 s;
/// - `/redirect?to=URL`: 302 to URL.
/// It logs the path of every request it sees (``requests``).
package final class HostileHTTPServer {
  static let script = """
    import http.server, os, ssl, sys, threading, time, urllib.parse
    port_file, log_file, folder, per_tick, cert, key = sys.argv[1:7]
    per_tick = int(per_tick)
    lock = threading.Lock()

    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args):
            pass

        def handle(self):
            try:
                super().handle()
            except (ConnectionError, OSError):
                pass

        def do_GET(self):
            with lock, open(log_file, "a") as log:
                log.write(self.path + "\\n")
            url = urllib.parse.urlsplit(self.path)
            if url.path == "/redirect":
                to = urllib.parse.parse_qs(url.query)["to"][0]
                self.send_response(302)
                self.send_header("Location", to)
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            kind, _, name = url.path.lstrip("/").partition("/")
            path = os.path.join(folder, os.path.basename(name))
            if kind not in ("files", "slow") or not os.path.isfile(path):
                self.send_response(404)
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            data = open(path, "rb").read()
            self.send_response(200)
            self.send_header("Content-Type", "application/octet-stream")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            if kind == "files":
                self.wfile.write(data)
                return
            for start in range(0, len(data), per_tick):
                self.wfile.write(data[start:start + per_tick])
                self.wfile.flush()
                time.sleep(0.1)

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    if cert:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(cert, key)
        server.socket = context.wrap_socket(server.socket, server_side=True)
    with open(port_file + ".tmp", "w") as f:
        f.write(str(server.server_address[1]))
    os.rename(port_file + ".tmp", port_file)
    server.serve_forever()
    """

  let process = Process()
  let scratch: TemporaryDirectory
  let logPath: String
  /// `http://127.0.0.1:PORT` or `https://127.0.0.1:PORT`.
  package private(set) var base = ""

  /// Serves the files of `folder`; `/slow/` sends `bytesPerTick` bytes every 0.1 s; over TLS
  /// with `certificate`.
  package init(serving folder: String, bytesPerTick: Int = 150, certificate: TestCertificate? = nil) throws {
    scratch = try TemporaryDirectory("pkgtool-loopback-server")
    let scriptPath = scratch.appending("server.py")
    let portPath = scratch.appending("port")
    logPath = scratch.appending("requests.log")
    try writeFile(scriptPath, Self.script)
    try writeFile(logPath, "")
    try writeFile(scratch.appending("stderr"), "")
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = [
      "python3", scriptPath, portPath, logPath, folder, "\(bytesPerTick)", certificate?.certificate ?? "",
      certificate?.key ?? "",
    ]
    let port = try startScriptServer(process, portPath: portPath, scratch: scratch, name: "the hostile HTTP server") {
      stop()
    }
    base = (certificate == nil ? "http" : "https") + "://127.0.0.1:\(port)"
  }

  /// The paths requested so far, in order.
  package var requests: [String] {
    String(decoding: (try? readFile(logPath)) ?? [], as: UTF8.self).split(separator: "\n").map(String.init)
  }

  /// SIGKILL, by its pid: a child inherits the test runner's ignored signals, SIGTERM among them.
  package func stop() {
    if process.isRunning {
      kill(process.processIdentifier, SIGKILL)
      process.waitUntilExit()
    }
  }

  deinit { stop() }
}

/// A self-signed certificate for `127.0.0.1` (and `localhost`), made by `openssl` for one test:
/// `certificate` is what a client is told to trust (`CURL_CA_BUNDLE`), `key` the server's key.
package struct TestCertificate {
  package let folder: TemporaryDirectory
  package var certificate: String { folder.appending("cert.pem") }
  package var key: String { folder.appending("key.pem") }

  package init() throws {
    folder = try TemporaryDirectory("pkgtool-test-tls")
    let made = try runProcess(
      "/usr/bin/env",
      [
        "openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=127.0.0.1",
        "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost", "-keyout", "key.pem", "-out", "cert.pem",
      ], in: folder.path)
    guard made.status == 0 else { throw TestFailure("openssl: \(made.stderr)") }
  }
}
