import SystemIO

/// Every path a run has seen, shared by the rules that need the whole picture (so each does not
/// keep its own copy): the entries' paths, and the folders their paths imply (archives may omit
/// folder entries).
///
/// Paths are stored once, back to back in one byte array, and found through an open-addressing
/// table of path numbers: about 40 bytes a path beyond its own bytes, where a `Set<String>` costs
/// an allocation and some 100 bytes each.
package final class PathIndex {
  /// Every stored path's bytes, back to back.
  private var bytes: [UInt8] = []
  /// Path `n` is `bytes[starts[n]..<starts[n + 1]]`.
  private var starts: [UInt32] = [0]
  /// Per path: bit 0 an entry's path, bit 1 a folder implied by a longer path, bit 2 the mark
  /// of ``mark(_:)``.
  private var roles: [UInt8] = []
  /// Path numbers by hash; -1 is empty. Kept at most half full.
  private var slots = [Int32](repeating: -1, count: 64)
  private static let entry: UInt8 = 1
  private static let implied: UInt8 = 2
  private static let marked: UInt8 = 4

  package init() {}

  /// How many entry paths are stored.
  package private(set) var entryCount = 0

  /// True if `path` is an entry or an implied folder.
  package func contains(_ path: String) -> Bool { find(path) != nil }

  /// True if `path` is an entry's path.
  package func containsEntry(_ path: String) -> Bool { number(of: path) != nil }

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
      if lastEntry >= 0 && equals(lastEntry, bytes) { return lastEntry }
      guard let n = find(bytes), roles[Int(n)] & PathIndex.entry != 0 else { return nil }
      return n
    }
  }

  /// The number of the entry path inserted last, -1 before the first.
  private var lastEntry: Int32 = -1

  private func equals(_ number: Int32, _ path: UnsafeBufferPointer<UInt8>) -> Bool {
    let start = Int(starts[Int(number)])
    let end = Int(starts[Int(number) + 1])
    guard end - start == path.count else { return false }
    return bytes.withUnsafeBufferPointer { UnsafeBufferPointer(rebasing: $0[start..<end]).elementsEqual(path) }
  }

  private func find(_ path: String) -> Int32? {
    var path = path
    return path.withUTF8 { find($0) }
  }

  /// The path stored as `number`.
  package func path(_ number: Int32) -> String {
    String(decoding: bytes[Int(starts[Int(number)])..<Int(starts[Int(number) + 1])], as: UTF8.self)
  }

  /// The entries' paths (made on demand), in the order first seen.
  package var entryPaths: [String] {
    roles.indices.filter { roles[$0] & PathIndex.entry != 0 }.map { path(Int32($0)) }
  }

  /// Makes room for `count` paths of `bytes` bytes in all (plus a little for implied folders),
  /// so the index does not grow by doubling.
  package func reserve(count: Int, bytes: Int) {
    let count = count + count / 16 + 16
    self.bytes.reserveCapacity(bytes + bytes / 16)
    starts.reserveCapacity(count + 1)
    roles.reserveCapacity(count)
    var size = slots.count
    while size < 2 * count { size *= 2 }
    if size > slots.count {
      slots = [Int32](repeating: -1, count: size)
      for n in roles.indices { place(Int32(n), hash: PathIndex.hash(self.bytes[Int(starts[n])..<Int(starts[n + 1])])) }
    }
  }

  /// Records an entry's path and the folders above it.
  package func insert(_ path: String) {
    var path = path
    path.withUTF8 { bytes in
      if let n = find(bytes) {
        if roles[Int(n)] & PathIndex.entry == 0 { entryCount += 1 }
        roles[Int(n)] |= PathIndex.entry
        lastEntry = n
      } else {
        lastEntry = Int32(roles.count)
        add(bytes, role: PathIndex.entry)
        entryCount += 1
      }
      var end = bytes.count
      while let slash = bytes[..<end].lastIndex(of: UInt8(ascii: "/")) {
        end = slash
        let prefix = UnsafeBufferPointer(rebasing: bytes[..<end])
        if find(prefix) != nil { break }
        add(prefix, role: PathIndex.implied)
      }
    }
  }

  // MARK: The table

  /// FNV-1a: the same bytes always land in the same slot, whatever the run.
  private static func hash<C: Sequence<UInt8>>(_ bytes: C) -> Int {
    var h: UInt64 = 0xcbf2_9ce4_8422_2325
    for byte in bytes { h = (h ^ UInt64(byte)) &* 0x100_0000_01b3 }
    return Int(truncatingIfNeeded: h)
  }

  private func find(_ path: UnsafeBufferPointer<UInt8>) -> Int32? {
    let mask = slots.count - 1
    var slot = PathIndex.hash(path) & mask
    return bytes.withUnsafeBufferPointer { stored in
      while true {
        let n = slots[slot]
        if n < 0 { return nil }
        let start = Int(starts[Int(n)])
        let end = Int(starts[Int(n) + 1])
        if end - start == path.count && UnsafeBufferPointer(rebasing: stored[start..<end]).elementsEqual(path) {
          return n
        }
        slot = (slot + 1) & mask
      }
    }
  }

  private func add(_ path: UnsafeBufferPointer<UInt8>, role: UInt8) {
    let number = Int32(roles.count)
    bytes.append(contentsOf: path)
    starts.append(UInt32(truncatingIfNeeded: bytes.count))
    roles.append(role)
    if roles.count * 2 > slots.count {
      grow()
    } else {
      place(number, hash: PathIndex.hash(path))
    }
  }

  private func place(_ number: Int32, hash: Int) {
    let mask = slots.count - 1
    var slot = hash & mask
    while slots[slot] >= 0 { slot = (slot + 1) & mask }
    slots[slot] = number
  }

  private func grow() {
    slots = [Int32](repeating: -1, count: slots.count * 2)
    for n in roles.indices {
      place(Int32(n), hash: PathIndex.hash(bytes[Int(starts[n])..<Int(starts[n + 1])]))
    }
  }
}
