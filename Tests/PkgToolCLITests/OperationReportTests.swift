import Foundation
import HostedContent
import TestSupport
import Testing

/// A program using the library prints what the command line prints: every command but
/// `validate` renders its text and JSON through the library's reports (``OperationReport``).
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

  /// The keys of a `--json` object.
  func keys(_ json: String) throws -> Set<String> {
    Set(try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any]).keys)
  }

  /// `unpack`, `bump`, `export background-assets` and `publish`: the CLI prints the library's
  /// report, text and JSON, byte for byte (the destination named as the CLI was given it).
  @Test func unpackBumpExportAndPublishPrintTheLibrarysReports() throws {
    let dir = try TemporaryDirectory()
    #expect(try pkgtool(["init", "Book", "--product-id", "com.example.report"], in: dir.path).status == 0)
    try writeFile(dir.appending("Book/Contents/a.txt"), "chapter one\n")
    #expect(try pkgtool(["build", "Book", "-o", "v1.pkg", "-q"], in: dir.path).status == 0)
    let package = dir.appending("v1.pkg")

    // unpack
    let unpacked = try Unpack.run(package: package, destination: dir.appending("U0"), options: Unpack.Options())
    for (json, folder) in [(false, "U1"), (true, "U2")] {
      let cli = try pkgtool(["unpack", package, "-o", dir.appending(folder)] + (json ? ["--json"] : []))
      #expect(cli.status == 0, "\(cli.stderr)")
      var report = UnpackReport(unpacked, displayPath: package, strict: false)
      report.result.output = dir.appending(folder)
      #expect(cli.stdout == (json ? report.json : report.text))
    }
    let unpackReport = UnpackReport(unpacked, displayPath: package, strict: false)
    #expect(
      unpackReport.text
        == "unpacked com.example.report 1.0 into \(dir.appending("U0"))/ (\(unpacked.fileCount) files, \(unpacked.byteCount) bytes)\n"
    )
    #expect(
      try keys(unpackReport.json) == [
        "package", "output", "unpacked", "valid", "skipped", "productIdentifier", "contentVersion", "files",
        "contentSize", "writtenSize", "findings", "schemaVersion",
      ])

    // bump (a dry run, so that both see 1.0)
    let bumped = try Bump.run(path: dir.appending("Book"), change: .raise(.last), dryRun: true)
    let bumpReport = BumpReport(bumped, dryRun: true)
    #expect(try pkgtool(["bump", dir.appending("Book"), "--dry-run"]).stdout == bumpReport.text)
    #expect(try pkgtool(["bump", dir.appending("Book"), "--dry-run", "--json"]).stdout == bumpReport.json)
    #expect(bumpReport.text == "com.example.report: 1.0 → 1.1 (dry run: nothing changed)\n")
    #expect(bumpReport.json.contains("\"changed\" : false,\n  \"format\" : \"xml\",\n  \"new\" : \"1.1\""))

    // export background-assets
    let exported = try ExportBackgroundAssets.run(
      source: package, to: dir.appending("E0"), options: ExportBackgroundAssets.Options())
    for (json, folder) in [(false, "E1"), (true, "E2")] {
      let cli = try pkgtool(
        ["export", "background-assets", package, "-o", dir.appending(folder)] + (json ? ["--json"] : []))
      #expect(cli.status == 0, "\(cli.stderr)")
      var report = ExportReport(exported, displayPath: package, outputPath: dir.appending(folder), strict: false)
      report.result.output = dir.appending(folder)
      #expect(cli.stdout == (json ? report.json : report.text))
    }
    let exportReport = ExportReport(exported, displayPath: package, outputPath: dir.appending("E0"), strict: false)
    #expect(
      exportReport.text
        == "exported com-example-report (prefetch, iOS) into \(dir.appending("E0"))/: Contents/ (1 files) and Manifest.json\nnext, on a Mac: cd \(dir.appending("E0")) && xcrun ba-package Manifest.json -o ../E0.aar\n"
    )
    #expect(try keys(exportReport.json).isSuperset(of: ["assetPackID", "policy", "replacedSymlinks", "leftOutJunk"]))

    // publish: the same package to two new catalogs, one by the CLI, one by the library.
    #expect(try pkgtool(["keygen", "-o", "signing.key", "-q"], in: dir.path).status == 0)
    let key = try CatalogSigningKey(contentsOf: dir.appending("signing.key"))
    let published = try Publish.run(
      packages: [package], key: key, output: dir.appending("c0.json"),
      options: Publish.Options(baseURL: "https://cdn.example.com/"))
    let publish = ["publish", package, "--key", "signing.key", "--base-url", "https://cdn.example.com/", "-o"]
    let cliJSON = try pkgtool(publish + ["c1.json", "--json"], in: dir.path)
    var publishReport = PublishReport(published, catalogPath: "c1.json", keyIDs: [key.publicKey.keyID], strict: false)
    #expect(cliJSON.stdout == publishReport.json)
    let cliText = try pkgtool(publish + ["c2.json"], in: dir.path)
    publishReport.catalogPath = "c2.json"
    // The expiry is the only difference: each catalog's own.
    let expires = try #require(try CatalogFile.unverified(contentsOf: dir.appending("c2.json")).catalog.expires)
    #expect(
      cliText.stdout == publishReport.text.replacingOccurrences(of: published.catalog.expires ?? "", with: expires))
    #expect(publishReport.text.hasPrefix("published com.example.report 1.0 in c2.json (sequence 1, expires 20"))
    #expect(
      try pkgtool(publish + ["c2.json"], in: dir.path).stdout
        == "c2.json already lists these packages, byte for byte; nothing written\n")
  }

  /// `catalog show`, `catalog verify`, `catalog renew`, `root show` and `rules`: the CLI prints
  /// the library's report, text and JSON, byte for byte.
  @Test func catalogRootAndRulesPrintTheLibrarysReports() throws {
    let dir = try TemporaryDirectory()
    try makeTwoBookPackages(in: dir)
    #expect(try pkgtool(["keygen", "-o", "signing.key", "-q"], in: dir.path).status == 0)
    let published = try pkgtool(
      [
        "publish", "book 1.0.pkg", "book 1.1.pkg", "--key", "signing.key", "--base-url", "https://cdn.example.com/",
        "-o", "catalog.json", "--min-app-version", "2.0",
      ], in: dir.path)
    #expect(published.status == 0, "\(published.stderr)")

    // catalog show
    let (catalog, keyIDs) = try CatalogFile.unverified(contentsOf: dir.appending("catalog.json"))
    let show = CatalogShowReport(catalog, keyIDs: keyIDs, displayPath: "catalog.json")
    #expect(try pkgtool(["catalog", "show", "catalog.json"], in: dir.path).stdout == show.text)
    #expect(try pkgtool(["catalog", "show", "catalog.json", "--json"], in: dir.path).stdout == show.json)
    #expect(show.text.hasPrefix("catalog.json: sequence 1, expires 20"))
    #expect(show.text.contains("\ncom.example.book\n  1.0  xar  "))
    #expect(show.text.contains("  app 2.0+\n"))
    #expect(try keys(show.json) == ["catalog", "keyIds", "verified", "schemaVersion"])
    var hostile = show
    hostile.catalog.products[0].productIdentifier = "evil\nvalid: 'x'\t"
    #expect(hostile.text.contains("\nevil\\nvalid: 'x'\\t\n"))

    // catalog verify
    let key = try CatalogPublicKey(contentsOf: dir.appending("signing.key.pub"))
    let verified = try CatalogFile.verify(contentsOf: dir.appending("catalog.json"), publicKey: key)
    let verify = CatalogVerifyReport(verified, displayPath: "catalog.json", trusted: .key(id: key.keyID))
    #expect(
      try pkgtool(["catalog", "verify", "catalog.json", "--public-key", "signing.key.pub"], in: dir.path).stdout
        == verify.text)
    #expect(
      verify.text
        == "valid: 'catalog.json', sequence 1, expires \(verified.expires ?? ""), key \(key.keyID), 1 product(s), 2 version(s)\n"
    )

    // catalog renew: the same edit of two copies, one by the CLI, one by the library.
    try FileManager.default.copyItem(atPath: dir.appending("catalog.json"), toPath: dir.appending("copy.json"))
    let renewed = try pkgtool(["catalog", "renew", "catalog.json", "--key", "signing.key"], in: dir.path)
    let edit = try CatalogEdit.renew(
      dir.appending("copy.json"), key: try CatalogSigningKey(contentsOf: dir.appending("signing.key")))
    let expires = try #require(try CatalogFile.unverified(contentsOf: dir.appending("catalog.json")).catalog.expires)
    let editReport = CatalogEditReport(edit, change: .renewed, displayPath: "catalog.json", keyIDs: [key.keyID])
    #expect(renewed.stdout == editReport.text.replacingOccurrences(of: edit.catalog.expires ?? "", with: expires))
    #expect(editReport.text.hasPrefix("renewed in catalog.json: sequence 1 -> 2, expires 20"))
    #expect(
      CatalogEditReport(edit, change: .removed(product: "p", version: "1.0"), displayPath: "c", keyIDs: ["k1", "k2"])
        .text.hasPrefix("withdrew p 1.0 in c: sequence 1 -> 2"))
    var rebase = edit
    (rebase.movedURLs, rebase.urlCount) = (2, 2)
    #expect(
      CatalogEditReport(rebase, change: .rebased, displayPath: "c", keyIDs: []).text.hasPrefix("moved 2 URLs in c"))
    (rebase.movedURLs, rebase.urlCount) = (1, 3)
    #expect(
      CatalogEditReport(rebase, change: .rebased, displayPath: "c", keyIDs: []).text.hasPrefix(
        "moved 1 of 3 URLs (the others were already there) in c"))

    // root show
    #expect(
      try pkgtool(
        ["root", "init", "-o", "root.json", "--root-key", "signing.key", "--catalog-key", "signing.key.pub", "-q"],
        in: dir.path
      ).status == 0)
    let root = try RootFile.parse(contentsOf: dir.appending("root.json")).root
    let rootReport = RootShowReport(root, displayPath: "root.json")
    #expect(try pkgtool(["root", "show", "root.json"], in: dir.path).stdout == rootReport.text)
    #expect(try pkgtool(["root", "show", "root.json", "--json"], in: dir.path).stdout == rootReport.json)
    #expect(rootReport.text.hasPrefix("root.json: root version 1, expires 20"))
    #expect(rootReport.text.hasSuffix("catalog keys (1 must sign): \(key.keyID)\n"))
    #expect(try keys(rootReport.json) == ["type", "version", "expires", "keys", "roles", "schemaVersion"])

    // rules, all and one
    let all = RuleListingReport(listing: RuleCatalog.descriptions)
    #expect(try pkgtool(["rules"]).stdout == all.text)
    #expect(try pkgtool(["rules", "--json"]).stdout == all.json)
    #expect(try keys(all.json) == ["rules", "schemaVersion"])
    #expect(!all.json.contains("\"triggering\""))
    let one = try #require(RuleCatalog.descriptions.first { $0.id == "content-version-increase" })
    let explained = RuleListingReport(explaining: one)
    #expect(try pkgtool(["rules", one.id]).stdout == explained.text)
    #expect(try pkgtool(["rules", one.id, "--json"]).stdout == explained.json)
    #expect(try keys(explained.json).isSuperset(of: ["id", "triggering", "nonTriggering", "schemaVersion"]))
    #expect(explained.text.contains("\n  Reported, for example:\n    - "))
    #expect(explained.text.hasSuffix("  Note: it runs only with validate --against OLD.\n\n"))
  }
}
