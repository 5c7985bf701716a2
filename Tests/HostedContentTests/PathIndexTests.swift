import HostedContent
import Testing

/// The run's `PathIndex` answers as a plain set of paths would, for any bytes a package can name
/// (empty components, leading and trailing slashes, one path a prefix of another), and gives
/// every path back byte for byte from its number.
@Suite struct PathIndexTests {
  /// The model: entry paths, and every prefix up to a slash of one as an implied folder.
  private struct Model {
    var entries: [String] = []
    var entrySet: Set<[UInt8]> = []
    var implied: Set<[UInt8]> = []

    mutating func insert(_ path: String) {
      let bytes = Array(path.utf8)
      if entrySet.insert(bytes).inserted { entries.append(path) }
      for (i, byte) in bytes.enumerated() where byte == UInt8(ascii: "/") { implied.insert(Array(bytes[..<i])) }
    }
  }

  @Test func answersAsASetOfPathsWould() {
    var seed: UInt64 = 42
    func pick(_ n: Int) -> Int {
      seed = seed &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
      return Int(seed >> 33) % n
    }
    let parts = ["", "a", "b", "Contents", "é", "e\u{301}", "x.json", ".", ".."]
    func randomPath() -> String {
      (0...pick(4)).map { _ in parts[pick(parts.count)] }.joined(separator: "/")
    }
    let index = PathIndex()
    var model = Model()
    let fixed = ["a//b", "/x", "a/", "", "Contents/x/y.json", "Contents/x", "Contents"]
    for path in fixed + (0..<2_000).map({ _ in randomPath() }) {
      index.insert(path)
      model.insert(path)
      #expect(index.number(of: path).map(index.path) == path)
    }
    #expect(index.entryCount == model.entries.count)
    let seen = index.entryPaths.map { Array($0.utf8) }
    #expect(Set(seen) == model.entrySet && seen.count == model.entries.count)
    for _ in 0..<3_000 {
      let probe = randomPath()
      let bytes = Array(probe.utf8)
      #expect(index.containsEntry(probe) == model.entrySet.contains(bytes), "\(probe)")
      #expect(index.contains(probe) == (model.entrySet.contains(bytes) || model.implied.contains(bytes)), "\(probe)")
    }
    // Marks: only entries take one; an implied folder is never marked.
    #expect(index.mark("Contents/x/y.json"))
    #expect(index.isMarked("Contents/x/y.json") && !index.isMarked("Contents/x/y"))
    #expect(index.unmark("Contents/x/y.json") && !index.isMarked("Contents/x/y.json"))
    #expect(!index.mark("Contents/x/nothing"))
  }
}
