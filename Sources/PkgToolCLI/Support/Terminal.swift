import HostedContent
import SystemIO

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Output helpers: unbuffered stderr, and a progress line when stderr is a terminal.
enum Terminal {
  static func standardError(_ text: String) {
    var bytes = Array(text.utf8)
    _ = bytes.withUnsafeMutableBytes { write(2, $0.baseAddress, $0.count) }
  }

  /// Writes `text` to standard output, whole. A reader that went away (`| head`) ends the
  /// command quietly with ``closedPipeStatus``; any other failure to write (a full disk,
  /// `> /dev/full`) is an error: one line on stderr, exit 2, never a report that silently
  /// went nowhere.
  static func standardOutput(_ text: String) {
    var text = text
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
}

/// A one-line progress display on stderr, shown only on a terminal and only once work has gone
/// on for a moment; cleared when done.
final class ProgressLine {
  private let label: String
  private let total: UInt64?
  private var lastDraw: timespec = timespec()
  private let start: timespec
  private var drawn = false
  private let enabled: Bool

  init(_ label: String, total: UInt64?) {
    self.label = label
    self.total = total
    enabled = Terminal.stderrIsTerminal
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    start = now
  }

  private static func seconds(_ a: timespec, _ b: timespec) -> Double {
    Double(b.tv_sec - a.tv_sec) + Double(b.tv_nsec - a.tv_nsec) / 1e9
  }

  func update(_ done: UInt64) {
    guard enabled else { return }
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    guard ProgressLine.seconds(start, now) > 0.5, ProgressLine.seconds(lastDraw, now) > 0.1 else { return }
    lastDraw = now
    var text = "\(label): \(describeBytes(done))"
    if let total, total > 0 {
      let fraction = min(1, Double(done) / Double(total))
      let width = 24
      let filled = Int(fraction * Double(width))
      text =
        "\(label) [\(String(repeating: "#", count: filled))\(String(repeating: ".", count: width - filled))] \(Int(fraction * 100))% \(describeBytes(done))"
    }
    Terminal.standardError("\r\u{1B}[K" + text)
    drawn = true
  }

  func finish() {
    if drawn { Terminal.standardError("\r\u{1B}[K") }
    drawn = false
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
      if errno == EPIPE { exit(Terminal.closedPipeStatus) }
      throw SystemError("write", path: "standard output")
    }
    offset += n
  }
}

/// Text with control characters other than newline and tab escaped, for output that may come
/// from a hostile package.
func terminalSafe(_ text: String) -> String {
  text.split(separator: "\n", omittingEmptySubsequences: false).map { line in
    line.split(separator: "\t", omittingEmptySubsequences: false).map { String($0).debugEscapedForTerminal }.joined(
      separator: "\t")
  }.joined(separator: "\n")
}
