import SystemIO
import TestSupport
import Testing
import XAR

/// The compact TOC records give back every field as the TOC has it, the rare ones (kept in a
/// side table) included, with paths joined from parents' names.
@Suite struct EntryTableTests {
  func open(_ toc: String) throws -> XARReader {
    let dir = try TemporaryDirectory()
    let path = dir.appending("x.xar")
    try CraftedXAR(toc: CraftedXAR.document(toc)).write(to: path)
    return try XARReader(path: path)
  }

  @Test func rareFieldsAndJoinedPathsComeBackAsStored() throws {
    let reader = try open(
      """
      <file id="10"><name>dir</name><type>directory</type><mode>0750</mode><user>alice</user><group>staff</group>
        <file id="11"><name>inner</name><type>directory</type>
          <file id="12"><name>a.txt</name><type>file</type><uid>5000000000</uid><gid>4294967295</gid>
            <mtime>2021-03-04T05:06:07Z</mtime></file>
        </file>
        <file id="big-id"><name>link</name><type>symlink</type><link>inner/a.txt</link><user>alice</user></file>
      </file>
      <file id="13"><name>second</name><type link="12">hardlink</type></file>
      <file id="14"><name>odd</name><type>whiteout</type></file>
      """)
    let entries = Array(reader.entries)
    #expect(entries.map(\.path) == ["dir", "dir/inner", "dir/inner/a.txt", "dir/link", "second", "odd"])
    #expect(entries.map(\.id) == ["10", "11", "12", "big-id", "13", "14"])
    #expect(entries[0].mode == 0o750 && entries[0].user == "alice" && entries[0].group == "staff")
    #expect(entries[1].mode == nil && entries[1].user == nil)
    #expect(entries[2].uid == 5_000_000_000, "a uid past 32 bits survives")
    #expect(entries[2].gid == 4_294_967_295)
    #expect(entries[2].mtime?.iso8601 == "2021-03-04T05:06:07Z")
    #expect(entries[3].kind == .symlink && entries[3].linkTarget == "inner/a.txt" && entries[3].user == "alice")
    #expect(entries[4].kind == .hardLink && entries[4].hardLinkTarget == "dir/inner/a.txt")
    #expect(entries[5].kind == .other && entries[5].typeName == "whiteout")
    #expect(reader.entries.path(at: 2) == "dir/inner/a.txt")
    #expect(reader.entries.pathLength(at: 2) == 15)
  }

  @Test func attributeAndTextEntitiesAreDecodedAsAnyReaderDecodesThem() throws {
    let reader = try open(
      """
      <file id="a&amp;b&#65;"><name>x&lt;y&#x41;</name><type>file</type></file>
      <file id="2"><name>h</name><type link="a&amp;bA">hardlink</type></file>
      <file id="3"><name><![CDATA[c&d]]></name><type>file</type></file>
      """)
    #expect(reader.entries.map(\.id) == ["a&bA", "2", "3"])
    #expect(reader.entries.map(\.path) == ["x<yA", "h", "c&d"])
    #expect(reader.entries[1].hardLinkTarget == "x<yA")
  }

  @Test func theSecondOfThreeEqualIDsIsTheOneReported() {
    let toc = CraftedXAR.document(
      (1...3).map { "<file id=\"7\"><name>f\($0)</name><type>file</type></file>" }.joined(separator: "\n"))
    #expect(throws: XARError.invalidValue(line: 6, element: "file id", value: "7")) {
      let dir = try TemporaryDirectory()
      try CraftedXAR(toc: toc).write(to: dir.appending("x.xar"))
      _ = try XARReader(path: dir.appending("x.xar"))
    }
  }

  @Test func valuesPastTheCompactFieldsComeBackWhole() throws {
    // A record holds 16-bit name and id lengths and 32-bit data lengths and sizes; larger ones
    // (a name or id past 64 KiB, data past 4 GiB) go to a side table and must come back whole.
    let longName = String(repeating: "n", count: 70_000)
    let longID = String(repeating: "7", count: 66_000)
    let dir = try TemporaryDirectory()
    let path = dir.appending("x.xar")
    try CraftedXAR(
      toc: CraftedXAR.document(
        """
        <file id="1"><name>d</name><type>directory</type>
          <file id="\(longID)"><name>\(longName)</name><type>file</type></file>
          <file id="3"><name>big</name><type>file</type><data><offset>5000000000</offset>
            <length>4294967296</length><size>4294967296</size><encoding style="application/octet-stream"/></data></file>
          <file id="4"><name>small</name><type>file</type><data><offset>20</offset><length>4294967295</length>
            <size>4294967295</size><encoding style="application/octet-stream"/></data></file>
        </file>
        """)
    ).write(to: path)
    var limits = XARReader.Limits()
    limits.maxPathBytes = 100_000
    limits.acceptsTruncation = true
    let reader = try XARReader(path: path, limits: limits)
    let entries = Array(reader.entries)
    #expect(entries.map(\.path) == ["d", "d/" + longName, "d/big", "d/small"])
    #expect(entries.map(\.id) == ["1", longID, "3", "4"])
    #expect(reader.entries.pathLength(at: 1) == 70_002)
    #expect(entries[2].data?.offset == 5_000_000_000)
    #expect(entries[2].data?.length == 4_294_967_296 && entries[2].data?.size == 4_294_967_296)
    #expect(reader.entries.storedRange(at: 2)?.length == 4_294_967_296)
    #expect(reader.entries.sizes(at: 3) == (4_294_967_295, 4_294_967_295))
    #expect(entries[3].data?.length == 4_294_967_295 && entries[3].data?.offset == 20)
  }

  @Test func manyEntriesCrossChunksAndKeepTheirOrder() throws {
    let count = 9_000
    let files = (0..<count).map { "<file id=\"\($0 + 1)\"><name>n\($0)</name><type>file</type></file>" }
    let reader = try open("<file id=\"0\"><name>d</name><type>directory</type>\(files.joined())</file>")
    #expect(reader.entries.count == count + 1)
    #expect(reader.entries[4_097].path == "d/n4096")
    #expect(reader.entries[count].path == "d/n\(count - 1)")
  }
}
