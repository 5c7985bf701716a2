import SystemIO
import XAR

/// Every path a run has seen, shared by the rules that need the whole picture (so each does not
/// keep its own copy): the entries' paths, and the folders their paths imply (archives may omit
/// folder entries).
///
/// Paths are kept as a tree: each path is its folder's number and its last component, whose bytes
/// sit back to back in a chunked arena (growing never copies them), so a folder's path is stored
/// once however many paths are in it. Paths are found through an open-addressing table keyed by
/// (folder, component): about 25 bytes a path beyond its last component, where a `Set<String>`
/// costs an allocation and some 100 bytes each, plus every path's full bytes.
///
/// Components are what lies between slashes, empty ones included, so every path (`a//b`, `/a`,
/// `a/`) comes back byte for byte.
package final class PathIndex {
  /// Every stored component's bytes.
  private var names = ByteArena()
  /// Path `n` is `parents[n]`'s path (none if -1), a slash, and `names[nameStarts[n], nameLengths[n]]`.
  private var parents: [Int32] = []
  private var nameStarts: [UInt32] = []
  private var nameLengths: [UInt32] = []
  /// Per path: bit 0 an entry's path, bit 1 a folder implied by a longer path, bit 2 the mark
  /// of ``mark(_:)``.
  private var roles: [UInt8] = []
  /// Path numbers by hash of (folder, component); -1 is empty. Kept at most half full.
  private var slots = [Int32](repeating: -1, count: 64)
  private static let entry: UInt8 = 1
  private static let implied: UInt8 = 2
  private static let marked: UInt8 = 4

  /// The folder looked up last (its bytes, without the final slash) and its number: paths come
  /// folder by folder, so most lookups only need their last component.
  private var lastFolder: [UInt8] = []
  private var lastFolderNumber: Int32 = -2

  /// The number of the entry path inserted last, -1 before the first, and its bytes.
  private var lastEntry: Int32 = -1
  private var lastEntryPath: [UInt8] = []

  package init() {}

  /// How many entry paths are stored.
  package private(set) var entryCount = 0

  /// True if `path` is an entry or an implied folder.
  package func contains(_ path: String) -> Bool { find(path) != nil }

  /// True if `path` is an entry's path.
  package func containsEntry(_ path: String) -> Bool { number(of: path) != nil }

  /// True if the path stored as `number` is also a folder that a longer path implies.
  package func isImpliedFolder(_ number: Int32) -> Bool {
    number >= 0 && Int(number) < roles.count && roles[Int(number)] & PathIndex.implied != 0
  }

  /// Marks a stored entry path (the unpack sink marks the files it wrote, so it keeps no
  /// second set of paths); false if `path` is not an entry's.
  @discardableResult
  package func mark(_ path: String) -> Bool {
    guard let n = number(of: path) else { return false }
    roles[Int(n)] |= PathIndex.marked
    return true
  }

  /// Takes the mark off `path`; true if it was marked.
  @discardableResult
  package func unmark(_ path: String) -> Bool {
    guard let n = find(path), roles[Int(n)] & PathIndex.marked != 0 else { return false }
    roles[Int(n)] &= ~PathIndex.marked
    return true
  }

  /// True if `path` was marked.
  package func isMarked(_ path: String) -> Bool {
    guard let n = find(path) else { return false }
    return roles[Int(n)] & PathIndex.marked != 0
  }

  /// The number of an entry's path, if it is stored; ``path(_:)`` gives it back. The path
  /// inserted last is found without hashing.
  package func number(of path: String) -> Int32? {
    var path = path
    return path.withUTF8 { bytes in
      if lastEntry >= 0 && bytes.elementsEqual(lastEntryPath) { return lastEntry }
      guard let n = find(bytes), roles[Int(n)] & PathIndex.entry != 0 else { return nil }
      return n
    }
  }

  private func find(_ path: String) -> Int32? {
    var path = path
    return path.withUTF8 { find($0) }
  }

  /// The path stored as `number`.
  package func path(_ number: Int32) -> String {
    var chain: [Int32] = []
    var n = number
    while n >= 0 {
      chain.append(n)
      n = parents[Int(n)]
    }
    var bytes: [UInt8] = []
    for (i, n) in chain.reversed().enumerated() {
      if i > 0 { bytes.append(UInt8(ascii: "/")) }
      bytes += component(Int(n))
    }
    return String(decoding: bytes, as: UTF8.self)
  }

  /// The entries' paths (made on demand), in the order they were first stored (a folder's path
  /// is stored when a path in it is, before it is an entry's).
  package var entryPaths: [String] {
    roles.indices.filter { roles[$0] & PathIndex.entry != 0 }.map { path(Int32($0)) }
  }

  /// Makes room for `count` paths (plus a little for implied folders), so the index does not
  /// grow by doubling. (The components' bytes are kept in chunks and never need it.)
  package func reserve(count: Int) {
    let count = count + count / 16 + 16
    parents.reserveCapacity(count)
    nameStarts.reserveCapacity(count)
    nameLengths.reserveCapacity(count)
    roles.reserveCapacity(count)
    var size = slots.count
    while size < 2 * count { size *= 2 }
    if size > slots.count { rehash(size) }
  }

  /// Records an entry's path and the folders above it.
  package func insert(_ path: String) {
    var path = path
    path.withUTF8 { bytes in
      var parent: Int32 = -1
      var start = 0
      if let slash = bytes.lastIndex(of: UInt8(ascii: "/")) {
        parent = folder(UnsafeBufferPointer(rebasing: bytes[..<slash]), creating: true)!
        start = slash + 1
      }
      let name = UnsafeBufferPointer(rebasing: bytes[start...])
      let n: Int32
      if let found = lookup(parent: parent, name: name) {
        n = found
        if roles[Int(n)] & PathIndex.entry == 0 { entryCount += 1 }
        roles[Int(n)] |= PathIndex.entry
      } else {
        n = add(parent: parent, name: name, role: PathIndex.entry)
        entryCount += 1
      }
      lastEntry = n
      lastEntryPath.removeAll(keepingCapacity: true)
      lastEntryPath.append(contentsOf: bytes)
    }
  }

  // MARK: The table

  private func component(_ n: Int) -> ArraySlice<UInt8> { names[Int(nameStarts[n]), Int(nameLengths[n])] }

  private func find(_ path: UnsafeBufferPointer<UInt8>) -> Int32? {
    guard let slash = path.lastIndex(of: UInt8(ascii: "/")) else { return lookup(parent: -1, name: path) }
    guard let parent = folder(UnsafeBufferPointer(rebasing: path[..<slash]), creating: false) else { return nil }
    return lookup(parent: parent, name: UnsafeBufferPointer(rebasing: path[(slash + 1)...]))
  }

  /// The number of the folder `path`; with `creating`, missing folders are added as implied.
  private func folder(_ path: UnsafeBufferPointer<UInt8>, creating: Bool) -> Int32? {
    if lastFolderNumber != -2 && path.elementsEqual(lastFolder) {
      // (A lookup may have cached it: a folder found for a longer path is implied from now on.)
      if creating && lastFolderNumber >= 0 { roles[Int(lastFolderNumber)] |= PathIndex.implied }
      return lastFolderNumber
    }
    var parent: Int32 = -1
    var start = 0
    while true {
      let end = path[start...].firstIndex(of: UInt8(ascii: "/")) ?? path.count
      let name = UnsafeBufferPointer(rebasing: path[start..<end])
      if let n = lookup(parent: parent, name: name) {
        parent = n
        if creating { roles[Int(n)] |= PathIndex.implied }
      } else if creating {
        parent = add(parent: parent, name: name, role: PathIndex.implied)
      } else {
        return nil
      }
      if end == path.count { break }
      start = end + 1
    }
    lastFolder.removeAll(keepingCapacity: true)
    lastFolder.append(contentsOf: path)
    lastFolderNumber = parent
    return parent
  }

  /// FNV-1a over the folder's number and the component: the same path always lands in the same
  /// slot, whatever the run.
  private static func hash<C: Sequence<UInt8>>(parent: Int32, _ name: C) -> Int {
    var h: UInt64 = 0xcbf2_9ce4_8422_2325
    var p = UInt32(bitPattern: parent)
    for _ in 0..<4 {
      h = (h ^ UInt64(p & 0xFF)) &* 0x100_0000_01b3
      p >>= 8
    }
    for byte in name { h = (h ^ UInt64(byte)) &* 0x100_0000_01b3 }
    return Int(truncatingIfNeeded: h)
  }

  private func lookup(parent: Int32, name: UnsafeBufferPointer<UInt8>) -> Int32? {
    let mask = slots.count - 1
    var slot = PathIndex.hash(parent: parent, name) & mask
    while true {
      let n = slots[slot]
      if n < 0 { return nil }
      let i = Int(n)
      if parents[i] == parent && Int(nameLengths[i]) == name.count
        && names.withBytes(at: Int(nameStarts[i]), count: name.count, { $0.elementsEqual(name) })
      {
        return n
      }
      slot = (slot + 1) & mask
    }
  }

  private func add(parent: Int32, name: UnsafeBufferPointer<UInt8>, role: UInt8) -> Int32 {
    let number = Int32(roles.count)
    parents.append(parent)
    nameStarts.append(UInt32(names.append(name)))
    nameLengths.append(UInt32(name.count))
    roles.append(role)
    if roles.count * 2 > slots.count {
      rehash(slots.count * 2)
    } else {
      place(number, hash: PathIndex.hash(parent: parent, name))
    }
    return number
  }

  private func place(_ number: Int32, hash: Int) {
    let mask = slots.count - 1
    var slot = hash & mask
    while slots[slot] >= 0 { slot = (slot + 1) & mask }
    slots[slot] = number
  }

  private func rehash(_ size: Int) {
    slots = [Int32](repeating: -1, count: size)
    for n in roles.indices {
      place(Int32(n), hash: PathIndex.hash(parent: parents[n], component(n)))
    }
  }
}
