import SystemIO

/// The `<file>`s of a TOC in document order, held compactly.
///
/// One fixed-size record per entry (72 bytes), in chunks (no spare capacity to speak of, no copy
/// as it grows); names and ids in one byte arena; digests in another; owner and time interned
/// (entries share a handful); what few entries have (link targets, hard links, unknown names)
/// in a side table. A path is
/// never stored: each record has its parent's index and its own name, and ``path(at:)`` joins
/// them when asked. An ``XAREntry`` is made from a record on demand, so reading a TOC of many
/// entries costs no allocation per entry, and iterating costs one path string per entry, freed
/// as the caller moves on.
package struct XAREntryTable: RandomAccessCollection, Sendable {
  /// Bytes in ``text``; `count == .max` means absent.
  struct Span {
    var start: UInt32
    var count: UInt32
    static let absent = Span(start: 0, count: .max)
    var isAbsent: Bool { count == .max }
  }

  struct Record {
    var parent: Int32 = -1
    var name = Span.absent
    var id = Span.absent
    /// UTF-8 bytes of the full path.
    var pathLength: UInt32 = 0
    var tocLine: UInt32 = 0
    /// The entry's owner and time: an index in ``owners`` (entries share a handful).
    var owner: UInt32 = 0
    /// Where the archived digest starts in ``digests``; the extracted one follows it.
    var digests: UInt32 = 0
    var kind: UInt8 = 0
    var flags: UInt8 = 0
    var mode: UInt16 = 0
    var encoding: UInt8 = 0
    var archivedAlgorithm: UInt8 = 0
    var extractedAlgorithm: UInt8 = 0
    var offset: UInt64 = 0
    var length: UInt64 = 0
    var size: UInt64 = 0
  }

  /// What few entries have, by index.
  struct Extra {
    var link: String?
    /// For a hard link: the index of the entry that holds the data.
    var hardLinkTarget: Int32 = -1
    /// An unknown kind's or encoding's name.
    var otherName: String?
  }

  /// Owner ids and names and the modification time, as a TOC gives them (nil where absent).
  struct Owner: Hashable {
    var uid: UInt64?
    var gid: UInt64?
    var user: String?
    var group: String?
    var mtime: Int64?
  }

  enum Flag {
    static let mode: UInt8 = 1
    static let data: UInt8 = 16
    static let extra: UInt8 = 32
  }

  private(set) var records = ChunkedArray<Record>()
  private var extras: [Int32: Extra] = [:]
  /// Names and ids. Arenas in chunks: a copy of the table (one per batch handed out while a TOC
  /// streams) shares every full chunk with the original as it grows on.
  private var text = ByteArena()
  /// Each data entry's digests, the archived one then the extracted one.
  private var digests = ByteArena()
  private var owners: [Owner] = []
  /// Only while the table is built.
  private var ownerIndex: [Owner: UInt32] = [:]

  init() {}

  // MARK: Collection

  package var startIndex: Int { 0 }
  package var endIndex: Int { records.count }

  /// The entry at `position`, made from its record.
  package subscript(position: Int) -> XAREntry {
    let r = records[position]
    let kind = self.kind(at: position)
    let extra = r.flags & Flag.extra != 0 ? extras[Int32(position)] : nil
    let owner = owners[Int(r.owner)]
    return XAREntry(
      id: string(r.id) ?? "", path: path(at: position), kind: kind,
      otherTypeName: kind == .other ? otherName(at: position) : nil,
      mode: r.flags & Flag.mode != 0 ? UInt32(r.mode) : nil, uid: owner.uid, gid: owner.gid, user: owner.user,
      group: owner.group, mtime: owner.mtime.map { XARTimestamp(secondsSinceEpoch: $0) }, linkTarget: extra?.link,
      hardLinkTarget: (extra?.hardLinkTarget).flatMap { $0 >= 0 ? path(at: Int($0)) : nil },
      data: data(at: position), tocLine: Int(r.tocLine))
  }

  private func otherName(at position: Int) -> String { extras[Int32(position)]?.otherName ?? "" }

  // MARK: Parts of an entry, without making the whole

  /// The entry's kind.
  package func kind(at position: Int) -> EntryKind {
    let code = Int(records[position].kind)
    return code < Self.kinds.count ? Self.kinds[code] : .other
  }

  /// The known kinds and encodings by their codes in a record; any other is stored as the next
  /// code, its name in the side table.
  private static let kinds: [EntryKind] = [
    .file, .directory, .symlink, .hardLink, .fifo, .characterDevice, .blockDevice, .socket,
  ]
  private static let encodings: [XAREncoding] = [.none, .gzip, .bzip2, .xz, .lzma]

  /// The entry's full path: its ancestors' names and its own, joined with `/`.
  package func path(at position: Int) -> String {
    let length = Int(records[position].pathLength)
    return String(unsafeUninitializedCapacity: length) { out in
      var end = length
      var i = position
      while i >= 0 {
        let r = records[i]
        end -= Int(r.name.count)
        text.withBytes(at: Int(r.name.start), count: Int(r.name.count)) { name in
          for k in 0..<name.count { out[end + k] = name[k] }
        }
        i = Int(r.parent)
        if i >= 0 {
          end -= 1
          out[end] = UInt8(ascii: "/")
        }
      }
      return length
    }
  }

  /// The UTF-8 bytes of all entries' full paths together.
  private(set) var totalPathBytes: UInt64 = 0

  /// The UTF-8 length of the entry's full path.
  package func pathLength(at position: Int) -> Int { Int(records[position].pathLength) }

  /// Where and how the entry's data is stored, if it has any.
  package func data(at position: Int) -> XARData? {
    let r = records[position]
    guard r.flags & Flag.data != 0 else { return nil }
    let encoding: XAREncoding
    let code = Int(r.encoding)
    encoding = code < Self.encodings.count ? Self.encodings[code] : .unknown(otherName(at: position))
    var start = Int(r.digests)
    func checksum(_ code: UInt8) -> XARChecksum? {
      guard code != 0 else { return nil }
      let algorithm = XARChecksumAlgorithm.allCases[Int(code)]
      defer { start += algorithm.digestSize }
      return XARChecksum(algorithm: algorithm, digest: Array(digests[start, algorithm.digestSize]))
    }
    let archived = checksum(r.archivedAlgorithm)
    let extracted = checksum(r.extractedAlgorithm)
    return XARData(
      offset: r.offset, length: r.length, size: r.size, encoding: encoding, archivedChecksum: archived,
      extractedChecksum: extracted)
  }

  /// The stored byte range of the entry's data: (offset, length), nil without data.
  package func storedRange(at position: Int) -> (offset: UInt64, length: UInt64)? {
    let r = records[position]
    return r.flags & Flag.data != 0 ? (r.offset, r.length) : nil
  }

  /// The decoded and stored sizes of the entry's data (0 without data).
  package func sizes(at position: Int) -> (size: UInt64, length: UInt64) {
    let r = records[position]
    return r.flags & Flag.data != 0 ? (r.size, r.length) : (0, 0)
  }

  /// The TOC line where the entry's `<file>` starts.
  func tocLine(at position: Int) -> Int { Int(records[position].tocLine) }

  // MARK: Building (the TOC parser)

  /// Adds a placeholder for a `<file>` just opened; returns its index.
  mutating func open(parent: Int, line: Int) -> Int {
    var r = Record()
    r.parent = Int32(parent)
    r.tocLine = UInt32(clamping: line)
    records.append(r)
    return records.count - 1
  }

  /// Fills the record at `index` from the entry read for it (whose path is its name alone).
  /// A hard link's target is left for ``resolveHardLink(at:to:)``.
  mutating func store(_ entry: XAREntry, at index: Int) {
    var r = records[index]
    var extra = Extra()
    r.name = add(entry.path)
    r.id = add(entry.id)
    extra.link = entry.linkTarget
    r.owner = intern(
      Owner(uid: entry.uid, gid: entry.gid, user: entry.user, group: entry.group, mtime: entry.mtime?.secondsSinceEpoch)
    )
    if entry.kind == .other {
      r.kind = UInt8(Self.kinds.count)
      extra.otherName = entry.otherTypeName
    } else {
      r.kind = UInt8(Self.kinds.firstIndex(of: entry.kind) ?? 0)
    }
    r.flags = 0
    if let mode = entry.mode {
      r.flags |= Flag.mode
      r.mode = UInt16(truncatingIfNeeded: mode)
    }
    if let data = entry.data {
      r.flags |= Flag.data
      r.offset = data.offset
      r.length = data.length
      r.size = data.size
      if case .unknown(let style) = data.encoding {
        r.encoding = UInt8(Self.encodings.count)
        extra.otherName = style
      } else {
        r.encoding = UInt8(Self.encodings.firstIndex(of: data.encoding) ?? 0)
      }
      r.archivedAlgorithm = algorithmCode(data.archivedChecksum)
      r.extractedAlgorithm = algorithmCode(data.extractedChecksum)
      let both =
        (r.archivedAlgorithm == 0 ? [] : data.archivedChecksum?.digest ?? [])
        + (r.extractedAlgorithm == 0 ? [] : data.extractedChecksum?.digest ?? [])
      r.digests = UInt32(truncatingIfNeeded: digests.append(both))
    }
    if extra.link != nil || extra.otherName != nil {
      r.flags |= Flag.extra
      extras[Int32(index)] = extra
    }
    records[index] = r
  }

  /// Sets the record's full path length from its parent's (parents come first), and adds it to
  /// ``totalPathBytes``.
  mutating func computePathLength(at index: Int) -> Int {
    let parent = Int(records[index].parent)
    let own = Int(records[index].name.count)
    let length = parent < 0 ? own : Int(records[parent].pathLength) + 1 + own
    records[index].pathLength = UInt32(clamping: length)
    totalPathBytes += UInt64(length)
    return length
  }

  mutating func resolveHardLink(at index: Int, to target: Int) {
    records[index].flags |= Flag.extra
    extras[Int32(index), default: Extra()].hardLinkTarget = Int32(target)
  }

  /// Drops what only building needed (the arenas keep no spare capacity to speak of).
  mutating func finishBuilding() {
    ownerIndex = [:]
  }

  /// Entry indices with a non-empty id, ordered by id bytes, then by index.
  func indicesByID() -> [Int32] {
    var order = [Int32]()
    order.reserveCapacity(records.count)
    for i in 0..<records.count where records[i].id.count > 0 && !records[i].id.isAbsent { order.append(Int32(i)) }
    order.sort { a, b in
      let c = compare(records[Int(a)].id, records[Int(b)].id)
      return c != 0 ? c < 0 : a < b
    }
    return order
  }

  /// The index of the entry whose id is `id` in `order` (from ``indicesByID()``), if any.
  func index(ofID id: String, in order: [Int32]) -> Int? {
    let key = Array(id.utf8)
    return key.withUnsafeBufferPointer { key in
      var low = 0
      var high = order.count
      while low < high {
        let mid = (low + high) / 2
        let span = records[Int(order[mid])].id
        let c = bytes(span) { compareBytes($0, key) }
        if c == 0 { return Int(order[mid]) }
        if c < 0 { low = mid + 1 } else { high = mid }
      }
      return nil
    }
  }

  /// True if the two entries' ids are the same bytes.
  func sameID(_ a: Int, _ b: Int) -> Bool { compare(records[a].id, records[b].id) == 0 }

  /// Calls `body` with the bytes of `span` (none if absent).
  private func bytes<R>(_ span: Span, _ body: (UnsafeBufferPointer<UInt8>) -> R) -> R {
    span.isAbsent
      ? body(UnsafeBufferPointer(start: nil, count: 0))
      : text.withBytes(at: Int(span.start), count: Int(span.count), body)
  }

  /// Compares two byte strings of ``text``: negative, zero or positive.
  private func compare(_ x: Span, _ y: Span) -> Int { bytes(x) { a in bytes(y) { b in compareBytes(a, b) } } }

  /// The id text of the entry.
  func id(at position: Int) -> String { string(records[position].id) ?? "" }

  // MARK: Storage

  private mutating func add(_ s: String) -> Span {
    var s = s
    let count = s.utf8.count
    let start = s.withUTF8 { text.append($0) }
    return Span(start: UInt32(truncatingIfNeeded: start), count: UInt32(truncatingIfNeeded: count))
  }

  private mutating func intern(_ owner: Owner) -> UInt32 {
    // Most entries share their neighbours' owner and time.
    if let last = owners.last, last == owner { return UInt32(owners.count - 1) }
    if let index = ownerIndex[owner] { return index }
    owners.append(owner)
    let index = UInt32(owners.count - 1)
    ownerIndex[owner] = index
    return index
  }

  private func string(_ span: Span) -> String? {
    guard !span.isAbsent else { return nil }
    return bytes(span) { String(decoding: $0, as: UTF8.self) }
  }

  /// The algorithm's code in a record (0 for none).
  private func algorithmCode(_ checksum: XARChecksum?) -> UInt8 {
    guard let checksum, let index = XARChecksumAlgorithm.allCases.firstIndex(of: checksum.algorithm) else { return 0 }
    return UInt8(index)
  }
}

/// Compares two byte strings: negative, zero or positive.
private func compareBytes(_ x: UnsafeBufferPointer<UInt8>, _ y: UnsafeBufferPointer<UInt8>) -> Int {
  let n = min(x.count, y.count)
  for k in 0..<n where x[k] != y[k] { return Int(x[k]) - Int(y[k]) }
  return x.count - y.count
}
