import Foundation
import TestSupport
import Testing

/// The man page's ENVIRONMENT and EXIT STATUS sections (docs/man-sections.mdoc, which
/// scripts/install.sh puts into the page generate-manual writes), rendered by groff as `man` does,
/// against README.md's exit-code table and the variables the sources read (scripts/check-manual.py).
/// scripts/release-test.sh runs the same check on the installed page of the release archive.
@Suite struct ManualSectionsTests {
  func check(_ page: String, readme: String, sources: String) throws -> ProcessResult {
    try runProcess(
      "/usr/bin/env", ["python3", repositoryRoot + "/scripts/check-manual.py", page, readme, sources],
      in: repositoryRoot)
  }

  @Test func sectionsMatchTheREADMEAndTheSources() throws {
    let result = try check("docs/man-sections.mdoc", readme: "README.md", sources: "Sources")
    #expect(result.status == 0, "\(result.stderr)")
    #expect(result.stderr.contains("ENVIRONMENT and EXIT STATUS (0, 1, 2, 129, 130, 143)"), "\(result.stderr)")
  }

  /// The check sees drift: a README whose code 2 says something else, a variable the sources read
  /// and the page does not name, a stray escape in the page.
  @Test func driftIsReported() throws {
    let dir = try TemporaryDirectory()
    let readme = String(decoding: try readFile(repositoryRoot + "/README.md"), as: UTF8.self)
    try writeFile(
      dir.appending("README.md"),
      readme.replacingOccurrences(of: "| 2 | the command could not do its work", with: "| 2 | it could not work"))
    try FileManager.default.createDirectory(atPath: dir.appending("Sources"), withIntermediateDirectories: true)
    try writeFile(dir.appending("Sources/A.swift"), #"let x = getenv("PKGTOOL_NEW_SETTING")"# + "\n")
    let page = String(decoding: try readFile(repositoryRoot + "/docs/man-sections.mdoc"), as: UTF8.self)
    try writeFile(dir.appending("page.mdoc"), page + "A stray \\e escape.\n")

    let result = try check(
      dir.appending("page.mdoc"), readme: dir.appending("README.md"), sources: dir.appending("Sources"))
    #expect(result.status == 1)
    #expect(result.stderr.contains("EXIT STATUS does not say, as"), "\(result.stderr)")
    #expect(result.stderr.contains("ENVIRONMENT does not name PKGTOOL_NEW_SETTING"), "\(result.stderr)")
    #expect(result.stderr.contains("a literal backslash in the rendered page"), "\(result.stderr)")
  }
}
