import SystemIO

/// The `<file>`s of a TOC in document order, held compactly.
///
/// One fixed-size record per entry (48 bytes), in chunks (no spare capacity to speak of, no copy
/// as it grows); names and ids in one byte arena; digests in another; owner and time interned
/// (entries share a handful); what few entries have (link targets, hard links, unknown names,
/// sizes past 32 bits, names or ids past 64 KiB) in side tables. A path is
/// never stored: each record has its parent's index and its own name, and ``path(at:)`` joins
/// them when asked. An ``XAREntry`` is made from a record on demand, so reading a TOC of many
/// entries costs no allocation per entry, and iterating costs one path string per entry, freed
/// as the caller moves on.
package struct XAREntryTable: RandomAccessCollection, Sendable {
  /// Bytes in ``text``: `count` bytes after the first `skip` of the string at `start` (a
  /// position in the arena is a chunk and an offset in it, so `start + skip` is not one).
  struct Span {
    var start: UInt32
    var skip: UInt32 = 0
    var count: UInt32
  }

  /// An entry, in 48 bytes: what most entries need, with what does not fit in ``wide``.
  struct Record {
    var parent: Int32 = -1
    /// Where the name starts in ``text``; the id follows it.
    var text: UInt32 = 0
    /// The name's and the id's UTF-8 lengths (``Wide`` has them when they do not fit).
    var nameCount: UInt16 = 0
    var idCount: UInt16 = 0
    /// UTF-8 bytes of the full path.
    var pathLength: UInt32 = 0
    var tocLine: UInt32 = 0
    /// The entry's owner and time: an index in ``owners`` (entries share a handful).
    var owner: UInt32 = 0
    /// Where the archived digest starts in ``digests``; the extracted one follows it.
    var digests: UInt32 = 0
    /// The permission bits (12), then the ``Flag`` bits.
    var modeAndFlags: UInt16 = 0
    /// The kind's code (low 4 bits) and the encoding's (high 4 bits).
    var codes: UInt8 = 0
    /// The archived checksum's algorithm code (low 4 bits) and the extracted one's (high 4 bits).
    var algorithms: UInt8 = 0
    var offset: UInt64 = 0
    /// The stored length and the decoded size (``Wide`` has them when they do not fit).
    var length: UInt32 = 0
    var size: UInt32 = 0

    var flags: UInt16 { modeAndFlags & ~0o7777 }
    var mode: UInt16 { modeAndFlags & 0o7777 }
    var kind: Int { Int(codes & 0xF) }
    var encoding: Int { Int(codes >> 4) }
    var archivedAlgorithm: Int { Int(algorithms & 0xF) }
    var extractedAlgorithm: Int { Int(algorithms >> 4) }
  }

  /// The full lengths and sizes of a record whose own fields cannot hold them.
  struct Wide {
    var nameCount: UInt32
    var idCount: UInt32
    var length: UInt64
    var size: UInt64
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

  /// Bits of ``Record/modeAndFlags`` above the permission bits.
  enum Flag {
    static let mode: UInt16 = 1 << 12
    static let data: UInt16 = 1 << 13
    static let extra: UInt16 = 1 << 14
    static let wide: UInt16 = 1 << 15
  }

  private(set) var records = ChunkedArray<Record>()
  private var extras: [Int32: Extra] = [:]
  private var wide: [Int32: Wide] = [:]
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
      id: id(at: position), path: path(at: position), kind: kind,
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
    let code = records[position].kind
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
        let name = nameSpan(r, at: i)
        end -= Int(name.count)
        bytes(name) { name in
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
    let code = r.encoding
    encoding = code < Self.encodings.count ? Self.encodings[code] : .unknown(otherName(at: position))
    var start = Int(r.digests)
    func checksum(_ code: Int) -> XARChecksum? {
      guard code != 0 else { return nil }
      let algorithm = XARChecksumAlgorithm.allCases[code]
      defer { start += algorithm.digestSize }
      return XARChecksum(algorithm: algorithm, digest: Array(digests[start, algorithm.digestSize]))
    }
    let archived = checksum(r.archivedAlgorithm)
    let extracted = checksum(r.extractedAlgorithm)
    let (size, length) = sizes(r, at: position)
    return XARData(
      offset: r.offset, length: length, size: size, encoding: encoding, archivedChecksum: archived,
      extractedChecksum: extracted)
  }

  /// The stored byte range of the entry's data: (offset, length), nil without data.
  package func storedRange(at position: Int) -> (offset: UInt64, length: UInt64)? {
    let r = records[position]
    return r.flags & Flag.data != 0 ? (r.offset, sizes(r, at: position).length) : nil
  }

  /// The decoded and stored sizes of the entry's data (0 without data).
  package func sizes(at position: Int) -> (size: UInt64, length: UInt64) {
    let r = records[position]
    return r.flags & Flag.data != 0 ? sizes(r, at: position) : (0, 0)
  }

  /// The record's decoded size and stored length, from ``wide`` when they do not fit in it.
  private func sizes(_ r: Record, at position: Int) -> (size: UInt64, length: UInt64) {
    if r.flags & Flag.wide != 0, let w = wide[Int32(position)] { return (w.size, w.length) }
    return (UInt64(r.size), UInt64(r.length))
  }

  /// Where the entry's name lies in ``text``.
  private func nameSpan(_ r: Record, at position: Int) -> Span {
    if r.flags & Flag.wide != 0, let w = wide[Int32(position)] { return Span(start: r.text, count: w.nameCount) }
    return Span(start: r.text, count: UInt32(r.nameCount))
  }

  /// Where the entry's id lies in ``text``: just after its name.
  private func idSpan(at position: Int) -> Span {
    let r = records[position]
    let name = nameSpan(r, at: position)
    if r.flags & Flag.wide != 0, let w = wide[Int32(position)] {
      return Span(start: name.start, skip: name.count, count: w.idCount)
    }
    return Span(start: name.start, skip: name.count, count: UInt32(r.idCount))
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
    var flags: UInt16 = 0
    var big = Wide(nameCount: 0, idCount: 0, length: 0, size: 0)
    // The name, then the id, as one string: a record needs only where the name starts.
    var name = entry.path
    var id = entry.id
    big.nameCount = UInt32(truncatingIfNeeded: name.utf8.count)
    big.idCount = UInt32(truncatingIfNeeded: id.utf8.count)
    r.text = name.withUTF8 { name in id.withUTF8 { UInt32(truncatingIfNeeded: text.append(name, then: $0)) } }
    extra.link = entry.linkTarget
    r.owner = intern(
      Owner(uid: entry.uid, gid: entry.gid, user: entry.user, group: entry.group, mtime: entry.mtime?.secondsSinceEpoch)
    )
    var kind: UInt8
    if entry.kind == .other {
      kind = UInt8(Self.kinds.count)
      extra.otherName = entry.otherTypeName
    } else {
      kind = UInt8(Self.kinds.firstIndex(of: entry.kind) ?? 0)
    }
    var encoding: UInt8 = 0
    if let mode = entry.mode {
      // (The parser refuses a mode past 0o7777.)
      flags |= Flag.mode | UInt16(truncatingIfNeeded: mode) & 0o7777
    }
    r.algorithms = 0
    if let data = entry.data {
      flags |= Flag.data
      r.offset = data.offset
      big.length = data.length
      big.size = data.size
      if case .unknown(let style) = data.encoding {
        encoding = UInt8(Self.encodings.count)
        extra.otherName = style
      } else {
        encoding = UInt8(Self.encodings.firstIndex(of: data.encoding) ?? 0)
      }
      let archived = algorithmCode(data.archivedChecksum)
      let extracted = algorithmCode(data.extractedChecksum)
      r.algorithms = archived | extracted << 4
      let both =
        (archived == 0 ? [] : data.archivedChecksum?.digest ?? [])
        + (extracted == 0 ? [] : data.extractedChecksum?.digest ?? [])
      r.digests = UInt32(truncatingIfNeeded: digests.append(both))
    }
    r.codes = kind | encoding << 4
    if big.nameCount <= UInt16.max && big.idCount <= UInt16.max && big.length <= UInt32.max && big.size <= UInt32.max {
      r.nameCount = UInt16(big.nameCount)
      r.idCount = UInt16(big.idCount)
      r.length = UInt32(big.length)
      r.size = UInt32(big.size)
    } else {
      flags |= Flag.wide
      wide[Int32(index)] = big
    }
    if extra.link != nil || extra.otherName != nil {
      flags |= Flag.extra
      extras[Int32(index)] = extra
    }
    r.modeAndFlags = flags
    records[index] = r
  }

  /// Sets the record's full path length from its parent's (parents come first), and adds it to
  /// ``totalPathBytes``.
  mutating func computePathLength(at index: Int) -> Int {
    let parent = Int(records[index].parent)
    let own = Int(nameSpan(records[index], at: index).count)
    let length = parent < 0 ? own : Int(records[parent].pathLength) + 1 + own
    records[index].pathLength = UInt32(clamping: length)
    totalPathBytes += UInt64(length)
    return length
  }

  mutating func resolveHardLink(at index: Int, to target: Int) {
    records[index].modeAndFlags |= Flag.extra
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
    for i in 0..<records.count where idSpan(at: i).count > 0 { order.append(Int32(i)) }
    order.sort { a, b in
      let c = compare(idSpan(at: Int(a)), idSpan(at: Int(b)))
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
        let span = idSpan(at: Int(order[mid]))
        let c = bytes(span) { compareBytes($0, key) }
        if c == 0 { return Int(order[mid]) }
        if c < 0 { low = mid + 1 } else { high = mid }
      }
      return nil
    }
  }

  /// True if the two entries' ids are the same bytes.
  func sameID(_ a: Int, _ b: Int) -> Bool { compare(idSpan(at: a), idSpan(at: b)) == 0 }

  /// Calls `body` with the bytes of `span`.
  private func bytes<R>(_ span: Span, _ body: (UnsafeBufferPointer<UInt8>) -> R) -> R {
    span.count == 0
      ? body(UnsafeBufferPointer(start: nil, count: 0))
      : text.withBytes(at: Int(span.start), count: Int(span.skip + span.count)) {
        body(UnsafeBufferPointer(rebasing: $0[Int(span.skip)...]))
      }
  }

  /// Compares two byte strings of ``text``: negative, zero or positive.
  private func compare(_ x: Span, _ y: Span) -> Int { bytes(x) { a in bytes(y) { b in compareBytes(a, b) } } }

  /// The id text of the entry.
  func id(at position: Int) -> String { bytes(idSpan(at: position)) { String(decoding: $0, as: UTF8.self) } }

  // MARK: Storage

  private mutating func intern(_ owner: Owner) -> UInt32 {
    // Most entries share their neighbours' owner and time.
    if let last = owners.last, last == owner { return UInt32(owners.count - 1) }
    if let index = ownerIndex[owner] { return index }
    owners.append(owner)
    let index = UInt32(owners.count - 1)
    ownerIndex[owner] = index
    return index
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
