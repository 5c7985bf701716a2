import Foundation
import HostedContent
import TestSupport
import Testing

/// The README's command blocks, run as written, line by line, in a fresh folder holding what
/// the README says it holds, with the built pkgtool first on PATH and HOME in that folder.
@Suite struct ReadmeTests {
  /// The lines of the ```sh block that follows `heading`, continuation lines joined, comments
  /// and blank lines dropped.
  static func block(after heading: String) throws -> [String] {
    let text = String(decoding: try readFile(repositoryRoot + "/README.md"), as: UTF8.self)
    guard let start = text.range(of: heading) else { return [] }
    let rest = text[start.upperBound...]
    guard let open = rest.range(of: "```sh\n"), let close = rest[open.upperBound...].range(of: "```") else { return [] }
    var lines: [String] = []
    var pending = ""
    for raw in rest[open.upperBound..<close.lowerBound].split(separator: "\n") {
      var line = String(raw)
      if line.hasPrefix("#") { continue }
      if line.hasSuffix("\\") {
        line.removeLast()
        pending += line
        continue
      }
      lines.append(pending + line)
      pending = ""
    }
    return lines.filter { !$0.trimmingCharacters(in: .whitespaces).isEmpty }
  }

  @Test(arguments: ["## Use\n", "Moving to Background Assets"])
  func theBlockRunsAsWritten(heading: String) throws {
    let lines = try ReadmeTests.block(after: heading)
    #expect(lines.count >= 2, "no block after \(heading)")
    let dir = try TemporaryDirectory()
    try writeFile(dir.appending("chapter1.txt"), "Once upon a time.\n")
    try writeFile(
      dir.appending("cover.png"), [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + Array(repeating: 7, count: 64))
    try writeFile(dir.appending("assets/levels/1.json"), "{\"level\": 1}\n")
    try Data(ExamplePackages.xarBytes(RuleExample.baseNodes)).write(
      to: URL(fileURLWithPath: dir.appending("download.pkg")))
    let bin = (pkgtoolBinary as NSString).deletingLastPathComponent
    let environment = [
      "PATH": bin + ":" + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"), "HOME": dir.path,
    ]
    // The Background Assets block starts from the package the Use block builds.
    if !heading.hasPrefix("## Use") {
      for line in try ReadmeTests.block(after: "## Use\n").prefix(8) {
        _ = try runProcess("/bin/bash", ["-euo", "pipefail", "-c", line], in: dir.path, environment: environment)
      }
    }
    for line in lines {
      let result = try runProcess(
        "/bin/bash", ["-euo", "pipefail", "-c", line], in: dir.path, environment: environment)
      #expect(result.status == 0, "\(line)\n\(result.stdout)\(result.stderr)")
    }
  }
}
