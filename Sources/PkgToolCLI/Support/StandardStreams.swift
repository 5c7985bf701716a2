import ArgumentParser
import HostedContent
import SystemIO

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// `-` on the command line: standard input as a package (`validate -`, `info -`, `unpack -`,
/// `cat -`), standard output as the package `build` writes (`build -o -`) or the report
/// `validate` writes (`validate -o -`).
enum StandardStreams {
  /// The package named `path` as the operations take it: for `-`, standard input as a file
  /// (spooled into an unnamed temporary when it is a pipe, at most `maxSize` bytes) and the
  /// name every message gives it, `(standard input)`; for any other path, the path and nil.
  /// Standard input over `maxSize` is the size-limit finding, as a file over it is: one line,
  /// exit 1.
  static func input(_ path: String, maxSize: UInt64) throws -> (name: String, file: FileDescriptor?) {
    guard StandardInput.isNamed(path) else { return (path, nil) }
    do {
      return (StandardInput.displayName, try StandardInput.file(limit: maxSize))
    } catch let tooLarge as StandardInput.TooLarge {
      let finding = SizeLimitRule.finding(standardInputOver: tooLarge.limit)
      Terminal.standardError("pkgtool: \(StandardInput.displayName): \(finding.message) (\(finding.hint ?? ""))\n")
      throw ExitCode(1)
    } catch {
      throw OperationError.wrap(error)
    }
  }

  /// `-` given as more than one input: standard input can be read once.
  static func refuseRepeatedInput(_ paths: [String]) throws {
    if paths.filter(StandardInput.isNamed).count > 1 {
      throw ValidationError("'-' (standard input) can be given once.")
    }
  }

  /// A private folder in the system temporary folder for `build -o -`: the package is built
  /// there whole, then copied to standard output; removed afterwards, and on Ctrl-C.
  static func privateFolder() throws -> String {
    guard let made = PrivateFolder.make(prefix: "pkgtool-build") else {
      throw OperationError(
        "cannot make a temporary folder in '\(StandardInput.temporaryFolder)' to build into: \(SystemError("create", path: StandardInput.temporaryFolder).reason)",
        hint: "set TMPDIR to a folder you can write")
    }
    return made
  }

  /// Removes the folder ``privateFolder()`` made, with what it holds.
  static func remove(_ folder: String) { PrivateFolder.remove(folder) }

  /// Copies the whole file at `path` to standard output.
  static func copyToStandardOutput(_ path: String) throws {
    let file = try FileDescriptor.open(regularFile: path)
    let size = try file.size()
    var buffer = [UInt8](repeating: 0, count: 1 << 20)
    var offset: UInt64 = 0
    while offset < size {
      let n = try buffer.withUnsafeMutableBytes { try file.read(into: $0, at: offset) }
      if n == 0 { break }
      try buffer.withUnsafeBytes { try standardOutputBytes(UnsafeRawBufferPointer(rebasing: $0[..<n])) }
      offset += UInt64(n)
    }
  }
}
