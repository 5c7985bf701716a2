#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// The one naming scheme of pkgtool's temporary files and folders, always made beside what they
/// become: `.<name>.pkgtool-<purpose>-<pid>-<random>`. The name says whose it is, so a later run
/// can recognize and remove what a killed run left behind (``leftoverProcess(_:of:)``).
package enum TemporaryName {
  /// A fresh temporary name for `name`, for `purpose` (`tmp`, `stage`, `swap`, …).
  package static func beside(_ name: String, purpose: String) -> String {
    let random = UInt32.random(in: 0...UInt32.max)
    return "\(prefix(of: name))\(purpose)-\(getpid())-\(String(random, radix: 16))"
  }

  /// What every temporary name for `name` starts with.
  package static func prefix(of name: String) -> String { ".\(name).pkgtool-" }

  /// The process that made `entry`, if `entry` is a temporary name for `name`.
  package static func leftoverProcess(_ entry: String, of name: String) -> pid_t? {
    let prefix = prefix(of: name)
    guard entry.hasPrefix(prefix) else { return nil }
    let parts = entry.dropFirst(prefix.count).split(separator: "-")
    guard parts.count >= 3 else { return nil }
    return pid_t(parts[parts.count - 2])
  }

  /// True when `entry` is a temporary name for `name` whose process no longer runs.
  package static func isStale(_ entry: String, of name: String) -> Bool {
    guard let pid = leftoverProcess(entry, of: name), pid != getpid() else { return false }
    return kill(pid, 0) != 0 && errno == ESRCH
  }
}
