import Foundation

#if canImport(Glibc)
  import Glibc
#endif

/// What the machine running the tests can do, for tests that need more than a user account:
/// they are `.enabled(if:)` these, so a machine without shows them as skipped, not passed.
package enum TestEnvironment {
  /// Running as root.
  package static var isRoot: Bool { getuid() == 0 }

  /// Root, with `runuser` to run a command as another user.
  package static var canRunAsAnotherUser: Bool {
    isRoot && FileManager.default.isExecutableFile(atPath: "/usr/sbin/runuser")
  }

  /// Root, and a small tmpfs can be mounted (not in every container).
  package static let canMountTmpfs: Bool = {
    guard isRoot, let dir = try? TemporaryDirectory() else { return false }
    guard (try? runProcess("/bin/mount", ["-t", "tmpfs", "-o", "size=64k", "tmpfs", dir.path]))?.status == 0 else {
      return false
    }
    _ = try? runProcess("/bin/umount", [dir.path])
    return true
  }()

  /// A shared-memory tmpfs at /dev/shm (a file system without `FALLOC_FL_INSERT_RANGE`).
  package static var hasDevShm: Bool { FileManager.default.fileExists(atPath: "/dev/shm") }
}
