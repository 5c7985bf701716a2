import Foundation

/// A small HTTP/1.1 server on loopback (Python's http.server, a real socket) whose connections
/// drop part way: on its first `cuts` requests it sends the headers and `cutAfter` bytes of the
/// body, then closes the connection. It logs every request it sees (its `Range`, its `If-Range`,
/// the status answered).
///
/// It either serves files itself (``Source/files(first:later:)``: `first` to request 1, `later`
/// to the others, a file replaced between two requests; ETag = the SHA-256 of the bytes; it
/// honours `Range: bytes=N-` and `If-Range`), or relays every GET to an upstream server with its
/// `Range` and `If-Range` (``Source/upstream(_:)``: a proxy in front of `pkgtool serve`).
package final class CuttingHTTPServer {
  /// What it serves.
  package enum Source {
    case files(first: String, later: String?)
    case upstream(String)
  }

  /// One request as the server logged it.
  package struct Logged: Decodable, CustomStringConvertible {
    package var n: Int
    package var range: String?
    package var ifRange: String?
    package var status: Int

    package var description: String { "#\(n) range=\(range ?? "-") if-range=\(ifRange ?? "-") -> \(status)" }
  }

  static let script = """
    import hashlib, http.client, http.server, json, os, socket, sys, threading, urllib.parse
    port_file, log_file, cut, cuts, mode, first = sys.argv[1:7]
    later = sys.argv[7] if len(sys.argv) > 7 else first
    cut, cuts = int(cut), int(cuts)
    lock = threading.Lock()
    count = [0]
    # A careless server (or proxy): it honours Range but ignores If-Range and sends no ETag with a 206.
    careless = os.environ.get("CUTTING_SERVER_CARELESS") == "1"

    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args):
            pass

        def handle(self):
            try:
                super().handle()
            except (ConnectionError, OSError):
                pass

        def log(self, n, status):
            entry = {"n": n, "range": self.headers.get("Range"), "ifRange": self.headers.get("If-Range"), "status": status}
            with lock, open(log_file, "a") as log:
                log.write(json.dumps(entry) + "\\n")

        def send(self, n, status, headers, chunks):
            self.send_response(status)
            for name, value in headers:
                self.send_header(name, value)
            self.end_headers()
            left = cut if n <= cuts else None
            for chunk in chunks:
                if left is not None:
                    chunk = chunk[:left]
                    left -= len(chunk)
                self.wfile.write(chunk)
                if left == 0:
                    break
            self.wfile.flush()
            if left is not None:
                # The connection drops part way through the body.
                self.close_connection = True
                self.connection.shutdown(socket.SHUT_RDWR)

        def do_GET(self):
            with lock:
                count[0] += 1
                n = count[0]
            if mode == "upstream":
                return self.relay(n)
            data = open(first if n == 1 else later, "rb").read()
            tag = '"' + hashlib.sha256(data).hexdigest() + '"'
            rng, if_range = self.headers.get("Range"), self.headers.get("If-Range")
            start, status = 0, 200
            if rng and (if_range is None or if_range == tag or careless):
                spec = rng.strip()
                if spec.startswith("bytes=") and spec.endswith("-") and spec[6:-1].isdigit():
                    start, status = int(spec[6:-1]), 206
            if start >= len(data) and status == 206:
                self.log(n, 416)
                self.send(n, 416, [("Content-Range", "bytes */%d" % len(data)), ("Content-Length", "0")], [])
                return
            self.log(n, status)
            body = data[start:]
            headers = [("Content-Type", "application/octet-stream"), ("Content-Length", str(len(body)))]
            if not (careless and status == 206):
                headers.append(("ETag", tag))
            if status == 206:
                headers.append(("Content-Range", "bytes %d-%d/%d" % (start, len(data) - 1, len(data))))
            self.send(n, status, headers, [body])

        def relay(self, n):
            target = urllib.parse.urlsplit(first)
            upstream = http.client.HTTPConnection(target.hostname, target.port, timeout=30)
            forwarded = {name: self.headers[name] for name in ("Range", "If-Range") if self.headers.get(name)}
            upstream.request("GET", self.path, headers=forwarded)
            answer = upstream.getresponse()
            self.log(n, answer.status)
            headers = [(name, value) for name, value in answer.getheaders()
                       if name.lower() in ("content-type", "content-length", "content-range", "etag", "accept-ranges")]
            def chunks():
                while True:
                    chunk = answer.read(65536)
                    if not chunk:
                        return
                    yield chunk
            self.send(n, answer.status, headers, chunks())
            upstream.close()

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    with open(port_file + ".tmp", "w") as f:
        f.write(str(server.server_address[1]))
    os.rename(port_file + ".tmp", port_file)
    server.serve_forever()
    """

  let process = Process()
  let scratch: TemporaryDirectory
  let logPath: String
  /// `http://127.0.0.1:PORT`.
  package private(set) var base = ""

  /// `careless`: Range is honoured whatever `If-Range` says, and a 206 carries no ETag (a server
  /// or proxy that breaks RFC 9110's rules for them).
  package init(_ source: Source, cutAfter: Int, cuts: Int, careless: Bool = false) throws {
    scratch = try TemporaryDirectory("pkgtool-cutting-server")
    let scriptPath = scratch.appending("server.py")
    let portPath = scratch.appending("port")
    logPath = scratch.appending("requests.log")
    try writeFile(scriptPath, Self.script)
    try writeFile(logPath, "")
    try writeFile(scratch.appending("stderr"), "")
    let modeArguments: [String]
    switch source {
    case .files(let first, let later): modeArguments = ["files", first] + (later.map { [$0] } ?? [])
    case .upstream(let base): modeArguments = ["upstream", base]
    }
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = ["python3", scriptPath, portPath, logPath, "\(cutAfter)", "\(cuts)"] + modeArguments
    if careless {
      process.environment = ProcessInfo.processInfo.environment.merging(["CUTTING_SERVER_CARELESS": "1"]) { $1 }
    }
    let port = try startScriptServer(process, portPath: portPath, scratch: scratch, name: "the cutting HTTP server") {
      stop()
    }
    base = "http://127.0.0.1:\(port)"
  }

  /// The requests so far, in order.
  package var requests: [Logged] {
    let text = String(decoding: (try? readFile(logPath)) ?? [], as: UTF8.self)
    return text.split(separator: "\n").compactMap { try? JSONDecoder().decode(Logged.self, from: Data($0.utf8)) }
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

/// Starts a loopback test server script (`process`, its arguments set) with its standard error in
/// `scratch/stderr`, and waits until it writes the port it listens on to `portPath`. If it does
/// not within 20 s, calls `stop` and throws with what the script said.
func startScriptServer(
  _ process: Process, portPath: String, scratch: TemporaryDirectory, name: String, stop: () -> Void
) throws -> String {
  process.standardInput = FileHandle.nullDevice
  process.standardOutput = FileHandle.nullDevice
  process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: scratch.appending("stderr")))
  try process.run()
  let deadline = Date().addingTimeInterval(20)
  while Date() < deadline {
    if let port = try? String(decoding: readFile(portPath), as: UTF8.self), !port.isEmpty { return port }
    if !process.isRunning { break }
    usleep(20_000)
  }
  let errors = String(decoding: (try? readFile(scratch.appending("stderr"))) ?? [], as: UTF8.self)
  stop()
  throw TestFailure("\(name) did not start: \(errors)")
}
