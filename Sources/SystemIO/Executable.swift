#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// The running program's own file, and replacing the process with another program.
package enum Executable {
  /// The absolute path of the running executable, symlinks resolved; nil where the system does
  /// not tell.
  package static var currentPath: String? {
    #if os(Linux)
      var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
      let count = readlink("/proc/self/exe", &buffer, buffer.count - 1)
      guard count > 0 else { return nil }
      return String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    #elseif canImport(Darwin)
      var size: UInt32 = 0
      _ = _NSGetExecutablePath(nil, &size)
      var buffer = [CChar](repeating: 0, count: Int(size) + 1)
      guard _NSGetExecutablePath(&buffer, &size) == 0, let resolved = realpath(buffer, nil) else { return nil }
      defer { free(resolved) }
      return String(cString: resolved)
    #else
      return nil
    #endif
  }

  /// A companion program `name` (such as `pkgtool-serve`): the one beside the running executable,
  /// else the first on `PATH` (absolute entries only), as git finds `git-NAME`; a candidate counts
  /// only when it is a regular file (through symlinks) that may be run. Nil when there is none.
  package static func companion(named name: String) -> String? {
    var candidates: [String] = []
    if let current = currentPath, let slash = current.lastIndex(of: "/") {
      candidates.append(String(current[..<slash]) + "/" + name)
    }
    if let path = getenv("PATH") {
      for folder in String(cString: path).split(separator: ":") where folder.hasPrefix("/") {
        candidates.append(folder + "/" + name)
      }
    }
    return candidates.first { candidate in
      var info = stat()
      return stat(candidate, &info) == 0 && (info.st_mode & S_IFMT) == S_IFREG && access(candidate, X_OK) == 0
    }
  }

  /// Replaces this process with `path`, run with `arguments` (the first is its `argv[0]`).
  /// Returns only when that failed, with the reason.
  package static func replaceProcess(with path: String, arguments: [String]) -> SystemError {
    var argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) }
    argv.append(nil)
    defer { for pointer in argv { free(pointer) } }
    execv(path, argv)
    return SystemError("run", path: path)
  }
}
