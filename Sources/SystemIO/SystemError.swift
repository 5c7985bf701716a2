#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// A failed system call, with the file it concerned and a message a person can act on.
///
/// Reads as `cannot read 'levels/1.json': permission denied (EACCES)`.
package struct SystemError: Error, Equatable, CustomStringConvertible, Sendable {
  /// What was being done, as a verb phrase: `"read"`, `"create"`, `"rename"`.
  package var operation: String
  /// The path concerned.
  package var path: String
  /// The `errno` value.
  package var code: Int32

  /// A message that replaces the C library's, when the call succeeded but the result is wrong
  /// (a FIFO where a file was expected).
  package var detail: String?

  /// An error about `path`. A temporary file pkgtool made beside an output is never named:
  /// the error names the output, and a missing folder is named as such.
  package init(_ operation: String, path: String, code: Int32 = errno, detail: String? = nil) {
    self.operation = operation
    self.path = path
    self.code = code
    self.detail = detail
    let slash = path.lastIndex(of: "/")
    let name = slash.map { path[path.index(after: $0)...] } ?? path[...]
    if let target = TemporaryName.target(of: name) {
      let folder = slash.map { String(path[...$0]) } ?? ""
      self.path = folder + target
      let parent = folder.isEmpty ? "." : folder.count > 1 ? String(folder.dropLast()) : folder
      if detail == nil, code == ENOENT || code == ENOTDIR, !Paths.isDirectory(parent) {
        self.detail = "the folder '\(parent)' does not exist"
      }
    }
  }

  /// The symbolic name of ``code``, such as `ENOENT`.
  package var codeName: String { SystemError.names[code] ?? "errno \(code)" }

  /// The C library's message for ``code``, in lower case.
  package var reason: String {
    if let detail { return detail }
    guard let cString = strerror(code) else { return "unknown error" }
    let text = String(cString: cString)
    return text.prefix(1).lowercased() + text.dropFirst()
  }

  package var description: String { "cannot \(operation) '\(path)': \(reason) (\(codeName))" }

  private static let names: [Int32: String] = [
    EPERM: "EPERM", ENOENT: "ENOENT", EIO: "EIO", EBADF: "EBADF", EACCES: "EACCES",
    EEXIST: "EEXIST", EXDEV: "EXDEV", ENOTDIR: "ENOTDIR", EISDIR: "EISDIR", EINVAL: "EINVAL",
    ENFILE: "ENFILE", EMFILE: "EMFILE", EFBIG: "EFBIG", ENOSPC: "ENOSPC", EROFS: "EROFS",
    EMLINK: "EMLINK", ENAMETOOLONG: "ENAMETOOLONG", ENOTEMPTY: "ENOTEMPTY", ELOOP: "ELOOP",
    EDQUOT: "EDQUOT", ENOMEM: "ENOMEM", EBUSY: "EBUSY", EINTR: "EINTR", ENOSYS: "ENOSYS",
  ]
}
