import Foundation

/// What a finished process gave back.
package struct ProcessResult {
  package var status: Int32
  package var stdout: String
  package var stderr: String

  package init(status: Int32, stdout: String, stderr: String) {
    self.status = status
    self.stdout = stdout
    self.stderr = stderr
  }
}

/// Runs `executable` with `arguments` and waits; output is captured through temporary files, so a
/// chatty process cannot block on a full pipe.
@discardableResult
package func runProcess(
  _ executable: String, _ arguments: [String], in directory: String? = nil,
  environment: [String: String]? = nil, stdin: String? = nil
) throws -> ProcessResult {
  let scratch = try TemporaryDirectory("pkgtool-proc")
  let outPath = scratch.appending("out")
  let errPath = scratch.appending("err")
  _ = FileManager.default.createFile(atPath: outPath, contents: nil)
  _ = FileManager.default.createFile(atPath: errPath, contents: nil)
  let process = Process()
  process.executableURL = URL(fileURLWithPath: executable)
  process.arguments = arguments
  if let directory { process.currentDirectoryURL = URL(fileURLWithPath: directory) }
  if let environment {
    process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
  }
  let out = try FileHandle(forWritingTo: URL(fileURLWithPath: outPath))
  let err = try FileHandle(forWritingTo: URL(fileURLWithPath: errPath))
  process.standardOutput = out
  process.standardError = err
  if let stdin {
    let inPath = scratch.appending("in")
    try writeFile(inPath, stdin)
    process.standardInput = try FileHandle(forReadingFrom: URL(fileURLWithPath: inPath))
  } else {
    process.standardInput = FileHandle.nullDevice
  }
  try process.run()
  process.waitUntilExit()
  try out.close()
  try err.close()
  return ProcessResult(
    status: process.terminationStatus,
    stdout: String(decoding: try readFile(outPath), as: UTF8.self),
    stderr: String(decoding: try readFile(errPath), as: UTF8.self))
}

/// The path of `bsdtar`, the independent implementation tests check against.
package let bsdtarPath: String = {
  for candidate in ["/usr/bin/bsdtar", "/usr/local/bin/bsdtar", "/opt/homebrew/bin/bsdtar"]
  where FileManager.default.isExecutableFile(atPath: candidate) {
    return candidate
  }
  return "/usr/bin/bsdtar"
}()

/// Runs bsdtar and fails loudly if it is not there or fails.
@discardableResult
package func bsdtar(_ arguments: [String], in directory: String? = nil) throws -> ProcessResult {
  let result = try runProcess(bsdtarPath, arguments, in: directory)
  guard result.status == 0 else {
    throw TestFailure("bsdtar \(arguments.joined(separator: " ")) failed: \(result.stderr)")
  }
  return result
}

/// An error raised by test support.
package struct TestFailure: Error, CustomStringConvertible {
  package var description: String
  package init(_ description: String) { self.description = description }
}
