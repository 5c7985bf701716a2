import Foundation

/// One node of a folder tree, as seen by `lstat`, never following links.
package struct SnapshotNode: Equatable, CustomStringConvertible {
  package enum Kind: Equatable { case file, directory, symlink, other }
  package var kind: Kind
  package var mode: UInt32
  package var bytes: [UInt8]
  package var linkTarget: String?
  package var inode: UInt64

  package var description: String {
    "\(kind) mode=\(String(mode, radix: 8)) size=\(bytes.count) link=\(linkTarget ?? "-")"
  }
}

/// Every node under `root`, keyed by relative path.
package func snapshot(_ root: String) throws -> [String: SnapshotNode] {
  var result: [String: SnapshotNode] = [:]
  func walk(_ relative: String) throws {
    let full = relative.isEmpty ? root : root + "/" + relative
    for name in try FileManager.default.contentsOfDirectory(atPath: full).sorted() {
      let rel = relative.isEmpty ? name : relative + "/" + name
      let path = root + "/" + rel
      var info = stat()
      guard lstat(path, &info) == 0 else { throw TestFailure("lstat \(path)") }
      let type = info.st_mode & S_IFMT
      var node = SnapshotNode(
        kind: .other, mode: UInt32(info.st_mode & 0o7777), bytes: [], linkTarget: nil,
        inode: UInt64(info.st_ino))
      switch type {
      case S_IFREG:
        node.kind = .file
        node.bytes = try readFile(path)
      case S_IFDIR:
        node.kind = .directory
      case S_IFLNK:
        node.kind = .symlink
        node.linkTarget = try FileManager.default.destinationOfSymbolicLink(atPath: path)
      default:
        break
      }
      result[rel] = node
      if node.kind == .directory { try walk(rel) }
    }
  }
  try walk("")
  return result
}
