import Foundation
import HostedContent
import TestSupport
import Testing

/// The name equivalence against the Unicode data itself (Debian's and Ubuntu's `unicode-data`
/// package, which scripts/bootstrap.sh installs) and against Python's `str.casefold()` and
/// `unicodedata`, an independent implementation.
@Suite struct NameEquivalenceTests {
  static let unicodeFolder = "/usr/share/unicode"
  static let caseFoldingPath = unicodeFolder + "/CaseFolding.txt"
  static var hasCaseFolding: Bool { FileManager.default.fileExists(atPath: caseFoldingPath) }
  static var normalizationTestPath: String? {
    [unicodeFolder + "/NormalizationTest.txt", unicodeFolder + "/NormalizationTest.txt.bz2"].first {
      FileManager.default.fileExists(atPath: $0)
    }
  }

  static func string(_ hex: some StringProtocol) -> String {
    var scalars = String.UnicodeScalarView()
    for part in hex.split(separator: " ") { scalars.append(Unicode.Scalar(UInt32(part, radix: 16)!)!) }
    return String(scalars)
  }

  static func scalars(_ s: String) -> [UInt32] { s.unicodeScalars.map(\.value) }

  /// Every C and F line of CaseFolding.txt: the table holds exactly these, and a code point and
  /// its folding are one name.
  @Test(.enabled(if: hasCaseFolding, "needs /usr/share/unicode/CaseFolding.txt (apt-get install unicode-data)"))
  func everyFullCaseFoldingIsOneName() throws {
    let text = try String(contentsOfFile: Self.caseFoldingPath, encoding: .utf8)
    let header = text.prefix { $0 != "\n" }
    var count = 0
    for line in text.split(separator: "\n") {
      let data = line.prefix { $0 != "#" }
      let fields = data.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }
      guard fields.count >= 3, fields[1] == "C" || fields[1] == "F" else { continue }
      count += 1
      let code = Unicode.Scalar(UInt32(fields[0], radix: 16)!)!
      let mapping = Self.string(fields[2])
      #expect(NameEquivalence.folding(of: code).map(\.value) == Self.scalars(mapping), "\(fields[0])")
      let key = NameEquivalence.key(String(code))
      #expect(key == NameEquivalence.key(mapping), "\(fields[0]) and its folding \(fields[2])")
      #expect(NameEquivalence.areEquivalent("Contents/" + String(code) + ".txt", "Contents/" + mapping + ".txt"))
      // A key is its own key.
      #expect(NameEquivalence.key(key).utf8.elementsEqual(key.utf8), "\(fields[0])")
    }
    #expect(count == NameEquivalence.foldingCount)
    #expect(header.contains("CaseFolding-\(NameEquivalence.caseFoldingVersion).txt"), "\(header)")
  }

  /// NormalizationTest.txt: the NFD that keys are made with is the file's NFD column; a line's
  /// NFC, NFD (and its NFKC, NFKD) forms are one name, and the
  /// difference between canonically equivalent spellings is named as normalization.
  @Test(.enabled(if: normalizationTestPath != nil, "needs /usr/share/unicode/NormalizationTest.txt(.bz2)"))
  func canonicallyEquivalentFormsAreOneName() throws {
    let path = Self.normalizationTestPath!
    let text =
      path.hasSuffix(".bz2")
      ? try runProcess(
        "/usr/bin/env",
        ["python3", "-c", "import bz2,sys;sys.stdout.write(bz2.open(sys.argv[1],'rt',encoding='utf-8').read())", path]
      ).stdout
      : try String(contentsOfFile: path, encoding: .utf8)
    var lines = 0
    for line in text.split(separator: "\n") where !line.hasPrefix("#") && !line.hasPrefix("@") {
      let columns = line.split(separator: ";", omittingEmptySubsequences: false).prefix(5).map { Self.string($0) }
      guard columns.count == 5 else { continue }
      lines += 1
      // The NFD itself: NFD(c1) = NFD(c2) = NFD(c3) = c3 and NFD(c4) = NFD(c5) = c5.
      for (source, expected) in [(0, 2), (1, 2), (2, 2), (3, 4), (4, 4)] {
        var nfd: [UInt32] = []
        NameEquivalence.decompose(Self.scalars(columns[source]), into: &nfd)
        #expect(nfd == Self.scalars(columns[expected]), "\(line): column \(source + 1)")
      }
      let canonical = columns[0...2].map(NameEquivalence.key)
      #expect(canonical[0] == canonical[1] && canonical[1] == canonical[2], "\(line)")
      #expect(NameEquivalence.key(columns[3]) == NameEquivalence.key(columns[4]), "\(line)")
      if !columns[0].utf8.elementsEqual(columns[2].utf8) {
        #expect(NameEquivalence.difference(columns[0], columns[2]) == .normalization, "\(line)")
      }
    }
    #expect(lines > 15_000)
  }

  /// Python's `unicodedata.normalize("NFD", unicodedata.normalize("NFD", s).casefold())`, on
  /// strings drawn from every code point with a folding, combining marks, ASCII and Hangul.
  @Test func agreesWithPython() throws {
    var pool: [UInt32] = Array(0x20...0x7E) + [0x300, 0x301, 0x307, 0x30A, 0x323, 0x342, 0x345, 0xAC00, 0x1100, 0x1161]
    pool += (0...0x1_FFFF).compactMap { Unicode.Scalar(UInt32($0)) }.filter {
      NameEquivalence.folding(of: $0) != [$0]
    }.map(\.value)
    var state: UInt64 = 0x9E37_79B9_7F4A_7C15
    func next(_ n: Int) -> Int {
      state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
      return Int((state >> 33) % UInt64(n))
    }
    var samples: [[UInt32]] = pool.map { [$0] }
    for _ in 0..<4000 { samples.append((0..<(1 + next(6))).map { _ in pool[next(pool.count)] }) }
    let script = """
      import json, sys, unicodedata
      out = []
      for s in json.load(sys.stdin):
          t = "".join(map(chr, s))
          if any(unicodedata.category(c) == "Cn" for c in t):
              out.append(None)  # not assigned in this Python's Unicode version
          else:
              out.append([ord(c) for c in unicodedata.normalize("NFD", unicodedata.normalize("NFD", t).casefold())])
      json.dump(out, sys.stdout)
      """
    let input = String(decoding: try JSONEncoder().encode(samples), as: UTF8.self)
    let result = try runProcess("/usr/bin/env", ["python3", "-c", script], stdin: input)
    #expect(result.status == 0, "\(result.stderr)")
    let keys = try JSONDecoder().decode([[UInt32]?].self, from: Data(result.stdout.utf8))
    #expect(keys.count == samples.count)
    var compared = 0
    for (sample, expected) in zip(samples, keys) {
      guard let expected else { continue }
      compared += 1
      let s = String(String.UnicodeScalarView(sample.map { Unicode.Scalar($0)! }))
      #expect(Self.scalars(NameEquivalence.key(s)) == expected, "\(sample.map { String($0, radix: 16) })")
    }
    #expect(compared > 5000)
  }

  @Test func theIssuesPairsAreOneName() {
    for (a, b) in [
      ("\u{17F}", "s"), ("\u{B5}", "\u{3BC}"), ("\u{3C2}", "\u{3C3}"), ("\u{3A3}", "\u{3C2}"), ("\u{212A}", "k"),
      ("stra\u{DF}e", "STRASSE"), ("\u{1E9E}", "ss"), ("\u{FB01}", "FI"), ("Level", "lEVEL"),
      ("caf\u{E9}", "CAFE\u{301}"), ("\u{1E9B}", "\u{1E60}"),
    ] {
      #expect(NameEquivalence.areEquivalent(a, b), "\(a) \(b)")
      #expect(NameEquivalence.areEquivalent("Contents/\(a)/x", "contents/\(b)/X"), "\(a) \(b)")
    }
    for (a, b) in [("a", "b"), ("\u{131}", "i"), ("i\u{307}", "i"), ("ss", "s"), ("e\u{301}", "e")] {
      #expect(!NameEquivalence.areEquivalent(a, b), "\(a) \(b)")
    }
  }

  @Test func differencesAreNamed() {
    #expect(NameEquivalence.difference("a", "a") == .none)
    #expect(NameEquivalence.difference("Level", "level") == .case)
    #expect(NameEquivalence.difference("\u{17F}", "s") == .case)
    #expect(NameEquivalence.difference("gro\u{DF}", "GROSS") == .case)
    #expect(NameEquivalence.difference("caf\u{E9}", "cafe\u{301}") == .normalization)
    #expect(NameEquivalence.difference("CAF\u{C9}", "cafe\u{301}") == .caseAndNormalization)
    #expect(NameEquivalence.difference("\u{1E9B}", "\u{1E60}") == .case)  // CaseFolding.txt: 1E9B; C; 1E61
    #expect(NameEquivalence.difference("\u{1E9B}", "s\u{307}") == .caseAndNormalization)
  }

  /// Names of ASCII only take a fast path; it must give what the full path gives.
  @Test func theASCIIFastPathIsTheFullKey() {
    for byte in UInt8(1)...0x7F {
      let s = "x" + String(UnicodeScalar(byte)) + "Y"
      // A non-ASCII character that folds to itself sends the name down the full path.
      let full = NameEquivalence.key(s + "\u{E9}")
      #expect(NameEquivalence.key(s) + "e\u{301}" == full)
      #expect((NameEquivalence.key(s) + "e\u{301}").utf8.elementsEqual(full.utf8))
    }
  }
}

/// The unpack sink's own checks (its second line of defence, which `--keep-going` leaves alone)
/// match names as the device does: on a case-sensitive disk, a link reached through another
/// spelling of its name, or a file under it, would be harmless here and an escape once copied
/// to APFS.
@Suite struct NameEquivalenceSinkTests {
  static let escapes = HostilePackage.all.filter { $0.name.hasPrefix("symlink escape through") }
  static let underLinks = HostilePackage.all.filter { $0.name.hasPrefix("file under a symlinked folder spelled") }

  static func unpackKeepingGoing(_ hostile: HostilePackage) throws -> (TemporaryDirectory, String) {
    let dir = try TemporaryDirectory()
    try hostile.make(dir.appending(hostile.fileName))
    var options = Unpack.Options()
    options.keepGoing = true
    let out = dir.appending("out")
    _ = try Unpack.run(package: dir.appending(hostile.fileName), destination: out, options: options)
    return (dir, out)
  }

  @Test(arguments: escapes)
  func theEscapingLinkIsNotCreated(hostile: HostilePackage) throws {
    let (dir, out) = try Self.unpackKeepingGoing(hostile)
    #expect(FileManager.default.fileExists(atPath: out + "/Contents/y"), "\(hostile.name): the safe file was kept")
    #expect((try? FileManager.default.destinationOfSymbolicLink(atPath: out + "/Contents/x")) == nil, "\(hostile.name)")
    withExtendedLifetime(dir) {}
  }

  @Test(arguments: underLinks)
  func nothingIsWrittenUnderTheLink(hostile: HostilePackage) throws {
    let (dir, out) = try Self.unpackKeepingGoing(hostile)
    let written = try FileManager.default.subpathsOfDirectory(atPath: out + "/Contents")
    #expect(!written.contains { $0.hasSuffix("x.txt") }, "\(hostile.name): \(written)")
    withExtendedLifetime(dir) {}
  }
}

/// `install` puts each product in `DOCS/<product id>`: two IDs that differ only by case are one
/// folder on APFS, so the second is refused on every file system, not mixed into the first.
@Suite struct NameEquivalenceInstallTests {
  @Test func aProductWhoseFolderNameFoldsToAnothersIsRefused() throws {
    let dir = try TemporaryDirectory()
    let project = dir.appending("p")
    try writeFile(
      project + "/ContentInfo.plist",
      ContentInfo(productIdentifier: "com.example.levels", contentVersion: ContentVersion("1.0")!).encoded())
    try writeFile(project + "/Contents/a.txt", "a\n")
    var build = Build.Options()
    build.output = dir.appending("levels.pkg")
    let package = try #require(try Build.run(directory: project, options: build).output)
    let docs = dir.appending("Documents")
    try FileManager.default.createDirectory(atPath: docs + "/com.Example.Levels/1.0", withIntermediateDirectories: true)

    #expect {
      try Install.run(package: package, into: docs, options: Install.Options())
    } throws: { error in
      "\(error)".contains("'com.Example.Levels', which is the same folder name on case-insensitive file systems")
    }
    #expect(try FileManager.default.contentsOfDirectory(atPath: docs) == ["com.Example.Levels"])

    // Into a folder of its own, it installs.
    let other = dir.appending("Other")
    try FileManager.default.createDirectory(atPath: other, withIntermediateDirectories: true)
    #expect(try Install.run(package: package, into: other, options: Install.Options()).action == .installed)
  }
}
