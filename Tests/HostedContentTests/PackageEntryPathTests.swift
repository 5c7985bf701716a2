import Testing

@testable import HostedContent

/// `components`, `rootName` and `name` cut ASCII paths at `/` bytes and walk characters
/// otherwise; both ways must agree with a character split.
@Suite struct PackageEntryPathTests {
  static let paths = [
    "Contents", "Contents/a/b.txt", "ContentInfo.plist", "Project/ContentInfo.plist", "a//b/", "/x", "",
    "Contents/caf\u{E9}/\u{1F600}.png",
    // A `/` followed by a combining mark is one character, not a separator.
    "Contents/a/\u{301}b/c", "x/\u{301}",
  ]

  @Test(arguments: paths) func agreesWithCharacterSplit(path: String) {
    let entry = PackageEntry(path: path, kind: .file, mode: 0o644)
    let characters = path.split(separator: "/", omittingEmptySubsequences: false)
    #expect(entry.components.map(String.init) == characters.map(String.init))
    #expect(String(entry.rootName) == String(path[..<(path.firstIndex(of: "/") ?? path.endIndex)]))
    let name = path.lastIndex(of: "/").map { String(path[path.index(after: $0)...]) } ?? path
    #expect(String(entry.name) == name)
  }

  @Test func combiningMarkAfterSlashIsNoSeparator() {
    let entry = PackageEntry(path: "Contents/a/\u{301}b", kind: .file, mode: 0o644)
    #expect(entry.components.count == 2)
    #expect(entry.name == "a/\u{301}b")
  }
}
