import Foundation
import HostedContent
import TestSupport
import Testing

/// A program using the library prints what the command line prints: `info`, `diff`, `build` and
/// `install` render their text and JSON through the library's reports (``OperationReport``).
@Suite struct OperationReportTests {
  @Test func theLibrarysReportsAreWhatTheCommandsPrint() throws {
    let dir = try TemporaryDirectory()
    #expect(try pkgtool(["init", "Book", "--product-id", "com.example.report"], in: dir.path).status == 0)
    try writeFile(dir.appending("Book/Contents/a.txt"), String(repeating: "chapter one\n", count: 40))
    try writeFile(dir.appending("Book/Contents/.DS_Store"), "junk")

    // build: the CLI's summary is the report's text, and its JSON the report's JSON, but for the
    // fields that differ between two builds of the same bytes (none: builds are reproducible).
    let built = try pkgtool(["build", "Book", "-o", "v1.pkg", "--json"], in: dir.path)
    #expect(built.status == 0, "\(built.stderr)")
    var options = Build.Options()
    options.output = dir.appending("again.pkg")
    let again = try Build.run(directory: dir.appending("Book"), options: options)
    var report = BuildReport(again, displayPath: "Book", format: .xar, strict: false)
    let json = try #require(
      try JSONSerialization.jsonObject(with: Data(report.json.utf8)) as? [String: Any])
    let cli = try #require(try JSONSerialization.jsonObject(with: Data(built.stdout.utf8)) as? [String: Any])
    #expect(json["sha256"] as? String == cli["sha256"] as? String)
    #expect(json["leftOut"] as? [String] == cli["leftOut"] as? [String])
    #expect(Set(json.keys) == Set(cli.keys))
    let text = try pkgtool(["build", "Book", "-o", "again2.pkg"], in: dir.path)
    report.result.output = "again2.pkg"
    #expect(text.stdout == report.text)

    // info and diff: the same bytes, word for word.
    try writeFile(dir.appending("Book/Contents/b.txt"), "chapter two\n")
    #expect(try pkgtool(["bump", "Book"], in: dir.path).status == 0)
    #expect(try pkgtool(["build", "Book", "-o", "v2.pkg"], in: dir.path).status == 0)
    for files in [false, true] {
      let info = try PackageInfo.run(path: dir.appending("v2.pkg"), includeFiles: files)
      let shown = try pkgtool(["info", dir.appending("v2.pkg")] + (files ? ["--files"] : []))
      #expect(shown.stdout == InfoReport(info, displayPath: dir.appending("v2.pkg")).text)
      let shownJSON = try pkgtool(["info", dir.appending("v2.pkg"), "--json"] + (files ? ["--files"] : []))
      #expect(shownJSON.stdout == InfoReport(info, displayPath: dir.appending("v2.pkg")).json)
    }
    let diff = try PackageDiff.run(old: dir.appending("v1.pkg"), new: dir.appending("v2.pkg"))
    let both = [dir.appending("v1.pkg"), dir.appending("v2.pkg")]
    #expect(try pkgtool(["diff"] + both).stdout == DiffReport(diff).text)
    #expect(try pkgtool(["diff"] + both + ["--json"]).stdout == DiffReport(diff).json)
    #expect(DiffReport(diff).text.contains("+ Contents/b.txt"))

    // install: the text of an install into a fresh folder.
    try FileManager.default.createDirectory(atPath: dir.appending("D1"), withIntermediateDirectories: true)
    try FileManager.default.createDirectory(atPath: dir.appending("D2"), withIntermediateDirectories: true)
    let installed = try pkgtool(["install", "v2.pkg", "--into", "D1"], in: dir.path)
    let result = try Install.run(
      package: dir.appending("v2.pkg"), into: dir.appending("D2"), options: Install.Options())
    let libraryText = InstallReport(result, displayPath: "v2.pkg", strict: false, keep: nil).text
    #expect(installed.stdout == libraryText.replacingOccurrences(of: dir.appending("D2"), with: "D1"))
    #expect(libraryText.hasPrefix("installed com.example.report 1.1 into "))
  }
}
