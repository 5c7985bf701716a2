import Foundation

#if canImport(Glibc)
  import Glibc
#endif

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
  let status = waitForExit(process)
  try out.close()
  try err.close()
  return ProcessResult(
    status: status,
    stdout: String(decoding: try readFile(outPath), as: UTF8.self),
    stderr: String(decoding: try readFile(errPath), as: UTF8.self))
}

/// Waits for `process` to end and gives its status as `Process.terminationStatus` does.
///
/// Foundation on Linux was seen to miss a child's exit: the server suite hung for 20 minutes on
/// a `<defunct>` pkgtool whose `waitUntilExit` never returned, while PostgreSQL was being
/// started from another thread. So the kernel is asked too, without reaping the child
/// (`WNOWAIT`, which leaves it to Foundation): once the child has ended, Foundation gets a
/// second to notice, and the kernel's status is taken when it does not.
private func waitForExit(_ process: Process) -> Int32 {
  #if os(Linux)
    let pid = id_t(process.processIdentifier)
    var pause: useconds_t = 200
    while process.isRunning {
      var info = siginfo_t()
      if waitid(P_PID, pid, &info, WEXITED | WNOHANG | WNOWAIT) == 0, info._sifields._sigchld.si_pid != 0 {
        for _ in 0..<200 where process.isRunning { usleep(5000) }
        if process.isRunning { return info._sifields._sigchld.si_status }
        break
      }
      usleep(pause)
      pause = min(pause * 2, 5000)
    }
  #endif
  process.waitUntilExit()
  return process.terminationStatus
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
