#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// A new folder only this user can enter, in the system temporary folder (`TMPDIR`), for work
/// that has no place beside an output (`build -o -`, a download). It is registered with
/// ``Interruption`` as it is made, so Ctrl-C or SIGTERM removes it with what it holds.
package enum PrivateFolder {
  /// Makes `TMPDIR/PREFIX-XXXXXX` (mode 0700); nil, with `errno` set, when it cannot.
  package static func make(prefix: String) -> String? {
    var template = Array((StandardInput.temporaryFolder + "/" + prefix + "-XXXXXX").utf8CString)
    // The name is known only once made: the lock is held over mkdtemp, and the path registered.
    return Interruption.creatingUnnamed { () -> String? in
      template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }.map { String(cString: $0) }
    }
  }

  /// Removes a folder ``make(prefix:)`` made, with what it holds; best effort.
  package static func remove(_ folder: String) {
    if let parent = try? DirectoryHandle(path: Paths.parent(of: folder)) {
      try? parent.removeTree(Paths.name(of: folder))
    }
  }
}
