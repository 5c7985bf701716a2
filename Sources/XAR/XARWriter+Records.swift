import Dispatch
import SystemIO

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

// The compact records a XARWriter keeps per entry, and how entries are added to them. Like the
// reader's XAREntryTable: no path and no Swift object per entry. A record is 40 bytes, kept in
// chunks (the table never copies itself to grow); names sit back to back in a chunked arena;
// owners and times are interned (a build has one or a few); the index by (parent, name) is an
// open-addressing table of 8-byte slots.
extension XARWriter {
  struct Record {
    var parent: Int32
    var firstChild: Int32 = -1
    var lastChild: Int32 = -1
    var nextSibling: Int32 = -1
    /// The name's bytes in `RecordTable.names`.
    var nameStart: UInt32
    var nameLength: UInt32
    var mode: UInt32
    /// Index into `RecordTable.owners`.
    var owner: Int32
    /// The number of its record in the writer's `DataSpill`, or -1.
    var data: Int32 = -1
    /// What the writer makes: a file, a folder, a symlink or a hard link.
    var kind: EntryKind
    var isHardLinkOriginal = false
  }

  /// The attributes other than the mode: shared by (nearly) every entry of a build.
  struct Owner: Hashable {
    var uid: UInt64
    var gid: UInt64
    var user: String?
    var group: String?
    var mtime: XARTimestamp
  }

  /// The entries added so far and their index by (parent, name).
  ///
  /// Names are compared as Swift compares strings (equal up to Unicode canonical equivalence),
  /// so two spellings of one name (NFC and NFD) are one entry, as they are on a Mac.
  struct RecordTable {
    private(set) var records = ChunkedArray<Record>()
    private var names = ByteArena()
    private var owners: [Owner] = []
    private var ownerNumbers: [Owner: Int32] = [:]
    /// Targets of symlinks, by record.
    var linkTargets: [Int32: String] = [:]
    /// The file each hard link names, by record.
    var hardLinkOf: [Int32: Int32] = [:]
    /// Open addressing: the high 32 bits hold the name's hash, the low 32 the record number + 1;
    /// 0 is empty. Kept at most half full.
    private var slots = [UInt64](repeating: 0, count: 1024)

    var count: Int { records.count }

    subscript(index: Int32) -> Record {
      get { records[Int(index)] }
      set { records[Int(index)] = newValue }
    }

    func name(of record: Record) -> String {
      String(decoding: names[Int(record.nameStart), Int(record.nameLength)], as: UTF8.self)
    }

    func attributes(of record: Record) -> Attributes {
      let o = owners[Int(record.owner)]
      return Attributes(mode: record.mode, uid: o.uid, gid: o.gid, user: o.user, group: o.group, mtime: o.mtime)
    }

    private static func hash(parent: Int32, name: Substring) -> UInt32 {
      var hasher = Hasher()
      hasher.combine(parent)
      hasher.combine(name)  // as String hashes: the same for canonically equivalent names
      return UInt32(truncatingIfNeeded: hasher.finalize())
    }

    private func matches(_ record: Record, parent: Int32, name: Substring) -> Bool {
      guard record.parent == parent else { return false }
      let stored = names[Int(record.nameStart), Int(record.nameLength)]
      if name.utf8.elementsEqual(stored) { return true }
      // Different bytes can still be one name (NFC and NFD): only when either is not ASCII.
      if stored.allSatisfy({ $0 < 0x80 }) && name.utf8.allSatisfy({ $0 < 0x80 }) { return false }
      return String(decoding: stored, as: UTF8.self) == name
    }

    /// The record named `name` in `parent` (-1: the root), if any.
    func find(parent: Int32, name: Substring) -> Int32? {
      let hash = RecordTable.hash(parent: parent, name: name)
      let mask = slots.count - 1
      var i = Int(hash) & mask
      while true {
        let slot = slots[i]
        if slot == 0 { return nil }
        if UInt32(slot >> 32) == hash {
          let index = Int32(truncatingIfNeeded: slot & 0xFFFF_FFFF) - 1
          if matches(records[Int(index)], parent: parent, name: name) { return index }
        }
        i = (i + 1) & mask
      }
    }

    /// Adds a record; the caller has checked that the name is not taken.
    mutating func append(parent: Int32, name: Substring, kind: EntryKind, attributes: Attributes) -> Int32 {
      let index = Int32(records.count)
      let owner = Owner(
        uid: attributes.uid, gid: attributes.gid, user: attributes.user, group: attributes.group,
        mtime: attributes.mtime)
      let ownerNumber: Int32
      if let known = ownerNumbers[owner] {
        ownerNumber = known
      } else {
        ownerNumber = Int32(owners.count)
        owners.append(owner)
        ownerNumbers[owner] = ownerNumber
      }
      let start = names.append(name.utf8)
      records.append(
        Record(
          parent: parent, nameStart: UInt32(start), nameLength: UInt32(name.utf8.count), mode: attributes.mode,
          owner: ownerNumber, kind: kind))
      if (records.count + 1) * 2 > slots.count { grow() }
      insert(hash: RecordTable.hash(parent: parent, name: name), index: index)
      return index
    }

    private mutating func insert(hash: UInt32, index: Int32) {
      let mask = slots.count - 1
      var i = Int(hash) & mask
      while slots[i] != 0 { i = (i + 1) & mask }
      slots[i] = UInt64(hash) << 32 | UInt64(UInt32(bitPattern: index + 1))
    }

    private mutating func grow() {
      let old = slots
      slots = [UInt64](repeating: 0, count: old.count * 2)
      for slot in old where slot != 0 {
        insert(hash: UInt32(slot >> 32), index: Int32(truncatingIfNeeded: slot & 0xFFFF_FFFF) - 1)
      }
    }
  }

  func setData(
    _ record: Int32, offset: UInt64, length: UInt64, size: UInt64, gzip: Bool, archived: XARChecksum?,
    extracted: XARChecksum?
  ) throws {
    var digests: (archived: [UInt8], extracted: [UInt8])? = nil
    if options.checksum != .none, let archived, let extracted { digests = (archived.digest, extracted.digest) }
    table[record].data = try dataSpill.append(offset: offset, length: length, size: size, gzip: gzip, digests: digests)
  }

  /// The record at `path` (components between slashes), if added.
  func lookup(_ path: Substring) -> Int32? {
    var parent: Int32 = -1
    var rest = path
    while true {
      let slash = rest.firstIndex(of: "/") ?? rest.endIndex
      guard let i = table.find(parent: parent, name: rest[..<slash]) else { return nil }
      parent = i
      if slash == rest.endIndex { return parent }
      rest = rest[rest.index(after: slash)...]
    }
  }

  func lookupParent(_ path: Substring) -> Int32? {
    if let last = lastParent.path, last == path { return lastParent.index }
    return lookup(path)
  }

  func addRecord(_ path: String, kind: EntryKind, attributes: Attributes) throws -> Int32 {
    guard !finished else { throw XARError.writerFinished }
    let (parentPath, name) = try XARWriter.split(path)
    var parent: Int32 = -1
    if let parentPath {
      guard let p = lookupParent(parentPath), table[p].kind == .directory else {
        throw XARError.missingParent(path: path, parent: String(parentPath))
      }
      parent = p
      lastParent = (parentPath, p)
    } else {
      lastParent = (nil, -1)
    }
    guard table.find(parent: parent, name: name) == nil else { throw XARError.duplicatePath(path) }
    let i = table.append(parent: parent, name: name, kind: kind, attributes: attributes)
    if parent >= 0 {
      if table[parent].lastChild >= 0 {
        table[table[parent].lastChild].nextSibling = i
      } else {
        table[parent].firstChild = i
      }
      table[parent].lastChild = i
    } else {
      if rootLast >= 0 { table[rootLast].nextSibling = i } else { rootFirst = i }
      rootLast = i
    }
    return i
  }

  /// `path` as its folder (nil at the top) and its last component; refuses empty, absolute,
  /// NUL-holding paths and empty, `.` or `..` components.
  static func split(_ path: String) throws -> (parent: Substring?, name: Substring) {
    guard !path.isEmpty else { throw XARError.invalidPath(path, reason: "the path is empty") }
    guard !path.hasPrefix("/") else {
      throw XARError.invalidPath(path, reason: "absolute paths are not allowed")
    }
    guard !path.utf8.contains(0) else {
      throw XARError.invalidPath(path, reason: "the path holds a NUL byte")
    }
    var componentStart = path.utf8.startIndex
    var lastSlash: String.Index? = nil
    var index = path.utf8.startIndex
    func check(_ component: Substring.UTF8View) throws {
      if component.isEmpty || component.elementsEqual(".".utf8) || component.elementsEqual("..".utf8) {
        throw XARError.invalidPath(path, reason: "empty, '.' or '..' components are not allowed")
      }
    }
    while index != path.utf8.endIndex {
      if path.utf8[index] == UInt8(ascii: "/") {
        try check(path[componentStart..<index].utf8)
        lastSlash = index
        componentStart = path.utf8.index(after: index)
      }
      index = path.utf8.index(after: index)
    }
    try check(path[componentStart...].utf8)
    guard let slash = lastSlash else { return (nil, path[...]) }
    return (path[..<slash], path[path.index(after: slash)...])
  }
}
