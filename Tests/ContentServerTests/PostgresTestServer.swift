import Foundation
import TestSupport

#if canImport(Glibc)
  import Glibc
#endif

/// A PostgreSQL server of a test's own: Debian's `initdb` and `postgres` (from
/// /usr/lib/postgresql/*/bin; scripts/test.sh installs the `postgresql` package when they are
/// missing) on 127.0.0.1 and a free port, with its data and socket in a temporary folder that goes
/// away with the value. Logins over TCP need the password (SCRAM), as a real deployment's do.
///
/// PostgreSQL refuses to run as root: when the tests are root (here, and in CI), every PostgreSQL
/// program runs as the `postgres` user (`setpriv`), which owns the temporary folder.
///
/// The server never outlives the test process: it runs under a small shell that waits on a pipe
/// from this process and stops the server (fast shutdown) when the pipe says so or closes, and the
/// pipe closes when this process ends, however it ends (even by SIGKILL or a crash).
/// ``stop()`` and ``start()`` stop and start it again on the same data and port.
final class PostgresTestServer: @unchecked Sendable {
  /// The superuser, and the password it logs in with.
  static let user = "postgres"
  let password = "pw-" + UUID().uuidString.prefix(8)
  /// The port it listens on, on 127.0.0.1.
  let port: Int
  /// Its temporary folder: data/, socket/, server.log.
  let directory: TemporaryDirectory
  private let bin: String
  private let runAs: [String]
  private let lock = NSLock()
  private var running: (pid: pid_t, control: Int32)?

  /// Whether a PostgreSQL server can be run here (its programs are installed).
  static var binDirectory: String? {
    let root = "/usr/lib/postgresql"
    let versions = (try? FileManager.default.contentsOfDirectory(atPath: root)) ?? []
    return versions.sorted { $0.compare($1, options: .numeric) == .orderedDescending }
      .map { "\(root)/\($0)/bin" }
      .first { FileManager.default.isExecutableFile(atPath: "\($0)/initdb") }
  }

  private static let sharedServer = Result { try PostgresTestServer() }

  /// One server for the tests that do not stop theirs; each uses a database of its own. It stops,
  /// and its folder goes, when the test process ends.
  static func shared() async throws -> PostgresTestServer { try await offload { try sharedServer.get() } }

  /// Makes a new cluster (initdb) and starts it, off the tests' threads.
  static func make() async throws -> PostgresTestServer {
    try await offload { try PostgresTestServer() }
  }

  private init() throws {
    guard let bin = Self.binDirectory else {
      throw TestFailure("no PostgreSQL server: install Debian's postgresql package (scripts/test.sh does)")
    }
    self.bin = bin
    directory = try TemporaryDirectory("pkgtool-pg")
    port = try Self.freePort()
    try FileManager.default.createDirectory(atPath: directory.appending("socket"), withIntermediateDirectories: false)
    try writeFile(directory.appending("pwfile"), password + "\n", mode: 0o600)
    if getuid() == 0 {
      guard let pwd = getpwnam("postgres")?.pointee else {
        throw TestFailure(
          "running as root, PostgreSQL needs the user 'postgres' (Debian's postgresql package makes it)")
      }
      runAs = ["/usr/bin/setpriv", "--reuid=postgres", "--regid=postgres", "--init-groups", "--"]
      guard chown(directory.path, pwd.pw_uid, pwd.pw_gid) == 0,
        chown(directory.appending("socket"), pwd.pw_uid, pwd.pw_gid) == 0,
        chown(directory.appending("pwfile"), pwd.pw_uid, pwd.pw_gid) == 0
      else { throw TestFailure("chown to postgres: errno \(errno)") }
    } else {
      runAs = []
    }
    let initdb = try run(
      "\(bin)/initdb",
      [
        "--pgdata=\(directory.appending("data"))", "--username=\(Self.user)",
        "--pwfile=\(directory.appending("pwfile"))", "--auth-local=trust", "--auth-host=scram-sha-256",
        "--encoding=UTF8", "--no-locale", "--no-sync",
      ])
    guard initdb.status == 0 else { throw TestFailure("initdb failed: \(initdb.output)") }
    try startWaiting()
  }

  deinit {
    stopWaiting()
  }

  /// `postgres://postgres:PASSWORD@127.0.0.1:PORT/DATABASE`.
  func url(database: String = "postgres", password: String? = nil) -> String {
    "postgres://\(Self.user):\(password ?? self.password)@127.0.0.1:\(port)/\(database)"
  }

  /// Starts the server again and waits until it accepts connections.
  func start() async throws { try await offload { try self.startWaiting() } }

  /// Stops the server (fast shutdown: open connections are closed) and waits until it is gone.
  func stop() async { try? await offload { self.stopWaiting() } }

  private func startWaiting() throws {
    try lock.withLock {
      guard running == nil else { return }
      // The shell starts the server, then waits for a line (stop) or the end of its input (this
      // process has ended: stop, and remove the folder). SIGINT is PostgreSQL's fast shutdown.
      let script = """
        "$0" -D "$1" -p "$2" -k "$3" -h 127.0.0.1 -c max_connections=60 -c shared_buffers=16MB >>"$4" 2>&1 &
        pid=$!
        if read -r _; then remove=; else remove=1; fi
        kill -INT "$pid" 2>/dev/null
        wait "$pid"
        [ -z "$remove" ] || rm -rf "$5"
        """
      let arguments =
        runAs + ["/bin/sh", "-c", script, "\(bin)/postgres"]
        + [directory.appending("data"), "\(port)", directory.appending("socket"), directory.appending("server.log")]
        + [directory.path]
      running = try Self.spawn(arguments)
    }
    let deadline = Date().addingTimeInterval(30)
    while Date() < deadline {
      let ready = try runToEnd(
        ["\(bin)/pg_isready", "-h", "127.0.0.1", "-p", "\(port)", "-U", Self.user, "-d", "postgres", "-t", "1"])
      if ready.status == 0 { return }
      Thread.sleep(forTimeInterval: 0.05)
    }
    let log = (try? String(contentsOfFile: directory.appending("server.log"), encoding: .utf8)) ?? ""
    stopWaiting()
    throw TestFailure("PostgreSQL did not start on port \(port):\n\(log)")
  }

  private func stopWaiting() {
    let stopped = lock.withLock {
      defer { running = nil }
      return running
    }
    guard let (pid, control) = stopped else { return }
    _ = "stop\n".withCString { write(control, $0, 5) }
    close(control)
    var status: Int32 = 0
    while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
  }

  /// Starts `arguments` with the read end of a new pipe as its standard input, and returns its
  /// process ID and the write end. Standard output and error go to `output`, or nowhere.
  ///
  /// Not Foundation's `Process`: its child inherits the thread's signal mask, and the test
  /// threads block SIGCHLD (a shell that inherits that mask waits for its child for ever); and a
  /// `Process` that exits while the tests' threads are busy was seen never to be reaped. Here the
  /// mask is emptied, the pipe is closed on exec (no other child holds its write end open), and
  /// the caller waits with `waitpid`.
  private static func spawn(_ arguments: [String], output: String? = nil) throws -> (pid: pid_t, control: Int32) {
    var pipe: [Int32] = [-1, -1]
    guard Glibc.pipe(&pipe) == 0 else { throw TestFailure("pipe: errno \(errno)") }
    for end in pipe { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
    var attributes = posix_spawnattr_t()
    posix_spawnattr_init(&attributes)
    defer { posix_spawnattr_destroy(&attributes) }
    var mask = sigset_t()
    sigemptyset(&mask)
    posix_spawnattr_setsigmask(&attributes, &mask)
    posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK))
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_adddup2(&actions, pipe[0], 0)
    posix_spawn_file_actions_addopen(&actions, 1, output ?? "/dev/null", O_WRONLY | O_CREAT | O_TRUNC, 0o644)
    posix_spawn_file_actions_adddup2(&actions, 1, 2)
    var argv = arguments.map { strdup($0) }
    argv.append(nil)
    defer { for argument in argv { free(argument) } }
    var pid: pid_t = 0
    let spawned = posix_spawn(&pid, arguments[0], &actions, &attributes, &argv, environ)
    close(pipe[0])
    guard spawned == 0 else {
      close(pipe[1])
      throw TestFailure("posix_spawn \(arguments[0]): error \(spawned)")
    }
    return (pid, pipe[1])
  }

  /// Runs `arguments` to its end with nothing on its standard input; its exit status and what it
  /// printed (standard output and error together).
  private func runToEnd(_ arguments: [String]) throws -> (status: Int32, output: String) {
    let output = directory.appending("out-\(UUID().uuidString)")
    defer { try? FileManager.default.removeItem(atPath: output) }
    let (pid, control) = try Self.spawn(arguments, output: output)
    close(control)
    var status: Int32 = 0
    while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
    let text = (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""
    // WIFEXITED / WEXITSTATUS, which Swift does not import.
    return (status & 0x7f == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f), text)
  }

  /// Runs `sql` in `database` with psql, as the superuser over the server's socket, and returns
  /// what psql printed (unaligned, tuples only).
  @discardableResult
  func psql(_ sql: String, database: String = "postgres") async throws -> String {
    try await offload { try self.psqlWaiting(sql, database: database) }
  }

  private func psqlWaiting(_ sql: String, database: String) throws -> String {
    let result = try run(
      "\(bin)/psql",
      [
        "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-h", directory.appending("socket"), "-p", "\(port)",
        "-U", Self.user, "-d", database, "-c", sql,
      ])
    guard result.status == 0 else { throw TestFailure("psql \(sql): \(result.output)") }
    return result.output.trimmingCharacters(in: .whitespacesAndNewlines)
  }

  /// Creates a database of a fresh name and returns the name.
  func createDatabase() async throws -> String {
    let name = "t_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased()
    try await psql("CREATE DATABASE \(name)")
    return name
  }

  /// Runs a PostgreSQL program as the user that owns the cluster, in the cluster's folder: run
  /// from a folder that user cannot enter (a clone under `mktemp -d`), the programs print "could
  /// not change directory" into the output that tests compare.
  private func run(_ program: String, _ arguments: [String]) throws -> (status: Int32, output: String) {
    try runToEnd(runAs + ["/usr/bin/env", "-C", directory.path, program] + arguments)
  }

  /// A port on 127.0.0.1 that nothing listens on now.
  static func freePort() throws -> Int {
    let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard descriptor >= 0 else { throw TestFailure("socket: errno \(errno)") }
    defer { close(descriptor) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = 0
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    let bound = withUnsafePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
      }
    }
    guard bound == 0 else { throw TestFailure("bind: errno \(errno)") }
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let named = withUnsafeMutablePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
    }
    guard named == 0 else { throw TestFailure("getsockname: errno \(errno)") }
    return Int(UInt16(bigEndian: address.sin_port))
  }
}

/// Runs blocking `work` (a process, a wait) on a thread of its own, not on one of the few threads
/// that run the tests' tasks: two tests blocking at once would otherwise stall every other test.
func offload<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
  try await withCheckedThrowingContinuation { continuation in
    Thread { continuation.resume(with: Result { try work() }) }.start()
  }
}
