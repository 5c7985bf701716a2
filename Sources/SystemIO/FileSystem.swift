#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// File-system calls on paths, each turning failure into a ``SystemError``.
package enum FileSystem {
  /// Renames `source` to `destination`, replacing a file at `destination`.
  package static func rename(_ source: String, to destination: String) throws {
    guard systemRename(source, destination) == 0 else {
      throw SystemError("rename to", path: destination)
    }
  }

  /// Removes a file; a missing file is not an error.
  package static func removeFile(_ path: String) {
    _ = unlink(path)
  }

  /// A name beside `target` (same folder) that does not exist yet: ``TemporaryName``. Nothing
  /// is registered: make it through ``Interruption/creating(_:_:)``, or use
  /// ``createTemporarySibling(of:purpose:mode:)``.
  package static func temporarySibling(of target: String, purpose: String) -> String {
    let slash = target.lastIndex(of: "/")
    let folder = slash.map { String(target[...$0]) } ?? ""
    let name = slash.map { String(target[target.index(after: $0)...]) } ?? target
    return folder + TemporaryName.beside(name, purpose: purpose)
  }

  /// Creates a new file beside `target` under a temporary name, registered for removal on an
  /// interruption as it is made; returns its path and descriptor.
  package static func createTemporarySibling(of target: String, purpose: String, mode: mode_t = 0o600) throws -> (
    path: String, file: FileDescriptor
  ) {
    let path = temporarySibling(of: target, purpose: purpose)
    let file = try Interruption.creating(path) { try FileDescriptor.create(path, mode: mode) }
    return (path, file)
  }
}

extension FileSystem {
  /// Makes `destination` a second name of `source`; fails with `EEXIST` if it exists. Used to
  /// publish a finished file without replacing anything.
  package static func link(_ source: String, to destination: String) throws {
    guard systemLink(source, destination) == 0 else {
      throw SystemError("create", path: destination)
    }
  }

  /// Writes `bytes` to a temporary file beside `path`, flushes it, then renames it over `path`
  /// (`replace`) or links it into place, failing with `EEXIST` if `path` exists. The file
  /// appears whole or not at all; the temporary never stays.
  package static func writeAtomically(_ bytes: [UInt8], to path: String, mode: mode_t = 0o644, replace: Bool = true)
    throws
  {
    let (temporary, file) = try createTemporarySibling(of: path, purpose: "tmp", mode: mode)
    defer { removeFile(temporary) }
    try file.write(bytes)
    try file.sync()
    if replace { try rename(temporary, to: path) } else { try link(temporary, to: path) }
  }

  /// Copies the regular file at `source` (links followed) to a temporary file beside
  /// `destination` and renames it over `destination`.
  package static func copyFile(_ source: String, over destination: String, mode: mode_t = 0o644) throws {
    let input = try FileDescriptor.open(regularFile: source)
    let (temporary, output) = try createTemporarySibling(of: destination, purpose: "copy", mode: mode)
    defer { removeFile(temporary) }
    var buffer = [UInt8](repeating: 0, count: 1 << 20)
    var offset: UInt64 = 0
    while true {
      let n = try buffer.withUnsafeMutableBytes { try input.read(into: $0, at: offset) }
      if n == 0 { break }
      try buffer.withUnsafeBytes { try output.write(UnsafeRawBufferPointer(rebasing: $0[..<n])) }
      offset += UInt64(n)
    }
    try rename(temporary, to: destination)
  }
}

#if canImport(Glibc)
  @inline(__always) func systemLink(_ a: String, _ b: String) -> Int32 { Glibc.link(a, b) }
#else
  @inline(__always) func systemLink(_ a: String, _ b: String) -> Int32 { Darwin.link(a, b) }
#endif
