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
  /// Per path: bit 0 an entry's path, bit 1 a folder implied by a longer path.
  private var roles: [UInt8] = []
  /// Path numbers by hash; -1 is empty. Kept at most half full.
  private var slots = [Int32](repeating: -1, count: 64)
  private static let entry: UInt8 = 1
  private static let implied: UInt8 = 2

  package init() {}

  /// How many entry paths are stored.
  package private(set) var entryCount = 0

  /// True if `path` is an entry or an implied folder.
  package func contains(_ path: String) -> Bool { find(path) != nil }

  /// True if `path` is an entry's path.
  package func containsEntry(_ path: String) -> Bool {
    guard let n = find(path) else { return false }
    return roles[Int(n)] & PathIndex.entry != 0
  }

  /// The number of an entry's path, if it is stored; ``path(_:)`` gives it back.
  package func number(of path: String) -> Int32? {
    guard let n = find(path), roles[Int(n)] & PathIndex.entry != 0 else { return nil }
    return n
  }

  /// The path stored as `number`.
  package func path(_ number: Int32) -> String {
    String(decoding: bytes[Int(starts[Int(number)])..<Int(starts[Int(number) + 1])], as: UTF8.self)
  }

  /// The entries' paths (made on demand), in the order first seen.
  package var entryPaths: [String] {
    roles.indices.filter { roles[$0] & PathIndex.entry != 0 }.map { path(Int32($0)) }
  }

  /// Records an entry's path and the folders above it.
  package func insert(_ path: String) {
    if let n = find(path) {
      if roles[Int(n)] & PathIndex.entry == 0 { entryCount += 1 }
      roles[Int(n)] |= PathIndex.entry
    } else {
      add(path, role: PathIndex.entry)
      entryCount += 1
    }
    var prefix = Substring(path)
    while let slash = prefix.lastIndex(of: "/") {
      prefix = prefix[..<slash]
      if find(prefix) != nil { break }
      add(prefix, role: PathIndex.implied)
    }
  }

  // MARK: The table

  /// FNV-1a: the same bytes always land in the same slot, whatever the run.
  private static func hash<C: Sequence<UInt8>>(_ bytes: C) -> Int {
    var h: UInt64 = 0xcbf2_9ce4_8422_2325
    for byte in bytes { h = (h ^ UInt64(byte)) &* 0x100_0000_01b3 }
    return Int(truncatingIfNeeded: h)
  }

  private func find<S: StringProtocol>(_ path: S) -> Int32? {
    let mask = slots.count - 1
    var slot = PathIndex.hash(path.utf8) & mask
    while true {
      let n = slots[slot]
      if n < 0 { return nil }
      if equals(n, path) { return n }
      slot = (slot + 1) & mask
    }
  }

  private func equals<S: StringProtocol>(_ number: Int32, _ path: S) -> Bool {
    let start = Int(starts[Int(number)])
    let end = Int(starts[Int(number) + 1])
    return bytes[start..<end].elementsEqual(path.utf8)
  }

  private func add<S: StringProtocol>(_ path: S, role: UInt8) {
    let number = Int32(roles.count)
    bytes.append(contentsOf: path.utf8)
    starts.append(UInt32(truncatingIfNeeded: bytes.count))
    roles.append(role)
    if roles.count * 2 > slots.count {
      grow()
    } else {
      place(number, hash: PathIndex.hash(path.utf8))
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
