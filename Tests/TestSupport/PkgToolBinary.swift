import Foundation

/// The built `pkgtool` executable, which end-to-end tests run (`swift test` builds it first).
/// `PKGTOOL_BIN` overrides the search.
package let pkgtoolBinary: String = {
  if let override = ProcessInfo.processInfo.environment["PKGTOOL_BIN"] { return override }
  var candidates: [String] = []
  for start in [CommandLine.arguments[0], Bundle.main.bundlePath, Bundle.main.executablePath ?? ""] where !start.isEmpty
  {
    var url = URL(fileURLWithPath: start).standardizedFileURL
    for _ in 0..<5 {
      url.deleteLastPathComponent()
      candidates.append(url.appendingPathComponent("pkgtool").path)
    }
  }
  return candidates.first { FileManager.default.isExecutableFile(atPath: $0) } ?? "pkgtool"
}()

/// Runs the built `pkgtool` with `arguments`.
@discardableResult
package func pkgtool(_ arguments: [String], in directory: String? = nil, environment: [String: String]? = nil) throws
  -> ProcessResult
{
  try runProcess(pkgtoolBinary, arguments, in: directory, environment: environment)
}

/// The repository's root (for `samples/` and `templates/`).
package let repositoryRoot: String = {
  var url = URL(fileURLWithPath: #filePath)
  for _ in 0..<3 { url.deleteLastPathComponent() }
  return url.path
}()
