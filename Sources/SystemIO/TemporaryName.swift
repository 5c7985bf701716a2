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

  /// The name a temporary name stands in for (`.book.pkg.pkgtool-tmp-123-ab` → `book.pkg`);
  /// nil when `entry` is not one of pkgtool's temporary names.
  package static func target(of entry: Substring) -> Substring? {
    guard entry.first == ".", let marker = entry.ranges(of: ".pkgtool-").last else { return nil }
    let parts = entry[marker.upperBound...].split(separator: "-", omittingEmptySubsequences: false)
    guard parts.count >= 3, pid_t(parts[parts.count - 2]) != nil, UInt32(parts[parts.count - 1], radix: 16) != nil,
      marker.lowerBound > entry.index(after: entry.startIndex)
    else { return nil }
    return entry[entry.index(after: entry.startIndex)..<marker.lowerBound]
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
