import ArgumentParser
import HostedContent
import SystemIO
import TextCoding

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Output helpers: unbuffered stderr, and a progress line when stderr is a terminal.
package enum Terminal {
  /// `text` on stderr, control characters other than newline and tab escaped: every message
  /// may quote a name or a link target from a hostile package.
  package static func standardError(_ text: String) {
    rawStandardError(terminalSafe(text))
  }

  /// `text` on stderr as it is: only for the progress line's own control sequences.
  static func rawStandardError(_ text: String) {
    var bytes = Array(text.utf8)
    _ = bytes.withUnsafeMutableBytes { write(2, $0.baseAddress, $0.count) }
  }

  /// Writes `text` to standard output, whole, control characters other than newline and tab
  /// escaped (as ``standardError(_:)``). A reader that went away (`| head`) ends the
  /// command quietly with ``closedPipeStatus``; any other failure to write (a full disk,
  /// `> /dev/full`) is an error: one line on stderr, exit 2, never a report that silently
  /// went nowhere.
  package static func standardOutput(_ text: String) {
    var text = terminalSafe(text)
    text.withUTF8 { bytes in
      do { try standardOutputBytes(UnsafeRawBufferPointer(bytes)) } catch {
        PkgToolMain.fail("\(error)")
      }
    }
  }

  /// The exit status when standard output's reader has gone (EPIPE): 0, as ripgrep and bat do,
  /// unless the command has already judged its input a failure (then 1, so `set -o pipefail`
  /// still sees it).
  nonisolated(unsafe) static var closedPipeStatus: Int32 = 0

  static var stdoutIsTerminal: Bool { isatty(1) == 1 }

  static var stderrIsTerminal: Bool { isatty(2) == 1 && getenv("CI") == nil }

  /// The width of the terminal on stderr (0 when unknown).
  static var stderrColumns: Int {
    var size = winsize()
    guard ioctl(2, UInt(TIOCGWINSZ), &size) == 0 else { return 0 }
    return Int(size.ws_col)
  }
}

/// `--progress`, shared by the commands that do long work (build, validate, unpack, install,
/// publish, export background-assets).
struct ProgressOptions: ParsableArguments {
  @Flag(
    help: ArgumentHelp(
      "Off a terminal (a CI log), print a plain progress line every 5 seconds on standard error (or set PKGTOOL_PROGRESS=1). On a terminal a live line is shown anyway."
    ))
  var progress = false
}

/// Progress on stderr: bytes done out of the total, a percentage, the rate and an ETA (bytes and
/// rate alone when the total is unknown).
///
/// - On a terminal (stderr is a tty and `CI` is unset): one line redrawn in place, first after
///   half a second, at most every 100 ms, erased at the end.
/// - Off a terminal, only with `--progress` or `PKGTOOL_PROGRESS=1`: a plain line (no control
///   characters) every 5 seconds, none at all for work that ends sooner.
/// - Never with `--quiet` or `--json`, nor, off a terminal, when a machine-readable report goes
///   to standard output; `PKGTOOL_PROGRESS=0` turns it off everywhere.
///
/// `PKGTOOL_PROGRESS_INTERVAL` (seconds, e.g. `0.05`) replaces the 5 s interval and the
/// terminal's half-second delay: for tests.
final class ProgressLine {
  enum Mode { case off, terminal, plain }

  private let label: String
  let mode: Mode
  private let start: timespec
  private var lastDraw: timespec
  private var drawn = false
  /// Seconds before the first line, and between plain lines.
  private let interval: Double

  /// Progress for work named `label` (e.g. `building 'x.pkg'`). `silent`: `--quiet` or `--json`;
  /// `machineOutput`: a machine-readable report goes to standard output.
  init(_ label: String, options: ProgressOptions, silent: Bool, machineOutput: Bool = false) {
    self.label = label
    mode = ProgressLine.mode(requested: options.progress, silent: silent, machineOutput: machineOutput)
    let given = getenv("PKGTOOL_PROGRESS_INTERVAL").flatMap { Double(String(cString: $0)) }.flatMap {
      $0 >= 0 ? $0 : nil
    }
    interval = given ?? (mode == .terminal ? 0.5 : 5)
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    start = now
    lastDraw = now
  }

  static func mode(requested: Bool, silent: Bool, machineOutput: Bool) -> Mode {
    let setting = getenv("PKGTOOL_PROGRESS").map { String(cString: $0) } ?? ""
    if silent || setting == "0" { return .off }
    if Terminal.stderrIsTerminal { return .terminal }
    if (requested || (!setting.isEmpty && setting != "0")) && !machineOutput { return .plain }
    return .off
  }

  /// The handler to give the operation; nil when nothing is shown (the operation then does not
  /// even work out a total).
  var handler: ProgressHandler? {
    guard mode != .off else { return nil }
    return { [self] done, total in update(done, total: total) }
  }

  private static func seconds(_ a: timespec, _ b: timespec) -> Double {
    Double(b.tv_sec - a.tv_sec) + Double(b.tv_nsec - a.tv_nsec) / 1e9
  }

  func update(_ done: UInt64, total: UInt64?) {
    guard mode != .off else { return }
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    let elapsed = ProgressLine.seconds(start, now)
    guard elapsed >= interval else { return }
    let since = ProgressLine.seconds(lastDraw, now)
    switch mode {
    case .terminal:
      guard !drawn || since >= min(0.1, max(interval, 0.01)) else { return }
      var text = terminalSafe(ProgressLine.describe(label: label, done: done, total: total, elapsed: elapsed))
      let width = Terminal.stderrColumns
      if width > 1 && text.count > width - 1 { text = String(text.prefix(width - 2)) + "…" }
      Terminal.rawStandardError("\r\u{1B}[K" + text)
    case .plain:
      guard !drawn || since >= interval else { return }
      Terminal.standardError(
        "pkgtool: " + ProgressLine.describe(label: label, done: done, total: total, elapsed: elapsed) + "\n")
    case .off: return
    }
    lastDraw = now
    drawn = true
  }

  /// Erases the terminal line (plain lines stay in the log).
  func finish() {
    if mode == .terminal && drawn { Terminal.rawStandardError("\r\u{1B}[K") }
    drawn = false
  }

  /// `building 'x.pkg': 812 MB of 1.6 GB (50%), 95 MB/s, about 9 s left`; without a total (or
  /// past it: a file grew), `building 'x.pkg': 812 MB, 95 MB/s`.
  static func describe(label: String, done: UInt64, total: UInt64?, elapsed: Double) -> String {
    let rate = elapsed > 0 ? Double(done) / elapsed : 0
    var text = "\(label): \(shortBytes(Double(done)))"
    if let total, total > 0, done <= total {
      let percent = Int(Double(done) * 100 / Double(total))
      text += " of \(shortBytes(Double(total))) (\(percent)%)"
      text += ", \(shortBytes(rate))/s"
      if rate > 0 { text += ", about \(duration(Double(total - done) / rate)) left" }
    } else {
      text += ", \(shortBytes(rate))/s"
    }
    return text
  }

  /// `812 MB`, `1.6 GB`, `300 bytes` (powers of 1,000, as every size pkgtool prints).
  static func shortBytes(_ value: Double) -> String {
    let units = ["kB", "MB", "GB", "TB"]
    var scaled = value
    var unit = -1
    while scaled >= 1000 && unit < units.count - 1 {
      scaled /= 1000
      unit += 1
    }
    if unit < 0 { return "\(Int(value)) bytes" }
    return (scaled < 10 ? String(format: "%.1f", scaled) : String(Int(scaled))) + " " + units[unit]
  }

  /// `9 s`, `4 min 10 s`, `1 h 5 min`.
  static func duration(_ seconds: Double) -> String {
    let s = Int(seconds.rounded(.up))
    if s < 60 { return "\(s) s" }
    if s < 3600 { return "\(s / 60) min" + (s % 60 == 0 ? "" : " \(s % 60) s") }
    return "\(s / 3600) h" + ((s % 3600) / 60 == 0 ? "" : " \((s % 3600) / 60) min")
  }
}

/// Raw bytes to standard output, unbuffered. A closed pipe ends the command quietly (see
/// ``Terminal/closedPipeStatus``); other failures throw.
func standardOutputBytes(_ bytes: UnsafeRawBufferPointer) throws {
  fflush(nil)  // every output stream: whatever a library buffered goes first
  var offset = 0
  while offset < bytes.count {
    let n = write(1, bytes.baseAddress! + offset, bytes.count - offset)
    if n < 0 {
      if errno == EINTR { continue }
      if errno == EPIPE {
        // Ends here, past every `defer`: the temporaries (`build -o -`'s private folder) go first.
        Interruption.removeRegistered()
        Interruption.endUnlessInterrupted(Terminal.closedPipeStatus)
      }
      throw SystemError("write", path: "standard output")
    }
    offset += n
  }
}

/// Text with control characters other than newline and tab escaped, for output that may come
/// from a hostile package.
func terminalSafe(_ text: String) -> String { DisplayEscaping.escaped(text, .terminalText) }
