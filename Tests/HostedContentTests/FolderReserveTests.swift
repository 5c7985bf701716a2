import Foundation
import HostedContent
import SystemIO
import TestSupport
import Testing

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// ``FolderReserve``: folders made ahead beside an output and renamed into place, on real
/// folders in a temporary folder; and ``SafeDirectorySink`` taking its folders from one.
@Suite struct FolderReserveTests {
  static func names(_ path: String) throws -> [String] {
    try FileManager.default.contentsOfDirectory(atPath: path).sorted()
  }

  static func mode(_ path: String) throws -> mode_t {
    var info = stat()
    guard lstat(path, &info) == 0 else { throw SystemError("stat", path: path) }
    return info.st_mode
  }

  /// A temporary folder holding an empty folder `inner`: (the folder, its handle, inner's).
  static func sandbox(_ inner: String = "target") throws -> (TemporaryDirectory, DirectoryHandle, DirectoryHandle) {
    let folder = try TemporaryDirectory()
    let parent = try DirectoryHandle(path: folder.path)
    try parent.createDirectory(inner)
    return (folder, parent, try parent.openDirectory(inner))
  }

  static var umaskBits: mode_t {
    let old = umask(0o022)
    umask(old)
    return old
  }

  @Test func aTakenFolderIsEmptyWithTheModeOfAMadeOneAndNothingIsLeftBehind() throws {
    let (folder, parent, target) = try Self.sandbox()
    let reserve = FolderReserve(beside: "out", in: parent, inPlaceFirst: 0, firstBatch: 4)
    // Nothing is made before the first take.
    #expect(try Self.names(folder.path) == ["target"])
    #expect(reserve.take("a", in: target))
    try target.createDirectory("made")
    let taken = folder.appending("target/a")
    #expect(try Self.names(taken).isEmpty)
    #expect(try Self.mode(taken) & S_IFMT == S_IFDIR)
    let madeMode = try Self.mode(folder.appending("target/made"))
    #expect(try Self.mode(taken) & 0o7777 == madeMode & 0o7777)
    #expect(try Self.mode(taken) & 0o7777 == 0o755 & ~Self.umaskBits)
    // The reserve sits beside the output under pkgtool's temporary names, and goes with discard.
    let holders = try Self.names(folder.path).filter { TemporaryName.target(of: Substring($0)) == "out" }
    #expect(holders.count == 1 && holders[0].hasPrefix(TemporaryName.prefix(of: "out") + "folders-"))
    #expect(try Self.names(folder.appending(holders[0])).count == 3)
    reserve.discard()
    #expect(try Self.names(folder.path) == ["target"])
    #expect(try Self.names(folder.appending("target")) == ["a", "made"])
  }

  @Test func takeNeverReplacesWhatIsThere() throws {
    let (folder, parent, target) = try Self.sandbox()
    try writeFile(folder.appending("target/file"), "kept")
    try target.createDirectory("folder")
    try writeFile(folder.appending("target/folder/inside"), "kept too")
    try target.createSymlink("link", target: "/nowhere")
    let reserve = FolderReserve(beside: "out", in: parent, inPlaceFirst: 0)
    #expect(!reserve.take("file", in: target))
    #expect(!reserve.take("folder", in: target))
    #expect(!reserve.take("link", in: target))
    #expect(reserve.taken == 0)
    #expect(try readFile(folder.appending("target/file")) == Array("kept".utf8))
    #expect(try Self.names(folder.appending("target/folder")) == ["inside"])
    #expect(try target.readLink("link") == "/nowhere")
    // A refused take gives its folder back: the next one still works.
    #expect(reserve.take("new", in: target))
    reserve.discard()
    #expect(try Self.names(folder.path) == ["target"])
  }

  @Test func aReserveRefillsInGrowingBatches() throws {
    let (folder, parent, target) = try Self.sandbox()
    let reserve = FolderReserve(beside: "out", in: parent, inPlaceFirst: 0, firstBatch: 2, largestBatch: 8)
    for index in 0..<40 { #expect(reserve.take("f\(index)", in: target)) }
    #expect(reserve.taken == 40)
    #expect(try Self.names(folder.appending("target")).count == 40)
    // 2 + 8 + 8 + 8 + 8 + 8 = 42 made, 40 taken.
    let holder = try Self.names(folder.path).first { $0.contains(".pkgtool-folders-") }
    #expect(try Self.names(folder.appending(holder ?? "?")).count == 2)
    reserve.discard()
    #expect(try Self.names(folder.path) == ["target"])
  }

  /// A package's first folders are made in place: a small tree makes no spares at all.
  @Test func theFirstFoldersAreMadeInPlace() throws {
    let (folder, parent, root) = try Self.sandbox("root")
    let reserve = FolderReserve(beside: "root", in: parent, inPlaceFirst: 3)
    let sink = SafeDirectorySink(root: root, reserve: reserve)
    for index in 0..<3 {
      #expect(try sink.begin(PackageEntry(path: "d\(index)", kind: .directory, mode: 0o755)) == nil)
    }
    #expect(reserve.taken == 0)
    #expect(try Self.names(folder.path) == ["root"])
    #expect(try sink.begin(PackageEntry(path: "d3", kind: .directory, mode: 0o755)) == nil)
    #expect(reserve.taken == 1)
    #expect(try Self.names(folder.path).count == 2)
    reserve.discard()
    #expect(try Self.names(folder.path) == ["root"])
    #expect(try Self.names(folder.appending("root")) == ["d0", "d1", "d2", "d3"])
  }

  /// Where the file system lacks room to spare, the reserve makes nothing and the sink makes
  /// its folders in place (the reserve once took a full disk's last inodes: an unpack that fit
  /// failed with ENOSPC).
  @Test func withoutRoomToSpareNothingIsMadeAhead() throws {
    let (folder, parent, root) = try Self.sandbox("root")
    let reserve = FolderReserve(beside: "root", in: parent, inPlaceFirst: 0, minimumFreeBytes: .max)
    let sink = SafeDirectorySink(root: root, reserve: reserve)
    for path in ["Contents", "Contents/a", "Contents/b"] {
      #expect(try sink.begin(PackageEntry(path: path, kind: .directory, mode: 0o755)) == nil)
    }
    #expect(reserve.taken == 0)
    #expect(try Self.names(folder.path) == ["root"])  // no holding folder either
    #expect(try Self.names(folder.appending("root/Contents")) == ["a", "b"])
    reserve.discard()
    #expect(try Self.names(folder.path) == ["root"])
  }

  /// The sink takes every folder it makes, listed or implied, from the reserve, and the tree
  /// it writes is the one it writes without one.
  @Test func theSinkTakesItsFoldersFromTheReserve() throws {
    let entries: [(PackageEntry, String?)] = [
      (PackageEntry(path: "Contents", kind: .directory, mode: 0o755), nil),
      (PackageEntry(path: "Contents/a", kind: .directory, mode: 0o755), nil),
      (PackageEntry(path: "Contents/a/one.txt", kind: .file, mode: 0o644, size: 3), "one"),
      (PackageEntry(path: "Contents/b/c/two.txt", kind: .file, mode: 0o644, size: 3), "two"),
      (PackageEntry(path: "Contents/a", kind: .directory, mode: 0o755), nil),
    ]
    var trees: [[String]] = []
    for withReserve in [true, false] {
      let (folder, parent, root) = try Self.sandbox("root")
      let reserve = withReserve ? FolderReserve(beside: "root", in: parent, inPlaceFirst: 0) : nil
      let sink = SafeDirectorySink(root: root, reserve: reserve)
      for (entry, text) in entries {
        #expect(try sink.begin(entry) == nil)
        if let text { try Array(text.utf8).withUnsafeBytes { try sink.write($0) } }
        try sink.end(entry)
      }
      try sink.waitForWrites()
      if let reserve {
        #expect(reserve.taken == 4)  // Contents, a, b, b/c
        reserve.discard()
      }
      let rootPath = folder.appending("root")
      let tree = FileManager.default.enumerator(atPath: rootPath)!.allObjects.map { "\($0)" }.sorted()
      for path in tree where (try? Self.mode(rootPath + "/" + path)).map({ $0 & S_IFMT == S_IFDIR }) == true {
        #expect(try Self.mode(rootPath + "/" + path) & 0o7777 == 0o755 & ~Self.umaskBits)
      }
      #expect(try readFile(rootPath + "/Contents/b/c/two.txt") == Array("two".utf8))
      #expect(try Self.names(folder.path) == ["root"])
      trees.append(tree)
    }
    #expect(trees[0] == trees[1])
  }
}
