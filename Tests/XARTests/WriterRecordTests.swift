import TestSupport
import Testing
import XAR

/// The writer's compact records (names in one arena, owners interned, an open-addressing index
/// by parent and name) write back every entry as added, and refuse what the dictionary of full
/// names refused: a name taken twice, also in another Unicode spelling.
@Suite struct WriterRecordTests {
  @Test func thousandsOfEntriesAcrossChunksComeBackInOrderWithTheirAttributes() throws {
    let dir = try TemporaryDirectory()
    let path = dir.appending("many.xar")
    let writer = try XARWriter(path: path)
    let alice = XARWriter.Attributes(mode: 0o750, uid: 501, gid: 20, user: "alice", group: "staff")
    try writer.addDirectory("top", attributes: .init(mode: 0o755))
    var expected = ["top"]
    for d in 0..<3 {
      try writer.addDirectory("top/d\(d)", attributes: alice)
      expected.append("top/d\(d)")
      for f in 0..<3_000 {
        let name = "top/d\(d)/file-with-a-longer-name-\(f).txt"
        try writer.addFile(name, attributes: .init(mode: 0o644), compression: .zlib(level: 5), bytes: Array(name.utf8))
        expected.append(name)
      }
    }
    try writer.addSymlink("top/link", target: "d0/file-with-a-longer-name-7.txt", attributes: .init(mode: 0o755))
    try writer.addHardLink("top/hard", to: "top/d2/file-with-a-longer-name-2999.txt", attributes: .init(mode: 0o644))
    expected += ["top/link", "top/hard"]
    #expect(writer.contains("top/d1/file-with-a-longer-name-1234.txt"))
    #expect(!writer.contains("top/d1/file-with-a-longer-name-3000.txt"))
    #expect(!writer.contains("top/d9"))
    try writer.finish()

    let reader = try XARReader(path: path)
    let entries = Array(reader.entries)
    #expect(entries.map(\.path) == expected)
    #expect(entries[1].mode == 0o750 && entries[1].uid == 501 && entries[1].user == "alice")
    #expect(entries[1].group == "staff" && entries[1].gid == 20)
    #expect(entries[2].mode == 0o644 && entries[2].user == nil)
    let link = entries[entries.count - 2]
    #expect(link.kind == .symlink && link.linkTarget == "d0/file-with-a-longer-name-7.txt")
    let hard = entries[entries.count - 1]
    #expect(hard.kind == .hardLink && hard.hardLinkTarget == "top/d2/file-with-a-longer-name-2999.txt")
    let file = try #require(entries.firstIndex { $0.path == "top/d1/file-with-a-longer-name-1234.txt" })
    #expect(try reader.readData(of: entries[file]) == Array("top/d1/file-with-a-longer-name-1234.txt".utf8))
  }

  @Test func aNameTakenTwiceIsRefusedAlsoInAnotherUnicodeSpelling() throws {
    let dir = try TemporaryDirectory()
    let writer = try XARWriter(path: dir.appending("dup.xar"))
    try writer.addDirectory("d", attributes: .init(mode: 0o755))
    try writer.addFile("d/caf\u{E9}.txt", attributes: .init(mode: 0o644), compression: .none, bytes: [1])
    // The same name decomposed (NFD): one path on a Mac, and one entry here.
    #expect(writer.contains("d/cafe\u{301}.txt"))
    #expect(throws: XARError.duplicatePath("d/cafe\u{301}.txt")) {
      try writer.addFile("d/cafe\u{301}.txt", attributes: .init(mode: 0o644), compression: .none, bytes: [2])
    }
    // KELVIN SIGN is canonically equivalent to the ASCII letter K.
    try writer.addFile("d/K", attributes: .init(mode: 0o644), compression: .none, bytes: [3])
    #expect(throws: XARError.duplicatePath("d/\u{212A}")) {
      try writer.addFile("d/\u{212A}", attributes: .init(mode: 0o644), compression: .none, bytes: [4])
    }
    #expect(throws: XARError.duplicatePath("d")) {
      try writer.addDirectory("d", attributes: .init(mode: 0o755))
    }
    // A name in another folder is another entry.
    try writer.addDirectory("e", attributes: .init(mode: 0o755))
    try writer.addFile("e/caf\u{E9}.txt", attributes: .init(mode: 0o644), compression: .none, bytes: [5])
    #expect(throws: XARError.missingParent(path: "f/x", parent: "f")) {
      try writer.addFile("f/x", attributes: .init(mode: 0o644), compression: .none, bytes: [6])
    }
    #expect(throws: XARError.missingParent(path: "d/K/x", parent: "d/K")) {
      try writer.addFile("d/K/x", attributes: .init(mode: 0o644), compression: .none, bytes: [7])
    }
    try writer.finish()
  }
}
