import Foundation
import SystemIO
import TextCoding

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// A package named by URL: fetched into a private temporary folder first, never into place. With
/// a catalog the download stops as soon as it passes the size the catalog gives for that URL.
///
/// http(s) goes through the `curl` command, not Foundation's URLSession: linking
/// FoundationNetworking loads libcurl and some thirty libraries behind it into every run, about
/// 9 MiB of memory before the first byte of a package is read, and it keeps the Swift runtime
/// from being linked statically on Linux (docs/performance.md). Only `unpack` and `install` of a
/// URL need it. A transfer cut part way is resumed (``ResumingDownload``).
///
/// The private folder is `TMPDIR/pkgtool-download-PID-XXXXXX`, locked (`flock`) while the
/// download lives: each new download first removes the ones a killed run left behind
/// (``PrivateFolder/removeLeftovers(prefix:now:)``).
public final class DownloadedPackage {
  /// The local path to read: the download in its private folder, or `location` itself when it
  /// is a local path or a `file://` URL.
  public let path: String
  private let temporaryFolder: String?
  /// Held while the folder is in use: a later download that can take it knows the folder is a
  /// leftover.
  private let folderLock: FileLock?

  /// `location` is a local path, a `file://` URL, or an `http(s)://` URL. The download stops
  /// with an error past the size the catalog gives for the URL, or past `maxSize` (the command's
  /// `--max-size`: a package larger than that is refused anyway), so an endless answer never
  /// fills the disk.
  ///
  /// The private folder goes when this object does (or when the process is interrupted).
  /// `deadline` bounds the time the download may take (``ResumingDownload/Deadline``).
  /// Throws ``OperationError`` with one line for people: the URL, why, and what to do.
  public init(
    _ location: String, catalog: Catalog?, maxSize: UInt64? = nil,
    deadline: ResumingDownload.Deadline = .standard
  ) throws {
    let lower = location.lowercased()
    if lower.hasPrefix("file://") {
      guard let url = URL(string: location), url.isFileURL else {
        throw OperationError("'\(location)' is not a file URL", code: .inputUnsuitable)
      }
      path = url.path
      temporaryFolder = nil
      folderLock = nil
      return
    }
    guard lower.hasPrefix("https://") || lower.hasPrefix("http://") else {
      path = location
      temporaryFolder = nil
      folderLock = nil
      return
    }
    guard let url = URL(string: location) else {
      throw OperationError("'\(location)' is not a URL", code: .inputUnsuitable)
    }
    let catalogLimit = (catalog?.downloadLimit(forURL: location)).map { UInt64(clamping: $0) }
    let limit: ResumingDownload.Limit? =
      if let catalogLimit, catalogLimit <= (maxSize ?? .max) {
        .init(bytes: catalogLimit, what: "the \(catalogLimit) bytes the catalog gives")
      } else if let maxSize {
        .init(bytes: maxSize, what: "--max-size (\(maxSize) bytes)")
      } else { nil }
    PrivateFolder.removeLeftovers(prefix: Self.folderPrefix)
    let (folder, lock) = try Self.privateFolder(for: url.absoluteString)
    temporaryFolder = folder
    folderLock = lock
    // A fixed name, never one from the URL; only the extension is kept (the package-form rule
    // reads it).
    let ext = url.pathExtension.lowercased() == "zip" ? "zip" : "pkg"
    path = folder + "/download." + ext
    do {
      try ResumingDownload(address: url.absoluteString, limit: limit, deadline: deadline).run(into: path)
    } catch {
      Self.remove(folder)
      throw error
    }
  }

  deinit {
    if let temporaryFolder { Self.remove(temporaryFolder) }
  }

  /// What the private folders' names start with: `pkgtool-download-PID-XXXXXX`.
  static let folderPrefix = "pkgtool-download"

  /// A private folder for the download (``PrivateFolder``), and its lock: Ctrl-C or SIGTERM
  /// during the download removes it; after SIGKILL the next download does.
  static func privateFolder(for address: String) throws -> (String, FileLock) {
    guard let made = PrivateFolder.makeOwned(prefix: folderPrefix) else {
      let parent = StandardInput.temporaryFolder
      throw OperationError(
        "cannot download '\(address)': cannot make a temporary folder in '\(parent)': \(SystemError("create", path: parent).reason)",
        hint: "set TMPDIR to a folder you can write", code: .downloadFailed)
    }
    return made
  }

  static func remove(_ folder: String) { PrivateFolder.remove(folder) }
}

/// One URL fetched into one file with the `curl` command, resumed when the transfer is cut.
///
/// The first request asks for the whole file. When curl reports the connection cut (curl exits
/// 18, 52, 55, 56, 16 or 92) and the response carried a strong `ETag`, the next request asks
/// for the rest: `Range: bytes=N-` and `If-Range: <that ETag>`. What comes back is kept as
/// follows:
/// - 206 with the same strong ETag whose `Content-Range` runs from N to the end of the same
///   total: appended;
/// - 200: the file changed (or the server ignores ranges): its bytes replace what was there,
///   from offset 0; bytes of two different files are never put together;
/// - anything else (a 206 at another offset, 416): thrown away, and the next request starts
///   from zero.
/// Without a strong ETag every retry starts from zero. At most ``maximumRetries`` retries in a
/// row that bring no new byte, and ``maximumAttempts`` requests in all, with a short pause
/// (0.25 s, doubling, at most 2 s) before each retry. The whole of it, retries and pauses
/// included, is bounded by a ``Deadline``.
///
/// curl runs with `-q` first, so no `.curlrc` (in `CURL_HOME`, `XDG_CONFIG_HOME` or `HOME`) can
/// change what it does (`insecure`, a `proxy`, an `output`); an `https` URL is fetched over
/// https only and never follows a redirect to anything else.
public struct ResumingDownload {
  /// The URL, as curl is given it.
  public let address: String
  /// A size past which the download stops with an error, and what it is, for the message.
  public struct Limit: Sendable {
    /// The most bytes accepted.
    public var bytes: UInt64
    /// What the limit is, in words ("the 4324 bytes the catalog gives").
    public var what: String
    /// A limit of `bytes`, described as `what`.
    public init(bytes: UInt64, what: String) {
      self.bytes = bytes
      self.what = what
    }
  }
  /// Past this the download stops with an error (the size a catalog gives, or --max-size).
  public let limit: Limit?

  /// How long the download may take, all its requests and pauses included.
  public enum Deadline: Sendable, Equatable {
    /// At most `seconds` in all; `what` names it in the message (`--timeout 30s`).
    case within(seconds: Double, what: String)
    /// From `after` seconds on, the bytes received must average at least `bytesPerSecond`
    /// since the start: a server that trickles is given up on, a large file on a fast enough
    /// line is not.
    case minimumRate(bytesPerSecond: Double, after: Double)

    /// What a download gets when the command is given no `--timeout`: 16 kB/s on average, from
    /// the first minute on (a package of 2 GB may take up to 35 hours; a server sending
    /// 1.5 kB/s is given up on after a minute, not 45).
    public static let standard = Deadline.minimumRate(bytesPerSecond: 16_000, after: 60)
  }
  /// How long the download may take.
  public let deadline: Deadline

  /// A download of `address` (http or https), stopped past `limit` when one is given, and
  /// given up on past `deadline`.
  public init(address: String, limit: Limit?, deadline: Deadline = .standard) {
    self.init(address: address, shownAs: address, limit: limit, deadline: deadline, plainRedirects: true)
  }

  /// A download whose messages name `shown` (the URL without its query) instead of
  /// `address`; with `plainRedirects` false, an http URL may be redirected to https only.
  package init(address: String, shownAs shown: String, limit: Limit?, deadline: Deadline, plainRedirects: Bool) {
    self.address = address
    self.shown = shown
    self.limit = limit
    self.deadline = deadline
    self.plainRedirects = plainRedirects
  }

  /// The URL as messages name it.
  let shown: String
  /// Whether an http URL may be redirected to another http URL.
  let plainRedirects: Bool

  /// The clock the deadline is measured on, and what has arrived so far (every attempt).
  final class TransferClock {
    let start = TransferClock.now()
    var received: UInt64 = 0
    static func now() -> Double {
      var time = timespec()
      clock_gettime(CLOCK_MONOTONIC, &time)
      return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }
    var elapsed: Double { TransferClock.now() - start }
  }

  /// Retries in a row that bring no new byte, at most.
  public static let maximumRetries = 5
  /// Requests in all, at most.
  public static let maximumAttempts = 20
  /// curl's exit statuses for a connection cut after it was made.
  static let cutStatuses: Set<Int32> = [16, 18, 52, 55, 56, 92]

  /// What one run of curl gave.
  struct Attempt {
    /// The response's status (0 when none came).
    var status = 0
    var etag: String?
    var contentRange: String?
    /// The Content-Length header, when there was one.
    var contentLength: UInt64?
    /// Bytes of body received.
    var received: UInt64 = 0
    /// curl's exit status, or nil if it was killed (past the limit).
    var exitStatus: Int32?
    /// curl's own message, without the line pkgtool asked it for.
    var message = ""
    var overLimit = false
    /// Stopped here: the deadline passed while it ran.
    var pastDeadline = false
    /// The first bytes (at most ``errorBodyLimit``) of the body of an HTTP error (4xx, 5xx):
    /// `pkgtool serve` says there why it refuses (`{"error": CODE, "detail": TEXT}`).
    var errorBody: [UInt8] = []
  }

  /// The most bytes of an error response's body that are read for its reason.
  package static let errorBodyLimit = 4096

  /// Fetches the whole file into `path` (created here, only this user can read it); throws
  /// ``OperationError`` when the transfer cannot be completed.
  public func run(into path: String) throws {
    let output: FileDescriptor
    do { output = try FileDescriptor.create(path, mode: 0o600) } catch {
      throw OperationError(
        "cannot download '\(shown)': cannot make a temporary file: \((error as? SystemError)?.reason ?? "\(error)")",
        hint: "set TMPDIR to a folder you can write", code: .downloadFailed)
    }
    var kept: UInt64 = 0
    var etag: String?
    /// The file's size, once a response gave it (Content-Length of a 200, or a 206's total).
    var total: UInt64?
    var retriesWithoutProgress = 0
    var attempts = 0
    let progress = TransferClock()
    while true {
      attempts += 1
      if let late = lateness(progress) { throw late }
      let resumeFrom: UInt64? = (kept > 0 && etag != nil) ? kept : nil
      if resumeFrom == nil && kept > 0 {
        try writing { try output.truncate(to: 0) }
        kept = 0
      }
      let attempt = try fetch(
        into: output, at: resumeFrom ?? 0, ifRange: resumeFrom == nil ? nil : etag, progress: progress)
      if attempt.pastDeadline, let late = lateness(progress) { throw late }
      let before = kept
      var restart = false
      if let resumeFrom {
        if attempt.status == 0 {
          // No answer at all (refused, or cut before the head): what was kept stays.
        } else if attempt.status == 206, let range = Self.contentRange(attempt.contentRange),
          range.first == resumeFrom, range.last + 1 == range.size, total == nil || total == range.size,
          attempt.etag == etag
        {
          // The rest of the same file (the same strong ETag, the range to its end): only then
          // are its bytes put after the ones kept.
          total = range.size
          if attempt.overLimit {
            throw OperationError(
              "cannot download '\(shown)': it is larger than \(limit?.what ?? "the limit")", code: .downloadFailed)
          }
          kept = resumeFrom + attempt.received
        } else if (200..<300).contains(attempt.status) && attempt.status != 206 {
          // Another file (or the whole of it again): its bytes were written at `resumeFrom`;
          // they move to the front, and nothing of the first file stays.
          try writing { try Self.moveDown(output, from: resumeFrom, length: attempt.received) }
          kept = attempt.received
          etag = Self.strongETag(attempt.etag)
          total = attempt.contentLength
          if attempt.overLimit { restart = true }
        } else {
          restart = true
        }
        if restart {
          try writing { try output.truncate(to: 0) }
          kept = 0
          etag = nil
          total = nil
        } else {
          try writing { try output.truncate(to: kept) }
        }
      } else {
        if attempt.overLimit {
          throw OperationError(
            "cannot download '\(shown)': it is larger than \(limit?.what ?? "the limit")", code: .downloadFailed)
        }
        if attempt.status == 206 {
          throw OperationError(
            "cannot download '\(shown)': the server answered a request for the whole file with part of it (HTTP 206)",
            hint: "download the file yourself and pass its path", code: .downloadFailed)
        }
        if attempt.exitStatus == 0 && !(200..<300).contains(attempt.status) {
          // A redirect curl did not follow (no Location), a 1xx: not the file.
          throw OperationError(
            "cannot download '\(shown)': the server answered HTTP \(attempt.status)", code: .downloadFailed)
        }
        kept = attempt.received
        etag = Self.strongETag(attempt.etag)
        total = attempt.contentLength
      }
      if attempt.exitStatus == 0 && !restart { return }
      if let late = lateness(progress) { throw late }
      guard let status = attempt.exitStatus else {
        // Killed past the limit, on an answer that is being dropped: try again from zero.
        retriesWithoutProgress += 1
        try pauseOrGiveUp(attempt, kept: kept, retriesWithoutProgress, attempts, progress)
        continue
      }
      // A connection refused is worth retrying only once one had been made.
      // 28: no byte for --speed-time seconds (a server that stalled): retried like a cut.
      let retryable =
        restart || Self.cutStatuses.contains(status) || status == 28 || (status == 7 && attempts > 1)
      guard retryable else { throw failure(attempt) }
      retriesWithoutProgress = kept > before ? 0 : retriesWithoutProgress + 1
      try pauseOrGiveUp(attempt, kept: kept, retriesWithoutProgress, attempts, progress)
    }
  }

  /// Runs `body`, a write to the temporary file; its error names the URL, never the file.
  private func writing(_ body: () throws -> Void) throws {
    do { try body() } catch { throw writeFailure(error) }
  }

  /// The error for a failed write to the temporary file: it names the URL, never the file.
  private func writeFailure(_ error: Error) -> OperationError {
    OperationError(
      "cannot download '\(shown)': cannot write the temporary file: \((error as? SystemError)?.reason ?? "\(error)")",
      hint: "free some space in the temporary folder, or set TMPDIR to another folder", code: .downloadFailed)
  }

  /// The error for a download past its deadline, or nil while it is within it.
  private func lateness(_ progress: TransferClock) -> OperationError? {
    let elapsed = progress.elapsed
    switch deadline {
    case .within(let seconds, let what):
      guard elapsed >= seconds else { return nil }
      return OperationError(
        "cannot download '\(shown)': it did not finish within \(what) (\(progress.received) bytes received)",
        hint:
          "give --timeout more time on a slow line (e.g. --timeout 30m), or download the file yourself and pass its path",
        code: .downloadFailed)
    case .minimumRate(let rate, let after):
      guard elapsed >= after, Double(progress.received) < rate * elapsed else { return nil }
      return OperationError(
        "cannot download '\(shown)': it arrives too slowly: \(progress.received) bytes in \(Int(elapsed)) s, under the \(Int(rate)) bytes/s on average a download must reach after \(Int(after)) s",
        hint:
          "try again later, give --timeout the time it may take (e.g. --timeout 2h), or download the file yourself and pass its path",
        code: .downloadFailed)
    }
  }

  /// Waits before the next attempt, or throws when the retries are used up.
  private func pauseOrGiveUp(
    _ attempt: Attempt, kept: UInt64, _ retriesWithoutProgress: Int, _ attempts: Int, _ progress: TransferClock
  ) throws {
    guard retriesWithoutProgress <= Self.maximumRetries, attempts < Self.maximumAttempts else {
      throw OperationError(
        "cannot download '\(shown)': the transfer was cut \(attempts) times (\(kept) bytes received; the last time: \(Self.reason(attempt)))",
        hint: "try again later, or download the file yourself and pass its path", code: .downloadFailed)
    }
    // 0.25 s, 0.5 s, 1 s, 2 s, 2 s.
    var pause = min(0.25 * Double(1 << max(0, min(retriesWithoutProgress - 1, 3))), 2)
    if case .within(let seconds, _) = deadline { pause = max(0, min(pause, seconds - progress.elapsed)) }
    usleep(useconds_t(pause * 1_000_000))
  }

  /// The error for an attempt that is not retried.
  private func failure(_ attempt: Attempt) -> OperationError {
    if attempt.exitStatus == 127 {
      return OperationError(
        "cannot download '\(shown)': the curl command is not installed",
        hint: "install curl, or download the file yourself and pass its path", code: .downloadFailed)
    }
    if attempt.exitStatus == 1, !plainRedirects, !address.lowercased().hasPrefix("https://"),
      attempt.message.lowercased().contains("protocol \"http\"")
    {
      return OperationError(
        "cannot download '\(shown)': the server redirected it to another plain http:// address; only a loopback URL given on the command line may be plain http",
        hint: "have the server redirect to https, or give the final URL", code: .downloadFailed)
    }
    if attempt.exitStatus == 1, address.lowercased().hasPrefix("https://"),
      attempt.message.lowercased().contains("protocol \"http\"")
    {
      return OperationError(
        "cannot download '\(shown)': the server redirected it to a plain http:// address, and an https download never leaves https",
        hint: "have the server redirect to https, or give the final https URL", code: .downloadFailed)
    }
    if [35, 51, 53, 54, 58, 59, 60, 66, 77, 80, 82, 83, 90, 91].contains(attempt.exitStatus ?? 0) {
      return OperationError(
        "cannot download '\(shown)': \(Self.reason(attempt))",
        hint:
          "the server's certificate must be valid for its name and signed by a trusted authority; for a private authority set CURL_CA_BUNDLE to its certificate file",
        code: .downloadFailed)
    }
    return OperationError("cannot download '\(shown)': \(Self.reason(attempt))", code: .downloadFailed)
  }

  /// curl's message, turned into words where it can be.
  static func reason(_ attempt: Attempt) -> String {
    // Its first line: curl explains some failures (a certificate) over several more.
    var reason = String(
      attempt.message.split(separator: "\n").first { !$0.trimmingCharacters(in: .whitespaces).isEmpty } ?? ""
    ).trimmingCharacters(in: .whitespacesAndNewlines)
    if let range = reason.range(of: "The requested URL returned error: ") {
      reason = "the server answered HTTP " + reason[range.upperBound...].trimmingCharacters(in: .whitespaces)
      if let refusal = Self.refusal(attempt.errorBody) { reason += " " + refusal }
    } else if reason.isEmpty {
      if (200..<300).contains(attempt.status) || attempt.status == 0 {
        reason = "curl exited with status \(attempt.exitStatus.map(String.init) ?? "?")"
      } else {
        reason = "the server answered HTTP \(attempt.status)"
      }
    }
    return reason
  }

  /// What an error body says, when it is the JSON `pkgtool serve` answers a refusal with
  /// (`{"error": CODE, "detail": TEXT}`): `CODE: TEXT`, each shortened and escaped for the
  /// terminal; nil for any other body (HTML, text, a body cut at ``errorBodyLimit``).
  package static func refusal(_ body: [UInt8]) -> String? {
    guard !body.isEmpty, body.count <= errorBodyLimit,
      let object = try? JSONSerialization.jsonObject(with: Data(body)) as? [String: Any],
      let code = object["error"] as? String, !code.isEmpty
    else { return nil }
    func shown(_ text: String, _ most: Int) -> String {
      let cut = text.count > most ? String(text.prefix(most)) + "…" : text
      return cut.debugEscapedForTerminal
    }
    guard let detail = object["detail"] as? String, !detail.isEmpty else { return shown(code, 80) }
    return shown(code, 80) + ": " + shown(detail, 300)
  }

  /// Runs curl once; the body is written at `offset` of `output` as it arrives, counted here: past
  /// `limit` curl is stopped, whatever the server said the length would be.
  private func fetch(into output: FileDescriptor, at offset: UInt64, ifRange: String?, progress: TransferClock) throws
    -> Attempt
  {
    let curl = Process()
    curl.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    // `-q` first (curl reads it only there): no .curlrc is read. An https URL stays on https,
    // redirects included; an http one may go to https. The URL is passed as an option's value,
    // never as something curl could read as an option. The final response's status and headers
    // come last on standard error, on one line that starts with a marker. An HTTP error still
    // fails (exit 22), but its body comes too: its first bytes say why (``refusal(_:)``).
    let protocols = address.lowercased().hasPrefix("https://") ? "=https" : "=http,https"
    var arguments = [
      "curl", "-q", "--fail-with-body", "--silent", "--show-error", "--location", "--max-redirs", "10", "--proto",
      protocols,
      "--proto-redir", plainRedirects ? protocols : "=https",
      // A server that stops sending is given up after a minute under 1 kB/s (exit 28, retried).
      "--connect-timeout", "30", "--speed-limit", "1024", "--speed-time", "60",
      "--write-out",
      "%{stderr}\n\(Self.marker)%{http_code}\t%header{etag}\t%header{content-range}\t%header{content-length}\n",
    ]
    if case .within(let seconds, _) = deadline {
      // curl stops itself at the deadline, even while no byte arrives.
      arguments += ["--max-time", String(format: "%.3f", max(0.001, seconds - progress.elapsed))]
    }
    if let ifRange {
      arguments += ["--range", "\(offset)-", "--header", "If-Range: \(ifRange)"]
    }
    arguments += ["--url", address]
    curl.arguments = arguments
    let body = Pipe()
    let errors = Pipe()
    curl.standardOutput = body
    curl.standardError = errors
    curl.standardInput = FileHandle.nullDevice
    do { try curl.run() } catch {
      throw OperationError(
        "cannot download '\(shown)': \(error.localizedDescription)",
        hint: "downloading needs the curl command; or download the file yourself and pass its path",
        code: .downloadFailed)
    }
    // curl's messages are short; read on another thread so that neither pipe can fill up.
    let collected = Locked<[UInt8]>([])
    let readerDone = DispatchSemaphore(value: 0)
    Thread {
      let data = (try? errors.fileHandleForReading.readToEnd()).flatMap { $0 } ?? Data()
      collected.withLock { $0 = Array(data) }
      readerDone.signal()
    }.start()
    var attempt = Attempt()
    var writeError: Error?
    // What is there, as it comes (not 256 KiB at a time): the deadline is checked as bytes trickle in.
    let source = body.fileHandleForReading.fileDescriptor
    var buffer = [UInt8](repeating: 0, count: 256 * 1024)
    while true {
      let count = buffer.withUnsafeMutableBytes { read(source, $0.baseAddress, $0.count) }
      if count < 0 && errno == EINTR { continue }
      guard count > 0 else { break }
      if let limit, offset + attempt.received + UInt64(count) > limit.bytes {
        attempt.overLimit = true
        curl.terminate()
        break
      }
      do {
        try buffer.withUnsafeBytes {
          try output.write(UnsafeRawBufferPointer(rebasing: $0[..<count]), at: offset + attempt.received)
        }
      } catch {
        writeError = error
        curl.terminate()
        break
      }
      attempt.received += UInt64(count)
      progress.received += UInt64(count)
      if lateness(progress) != nil {
        attempt.pastDeadline = true
        curl.terminate()
        break
      }
    }
    try? body.fileHandleForReading.close()
    curl.waitUntilExit()
    readerDone.wait()
    if let writeError { throw writeFailure(writeError) }
    attempt.exitStatus = curl.terminationReason == .exit ? curl.terminationStatus : nil
    var lines: [Substring] = []
    for line in String(decoding: collected.withLock { $0 }, as: UTF8.self).split(separator: "\n") {
      if line.hasPrefix(Self.marker) {
        let fields = line.dropFirst(Self.marker.count).split(separator: "\t", omittingEmptySubsequences: false)
        attempt.status = fields.first.flatMap { Int($0) } ?? 0
        attempt.etag = fields.count > 1 && !fields[1].isEmpty ? String(fields[1]) : nil
        attempt.contentRange = fields.count > 2 && !fields[2].isEmpty ? String(fields[2]) : nil
        attempt.contentLength = fields.count > 3 ? UInt64(fields[3].trimmingCharacters(in: .whitespaces)) : nil
      } else {
        lines.append(line)
      }
    }
    attempt.message = lines.joined(separator: "\n")
    if attempt.exitStatus == 22, attempt.status >= 400, attempt.received > 0 {
      // The error's body was written where the file's bytes go; only its first bytes are read
      // back (the caller throws them away with the rest of an attempt that failed).
      let count = Int(min(attempt.received, UInt64(Self.errorBodyLimit + 1)))
      attempt.errorBody = (try? output.read(count: count, at: offset)) ?? []
    }
    return attempt
  }

  static let marker = "pkgtool-curl-response: "

  /// `"…"` with only the characters an entity tag may hold; nil for a weak tag (`W/"…"`, which
  /// If-Range may not carry) or anything else.
  static func strongETag(_ value: String?) -> String? {
    guard let value, value.count >= 2, value.hasPrefix("\""), value.hasSuffix("\"") else { return nil }
    let inner = value.utf8.dropFirst().dropLast()
    guard inner.allSatisfy({ $0 == 0x21 || (0x23...0x7E).contains($0) }) else { return nil }
    return value
  }

  /// `bytes FIRST-LAST/SIZE`, parsed; nil for anything else (a `*` size included).
  static func contentRange(_ contentRange: String?) -> (first: UInt64, last: UInt64, size: UInt64)? {
    guard let contentRange else { return nil }
    let text = contentRange.trimmingCharacters(in: .whitespaces)
    guard text.lowercased().hasPrefix("bytes ") else { return nil }
    let spec = text.dropFirst("bytes ".count)
    guard let dash = spec.firstIndex(of: "-"), let slash = spec.firstIndex(of: "/"), dash < slash,
      let first = UInt64(spec[..<dash]), let last = UInt64(spec[spec.index(after: dash)..<slash]),
      let size = UInt64(spec[spec.index(after: slash)...]), first <= last, last < size
    else { return nil }
    return (first, last, size)
  }

  /// Moves `length` bytes at `source` to the front of `file` (an ascending copy: each chunk is
  /// read before anything at or after it is written).
  static func moveDown(_ file: FileDescriptor, from source: UInt64, length: UInt64) throws {
    var buffer = [UInt8](repeating: 0, count: 1 << 20)
    var done: UInt64 = 0
    while done < length {
      let count = Int(min(UInt64(buffer.count), length - done))
      let n = try buffer.withUnsafeMutableBytes {
        try file.read(into: UnsafeMutableRawBufferPointer(rebasing: $0[..<count]), at: source + done)
      }
      guard n > 0 else { break }
      try buffer.withUnsafeBytes { try file.write(UnsafeRawBufferPointer(rebasing: $0[..<n]), at: done) }
      done += UInt64(n)
    }
  }
}
