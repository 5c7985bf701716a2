import Foundation
import HostedContent
import TestSupport
import Testing

@Suite struct ContentVersionTests {
  @Test(arguments: ["1", "1.0", "1.2.3", "0.0.0", "10.20.30"])
  func valid(text: String) throws {
    let v = try #require(ContentVersion(text))
    #expect(v.description == text)
  }

  @Test(arguments: ["", "1.", ".1", "1..2", "1.2.3.4", "a", "1.b", "-1", "1 .0", "+1", "1.0 ", "99999999999999999999"])
  func invalid(text: String) {
    #expect(ContentVersion(text) == nil)
    #expect(ContentVersion.problem(with: text) != nil)
  }

  @Test func comparesNumerically() {
    let v = { ContentVersion($0)! }
    #expect(v("1.10") > v("1.9"))
    #expect(v("1.0") == v("1.0.0"))
    #expect(v("1") == v("1.0"))
    #expect(v("2") > v("1.99.99"))
    #expect(v("1.0.1") > v("1.0"))
  }

  @Test(arguments: [
    ("1.0", ContentVersion.Part.last, "1.1"), ("1.2.3", .last, "1.2.4"), ("7", .last, "8"),
    ("1.4", .major, "2.0"), ("1.4.2", .major, "2.0.0"), ("1.4.2", .minor, "1.5.0"), ("3", .minor, "3.1"),
    ("1.4", .patch, "1.4.1"), ("1.4.2", .patch, "1.4.3"),
  ])
  func bumps(from: String, part: ContentVersion.Part, to: String) {
    #expect(ContentVersion(from)!.bumped(part).description == to)
  }
}

@Suite struct ContentInfoTests {
  let xml = """
    <?xml version="1.0" encoding="UTF-8"?>
    <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
    <plist version="1.0">
    <dict>
    \t<key>ContentVersion</key>
    \t<string>1.0</string>
    \t<key>IAPProductIdentifier</key>
    \t<string>com.example.book_chapter1</string>
    \t<key>Folder</key>
    \t<string>Chapter1</string>
    \t<key>Extra</key>
    \t<array><integer>3</integer><true/><real>1.5</real><data>AAEC</data><date>2020-01-02T03:04:05Z</date></array>
    </dict>
    </plist>

    """

  @Test func readsAppleXML() throws {
    let info = try ContentInfo(decoding: Array(xml.utf8))
    #expect(info.productIdentifier == "com.example.book_chapter1")
    #expect(info.contentVersion == ContentVersion("1.0"))
    #expect(info.format == .xml)
    #expect(info.properties["Folder"] == .string("Chapter1"))
  }

  @Test func rewriteKeepsOtherKeysAndOrder() throws {
    var info = try ContentInfo(decoding: Array(xml.utf8))
    info.contentVersion = info.contentVersion.bumped()
    let again = try ContentInfo(decoding: info.encoded())
    #expect(again.contentVersion.description == "1.1")
    guard case .dictionary(let pairs) = again.properties else {
      Issue.record("not a dict")
      return
    }
    #expect(pairs.map(\.key) == ["ContentVersion", "IAPProductIdentifier", "Folder", "Extra"])
    #expect(again.properties["Extra"] == info.properties["Extra"])
  }

  @Test func writesApplesLayout() {
    let info = ContentInfo(productIdentifier: "com.x.y", contentVersion: ContentVersion("2.1")!)
    let text = String(decoding: info.encoded(), as: UTF8.self)
    #expect(
      text == """
        <?xml version="1.0" encoding="UTF-8"?>
        <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
        <plist version="1.0">
        <dict>
        \t<key>ContentVersion</key>
        \t<string>2.1</string>
        \t<key>IAPProductIdentifier</key>
        \t<string>com.x.y</string>
        </dict>
        </plist>

        """)
  }

  /// Python's plistlib is an independent implementation of both formats.
  @Test func readsBinaryPlistsMadeByPython() throws {
    let dir = try TemporaryDirectory()
    let script = """
      import plistlib, datetime
      d = {"ContentVersion": "3.2.1", "IAPProductIdentifier": "com.example.levels", "Unicode": "Überstraße ✓",
           "N": [1, -5, 2**40, 1.25, True, False, b"\\x00\\x01", {"k": "v" * 40}], "When": datetime.datetime(2021, 5, 6, 7, 8, 9)}
      open("\(dir.appending("b.plist"))", "wb").write(plistlib.dumps(d, fmt=plistlib.FMT_BINARY))
      """
    let result = try runProcess("/usr/bin/env", ["python3", "-c", script])
    #expect(result.status == 0, "\(result.stderr)")
    let info = try ContentInfo(decoding: try readFile(dir.appending("b.plist")))
    #expect(info.format == .binary)
    #expect(info.contentVersion.description == "3.2.1")
    #expect(info.properties["Unicode"] == .string("Überstraße ✓"))
    #expect(
      info.properties["N"]
        == .array([
          .integer(1), .integer(-5), .integer(1 << 40), .real(1.25), .boolean(true), .boolean(false), .data([0, 1]),
          .dictionary([("k", .string(String(repeating: "v", count: 40)))]),
        ]))
    // Written back as binary, Python reads the same values.
    var bumped = info
    bumped.contentVersion = ContentVersion("3.2.2")!
    try writeFile(dir.appending("c.plist"), bumped.encoded())
    let check = try runProcess(
      "/usr/bin/env",
      [
        "python3", "-c",
        """
        import plistlib; d = plistlib.load(open("\(dir.appending("c.plist"))", "rb"))
        assert d["ContentVersion"] == "3.2.2", d; assert d["Unicode"] == "Überstraße ✓"; assert d["N"][2] == 2**40
        assert d["When"].year == 2021; print("ok")
        """,
      ])
    #expect(check.stdout == "ok\n", "\(check.stderr)")
  }

  @Test func problemsAreListed() {
    let plist = """
      <?xml version="1.0"?><plist version="1.0"><dict><key>ContentVersion</key><integer>1</integer>
      <key>IAPProductIdentifier</key><string>bad id!</string></dict></plist>
      """
    #expect(throws: ContentInfoError.self) { try ContentInfo(decoding: Array(plist.utf8)) }
    do { _ = try ContentInfo(decoding: Array(plist.utf8)) } catch let error as ContentInfoError {
      #expect(error.problems.count == 2)
      #expect(error.problems[0].contains("integer, not a string"))
      #expect(error.problems[1].contains("letters, digits"))
    } catch { Issue.record("\(error)") }
  }

  @Test func rootMustBeADictionary() {
    let plist = "<plist><array/></plist>"
    #expect(throws: ContentInfoError.invalid(["the root of the plist is a array, not a dictionary"])) {
      try ContentInfo(decoding: Array(plist.utf8))
    }
  }

  @Test func malformedXMLCarriesALine() {
    let plist = "<plist>\n<dict>\n<key>a</key>\n<string>x</strin>\n</dict></plist>"
    do {
      _ = try ContentInfo(decoding: Array(plist.utf8))
      Issue.record("accepted")
    } catch let error as ContentInfoError {
      guard case .unreadable(let inner) = error else {
        Issue.record("\(error)")
        return
      }
      #expect(inner.line == 4)
    } catch { Issue.record("\(error)") }
  }

  @Test func entitiesAreRefused() {
    let lol = """
      <?xml version="1.0"?>
      <!DOCTYPE plist [<!ENTITY a "aaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;">]>
      <plist><dict><key>ContentVersion</key><string>&b;</string></dict></plist>
      """
    #expect(throws: ContentInfoError.self) { try ContentInfo(decoding: Array(lol.utf8)) }
    let external = """
      <?xml version="1.0"?>
      <!DOCTYPE plist [<!ENTITY x SYSTEM "file:///etc/passwd">]>
      <plist><dict><key>ContentVersion</key><string>&x;</string></dict></plist>
      """
    #expect(throws: ContentInfoError.self) { try ContentInfo(decoding: Array(external.utf8)) }
  }

  @Test func hostileBinaryPlistsAreRefused() {
    var selfContaining = Array("bplist00".utf8) + [0xA1, 0x00]  // array holding itself
    let table = selfContaining.count
    selfContaining += [8]
    selfContaining += [0, 0, 0, 0, 0, 0, 1, 1] + be(1) + be(0) + be(UInt64(table))
    #expect(throws: ContentInfoError.self) { try ContentInfo(decoding: selfContaining) }
    var truncated = Array("bplist00".utf8) + [0x5F, 0x13, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF]
    let t2 = truncated.count
    truncated += [8]
    truncated += [0, 0, 0, 0, 0, 0, 1, 1] + be(1) + be(0) + be(UInt64(t2))
    #expect(throws: ContentInfoError.self) { try ContentInfo(decoding: truncated) }
    #expect(throws: ContentInfoError.self) { try ContentInfo(decoding: Array("bplist00 short".utf8)) }
  }

  func be(_ v: UInt64) -> [UInt8] { withUnsafeBytes(of: v.bigEndian) { Array($0) } }
}

@Suite struct ProductIdentifierTests {
  @Test(arguments: ["com.example.app", "A_b.9", "x"])
  func valid(id: String) { #expect(ProductIdentifier.problem(with: id) == nil) }

  @Test(arguments: ["", "com example", "com-example", "ü", "a/b", String(repeating: "a", count: 256)])
  func invalid(id: String) { #expect(ProductIdentifier.problem(with: id) != nil) }
}

@Suite struct FuzzRegressionTests {
  /// Inputs that once crashed a fuzz target (Fuzzing/regressions/), each with the outcome it
  /// must now have: a value that encodes in both formats and decodes back, or a typed error.
  static let propertyListRegressions: [String: Bool] = [
    "carriage-return-in-key": true,  // decodes
    "date-out-of-range": false,  // refused
    "offset-beyond-int": false,  // refused
  ]

  @Test func propertyListRegressionsHaveTheirOutcome() throws {
    let folder = repositoryRoot + "/Fuzzing/regressions/FuzzPropertyList"
    let names = try FileManager.default.contentsOfDirectory(atPath: folder).filter { $0 != "README" }
    #expect(Set(names) == Set(Self.propertyListRegressions.keys), "every regression input has an expected outcome")
    for name in names {
      let bytes = try readFile(folder + "/" + name)
      if Self.propertyListRegressions[name] == true {
        let (value, _) = try PropertyList.decode(bytes)
        for format in [PropertyListFormat.xml, .binary] {
          #expect(try PropertyList.decode(value.encoded(as: format)).0 == value, "\(name) as \(format)")
        }
      } else {
        #expect(throws: PropertyListError.self, "\(name)") { try PropertyList.decode(bytes) }
      }
    }
  }

  @Test func binaryDatesOutOfRangeAreRefused() {
    var plist = Array("bplist00".utf8) + [0x33] + withUnsafeBytes(of: (1e300).bitPattern.bigEndian) { Array($0) }
    let table = plist.count
    plist += [8]
    plist +=
      [0, 0, 0, 0, 0, 0, 1, 1] + [0, 0, 0, 0, 0, 0, 0, 1] + [0, 0, 0, 0, 0, 0, 0, 0]
      + withUnsafeBytes(of: UInt64(table).bigEndian) { Array($0) }
    #expect(throws: PropertyListError.self) { try PropertyList.decode(plist) }
  }
}
