import HostedContent
import SystemIO

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Output helpers: unbuffered stderr, and a progress line when stderr is a terminal.
enum Terminal {
  /// `text` on stderr, control characters other than newline and tab escaped: every message
  /// may quote a name or a link target from a hostile package.
  static func standardError(_ text: String) {
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
  static func standardOutput(_ text: String) {
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
    Terminal.rawStandardError("\r\u{1B}[K" + terminalSafe(text))
    drawn = true
  }

  func finish() {
    if drawn { Terminal.rawStandardError("\r\u{1B}[K") }
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
  func escaped(_ value: UInt32) -> Bool {
    (value < 0x20 && value != 0x0A && value != 0x09) || value == 0x7F || (0x80..<0xA0).contains(value)
  }
  // Most text has nothing to escape: leave it as it is.
  guard text.utf8.contains(where: { $0 < 0x20 && $0 != 0x0A && $0 != 0x09 || $0 == 0x7F || $0 == 0xC2 }) else {
    return text
  }
  var out = ""
  out.unicodeScalars.reserveCapacity(text.unicodeScalars.count)
  for scalar in text.unicodeScalars {
    if escaped(scalar.value) {
      out += "\\u{\(String(scalar.value, radix: 16))}"
    } else {
      out.unicodeScalars.append(scalar)
    }
  }
  return out
}
