import Foundation

/// A small, seedable random number generator (SplitMix64), so test data is the same every run.
package struct SeededGenerator: RandomNumberGenerator {
  private var state: UInt64
  package init(seed: UInt64) { state = seed }
  package mutating func next() -> UInt64 {
    state &+= 0x9E37_79B9_7F4A_7C15
    var z = state
    z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
    z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
    return z ^ (z >> 31)
  }
}

/// A tree to put on disk or into an archive: folders, files, symlinks and hard links.
package struct TreeSpec {
  package enum Node: Equatable {
    case directory
    case file([UInt8])
    case symlink(String)
    /// A second name for the file at the given path (which comes earlier in `nodes`).
    case hardLink(String)
  }
  /// In an order where every parent comes before its children.
  package var nodes: [(path: String, node: Node)] = []

  package init() {}

  /// A random tree: nested folders, empty files and folders, files of many sizes (some larger than
  /// one I/O chunk), compressible and incompressible data, symlinks, hard links, and names with
  /// spaces and non-ASCII letters.
  package static func random(seed: UInt64, entries: Int = 60) -> TreeSpec {
    var rng = SeededGenerator(seed: seed)
    var spec = TreeSpec()
    var folders = [""]
    var files: [String] = []
    let stems = ["a", "level 1", "Überblick", "日本語", "café", "x-y_z", "naïve name", "emoji😀", "data"]
    var used = Set<String>()
    func fresh(in folder: String) -> String {
      while true {
        let stem = stems[Int.random(in: 0..<stems.count, using: &rng)]
        let name = "\(stem)\(Int.random(in: 0..<1000, using: &rng))"
        let path = folder.isEmpty ? name : folder + "/" + name
        if used.insert(path).inserted { return path }
      }
    }
    for _ in 0..<entries {
      let folder = folders[Int.random(in: 0..<folders.count, using: &rng)]
      let path = fresh(in: folder)
      switch Int.random(in: 0..<10, using: &rng) {
      case 0...2:
        spec.nodes.append((path, .directory))
        folders.append(path)
      case 3...6:
        let size: Int
        switch Int.random(in: 0..<6, using: &rng) {
        case 0: size = 0
        case 1: size = Int.random(in: 1..<16, using: &rng)
        case 2: size = Int.random(in: 1000..<5000, using: &rng)
        case 3: size = Int.random(in: 300_000..<700_000, using: &rng)
        default: size = Int.random(in: 1..<70_000, using: &rng)
        }
        let compressible = Bool.random(using: &rng)
        var bytes = [UInt8](repeating: 0, count: size)
        for i in 0..<size {
          bytes[i] = compressible ? UInt8(ascii: "a") + UInt8(i % 7) : UInt8.random(in: 0...255, using: &rng)
        }
        spec.nodes.append((path, .file(bytes)))
        files.append(path)
      case 7, 8:
        let target = files.isEmpty ? "missing" : "../" + files[Int.random(in: 0..<files.count, using: &rng)]
        spec.nodes.append((path, .symlink(target)))
      default:
        if let original = files.randomElement(using: &rng) {
          spec.nodes.append((path, .hardLink(original)))
        } else {
          spec.nodes.append((path, .directory))
          folders.append(path)
        }
      }
    }
    return spec
  }

  /// Creates the tree under `root`.
  package func materialize(at root: String) throws {
    for (path, node) in nodes {
      let full = root + "/" + path
      switch node {
      case .directory:
        try FileManager.default.createDirectory(atPath: full, withIntermediateDirectories: true)
        chmod(full, 0o755)
      case .file(let bytes): try writeFile(full, bytes)
      case .symlink(let target):
        try FileManager.default.createSymbolicLink(atPath: full, withDestinationPath: target)
      case .hardLink(let original):
        guard link(root + "/" + original, full) == 0 else { throw TestFailure("link \(full)") }
      }
    }
  }
}
