import Foundation
import SystemIO

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// The write end of the pipe the signal handler wakes the watcher through.
nonisolated(unsafe) private var interruptPipeWrite: Int32 = -1

/// Ctrl-C (SIGINT), SIGTERM and SIGHUP: the handler only writes the signal's number to a pipe
/// (all a signal handler may safely do); a thread waiting on it removes every temporary the
/// command made (``Interruption``), says so in one line, and exits 128 + the signal (130 for
/// Ctrl-C, 143 for SIGTERM). Outputs appear by renaming a finished temporary, so what was there
/// before is as it was, except an output kept for this case (``PendingFile/publishOnInterruption()``:
/// `validate -o`'s report that says the run did not finish), which is renamed into place first.
enum InterruptHandling {
  static func install() {
    var ends: [Int32] = [0, 0]
    guard pipe(&ends) == 0 else { return }
    let readEnd = ends[0]
    interruptPipeWrite = ends[1]
    _ = fcntl(readEnd, F_SETFD, FD_CLOEXEC)
    _ = fcntl(ends[1], F_SETFD, FD_CLOEXEC)
    let thread = Thread {
      var byte: UInt8 = 0
      while read(readEnd, &byte, 1) != 1 {
        if errno != EINTR { return }
      }
      let signal = Int32(byte)
      Interruption.begin()
      let fallbacks = Interruption.publishFallbacks()
      let (removed, left) = Interruption.removeRegistered()
      let name = signal == SIGINT ? "SIGINT" : signal == SIGTERM ? "SIGTERM" : signal == SIGHUP ? "SIGHUP" : "a signal"
      var what =
        removed == 0
        ? "nothing was left behind" : "removed \(removed) temporar\(removed == 1 ? "y" : "ies") it had made"
      if let first = left.first {
        // Named by its folder: the temporary's own name is pkgtool's, and a later run removes it.
        what =
          "could not remove \(left.count) temporar\(left.count == 1 ? "y" : "ies") it had made in '\(Paths.parent(of: first))'"
          + " (the next pkgtool run that writes there removes \(left.count == 1 ? "it" : "them"), or delete the"
          + " '.*.pkgtool-*' entr\(left.count == 1 ? "y" : "ies") yourself)"
      }
      var before = "what was there before is as it was"
      if let report = fallbacks.written.first {
        before = "'\(terminalSafe(report))' now says the run did not finish; anything else there before is as it was"
      } else if let report = fallbacks.failed.first {
        before =
          "could not replace '\(terminalSafe(report))', which is a previous run's: delete it; anything else is as it was"
      }
      // On a terminal the line starts below the ^C the terminal echoed.
      Terminal.standardError((isatty(2) == 1 ? "\n" : "") + "pkgtool: interrupted (\(name)): \(what); \(before)\n")
      _exit(128 + signal)
    }
    thread.start()
    for signal in [SIGINT, SIGTERM, SIGHUP] {
      var action = sigaction()
      #if canImport(Glibc)
        action.__sigaction_handler.sa_handler = { signal in
          var byte = UInt8(truncatingIfNeeded: signal)
          _ = write(interruptPipeWrite, &byte, 1)
        }
      #else
        action.__sigaction_u.__sa_handler = { signal in
          var byte = UInt8(truncatingIfNeeded: signal)
          _ = write(interruptPipeWrite, &byte, 1)
        }
      #endif
      sigemptyset(&action.sa_mask)
      action.sa_flags = SA_RESTART
      sigaction(signal, &action, nil)
    }
  }
}
