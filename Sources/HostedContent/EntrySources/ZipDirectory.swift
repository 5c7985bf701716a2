import SystemIO
import TextCoding
import XAR

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// The zip's two indexes, checked against each other before anything is read from it.
///
/// A zip names each entry twice: in a local header before its data (what bsdtar and libarchive
/// use, and any streaming reader) and in the central directory at the end (what unzip and most
/// clients use). When the two disagree, each reader extracts something else from the same bytes,
/// so a validator that reads one view proves nothing about the other. This refuses any zip whose
/// central directory and local headers differ in name, method, flags, CRC or sizes, whose
/// entries overlap or leave room for hidden entries between them, or that has bytes before the
/// first entry or after the end record.
struct ZipDirectory {
  /// Why the two views disagree (an `archive-integrity` finding).
  struct Inconsistency: Error, CustomStringConvertible {
    var description: String
    /// The zip looks cut off (its end record or central directory missing): fetch it again.
    var cutOff = false
  }

  struct Entry {
    var name: [UInt8]
    var flags: UInt16
    var method: UInt16
    var crc: UInt32
    var compressedSize: UInt64
    var size: UInt64
    var localOffset: UInt64
    /// The central directory's external attributes (Unix mode in the high half, MS-DOS bits low).
    var externalAttributes: UInt32 = 0
    /// The system that made the entry (the high byte of "version made by"; 3 is Unix).
    var madeBy: UInt8 = 0
  }

  private(set) var entries: [Entry] = []

  /// Where the end record starts; the zip as libarchive should see it ends 22 bytes later.
  private(set) var endRecordOffset: UInt64 = 0
  /// Whether the end record has a comment (which libarchive is not shown).
  private(set) var hasComment = false

  /// The entries' names, decoded (see ``decodedName(_:flags:)``), in the order of their local
  /// headers: the order in which libarchive's seekable reader and any streaming reader see them.
  private(set) var namesInFileOrder: [String] = []

  /// The compression methods libarchive decodes, by number, with their names.
  static let supportedMethods: [UInt16: String] = [
    0: "stored", 8: "deflate", 12: "bzip2", 14: "lzma", 93: "zstd", 95: "xz", 98: "ppmd",
  ]
  /// Methods other readers know but this one does not, named in the refusal.
  static let knownMethods: [UInt16: String] = [
    1: "shrink", 2: "reduce", 3: "reduce", 4: "reduce", 5: "reduce", 6: "implode", 9: "deflate64",
    10: "PKWARE DCL implode", 18: "IBM TERSE", 19: "IBM LZ77", 97: "WavPack", 99: "AES encryption",
  ]

  /// The name as every reader decodes it, or why it cannot be: with the UTF-8 flag (general-purpose
  /// bit 11) it must be UTF-8; without it, UTF-8 is taken when the bytes are valid UTF-8 (what
  /// macOS writes, and ASCII); anything else is in a legacy code page (CP437, CP866, Shift-JIS,
  /// ...) that each reader decodes its own way.
  static func decodedName(_ name: [UInt8], flags: UInt16) -> Result<String, Inconsistency> {
    let shown = String(decoding: name, as: UTF8.self).debugDescription
    if name.contains(0) {
      return .failure(
        Inconsistency(
          description: "zip: the name \(shown) holds a NUL byte, where readers written in C end it and others do not"))
    }
    if let text = String(validating: name, as: UTF8.self) { return .success(text) }
    if flags & 0x0800 != 0 {
      return .failure(
        Inconsistency(
          description: "zip: the name \(shown) is flagged UTF-8 (general-purpose bit 11) but is not valid UTF-8"))
    }
    return .failure(
      Inconsistency(
        description:
          "zip: the name \(shown) is in a legacy code page, not UTF-8 (readers decode it differently); re-create the zip with UTF-8 names (7-Zip: -mcu=on; Info-ZIP zip 3 on a UTF-8 system)"
      ))
  }

  /// Reads and cross-checks the zip open as `file` (of `fileSize` bytes).
  init(file: FileDescriptor, fileSize: UInt64, maxEntries: Int) throws {
    func fail(_ message: String) -> Inconsistency { Inconsistency(description: "zip: \(message)") }
    // The end record: the last 22 bytes plus a comment of up to 65,535.
    let tailLength = Int(min(fileSize, 22 + 65_535))
    let tailStart = fileSize - UInt64(tailLength)
    let tail = try file.read(count: tailLength, at: tailStart)
    // Readers search backwards for the end record; a second record that also ends the file
    // exactly (hidden in the comment) would let two readers pick two different directories.
    var candidates: [Int] = []
    var index = tail.count - 22
    while index >= 0 {
      if tail.uint32(at: index) == 0x0605_4B50, index + 22 + Int(tail.uint16(at: index + 20)) == tail.count {
        candidates.append(index)
      }
      index -= 1
    }
    guard let eocd = candidates.first else {
      // The last record that is there but does not end the file: bytes after the zip.
      var last = tail.count - 22
      while last >= 0 && tail.uint32(at: last) != 0x0605_4B50 { last -= 1 }
      if last >= 0 {
        let declared = Int(tail.uint16(at: last + 20))
        let after = tail.count - (last + 22 + declared)
        throw fail(
          after > 0
            ? "\(after) bytes after the end of the zip (its end record declares a \(declared)-byte comment): padding or data appended to the archive"
            : "the end record declares a \(declared)-byte comment, but the file ends \(-after) bytes sooner (truncated)"
        )
      }
      // It starts like a zip (the opener saw a local header) and has no end: cut off.
      throw Inconsistency(
        description:
          "zip: no readable central directory (no end-of-central-directory record in its last \(tailLength) bytes): the file is cut off or damaged",
        cutOff: true)
    }
    guard candidates.count == 1 else {
      throw fail(
        "two end-of-central-directory records (one inside the comment): readers would disagree on which directory to use"
      )
    }
    let eocdOffset = tailStart + UInt64(eocd)
    endRecordOffset = eocdOffset
    hasComment = tail.uint16(at: eocd + 20) != 0
    var count = UInt64(tail.uint16(at: eocd + 10))
    var directorySize = UInt64(tail.uint32(at: eocd + 12))
    var directoryOffset = UInt64(tail.uint32(at: eocd + 16))
    let disk = tail.uint16(at: eocd + 4)
    let directoryDisk = tail.uint16(at: eocd + 6)
    let countHere = tail.uint16(at: eocd + 8)
    var directoryEnd = eocdOffset
    let zip64 =
      count == 0xFFFF || directorySize == 0xFFFF_FFFF || directoryOffset == 0xFFFF_FFFF || disk == 0xFFFF
      || directoryDisk == 0xFFFF || countHere == 0xFFFF
    if !zip64 {
      guard disk == 0, directoryDisk == 0, countHere == tail.uint16(at: eocd + 10) else {
        throw fail(
          "the end record names disk \(disk) (central directory on disk \(directoryDisk)): a split or spanned archive, which is not a package"
        )
      }
    }
    if zip64 {
      // Zip64: a locator right before the end record points at the zip64 end record.
      guard eocdOffset >= 20 else { throw fail("a zip64 field without a zip64 locator") }
      let locator = try file.read(count: 20, at: eocdOffset - 20)
      guard locator.uint32(at: 0) == 0x0706_4B50 else { throw fail("a zip64 field without a zip64 locator") }
      let recordOffset = locator.uint64(at: 8)
      guard recordOffset <= eocdOffset - 20 else { throw fail("the zip64 end record lies outside the file") }
      let record = try file.read(count: 56, at: recordOffset)
      guard record.count == 56, record.uint32(at: 0) == 0x0606_4B50 else {
        throw fail("no zip64 end record where the locator says")
      }
      guard record.uint32(at: 16) == 0, record.uint32(at: 20) == 0 else {
        throw fail(
          "the zip64 end record names disk \(record.uint32(at: 16)) (central directory on disk \(record.uint32(at: 20))): a split or spanned archive, which is not a package"
        )
      }
      guard record.uint64(at: 24) == record.uint64(at: 32) else {
        throw fail(
          "the zip64 end record counts \(record.uint64(at: 24)) entries on this disk but \(record.uint64(at: 32)) in all"
        )
      }
      count = record.uint64(at: 32)
      directorySize = record.uint64(at: 40)
      directoryOffset = record.uint64(at: 48)
      directoryEnd = recordOffset
    }
    guard count <= UInt64(maxEntries) else { throw fail("more than \(maxEntries) entries (--max-entries)") }
    guard directoryOffset <= directoryEnd, directorySize == directoryEnd - directoryOffset else {
      throw fail(
        "the central directory is not where the end record says (data before the zip, or a gap before the end)")
    }
    guard directorySize <= 1 << 31 else { throw fail("the central directory is too large") }
    let directory = try file.read(count: Int(directorySize), at: directoryOffset)

    var position = 0
    entries.reserveCapacity(Int(count))
    for _ in 0..<count {
      guard position + 46 <= directory.count, directory.uint32(at: position) == 0x0201_4B50 else {
        throw fail("the central directory holds fewer entries than the end record says")
      }
      let nameLength = Int(directory.uint16(at: position + 28))
      let extraLength = Int(directory.uint16(at: position + 30))
      let commentLength = Int(directory.uint16(at: position + 32))
      let next = position + 46 + nameLength + extraLength + commentLength
      guard next <= directory.count else { throw fail("a central directory entry runs past its end") }
      let name = Array(directory[(position + 46)..<(position + 46 + nameLength)])
      var entry = Entry(
        name: name, flags: directory.uint16(at: position + 8), method: directory.uint16(at: position + 10),
        crc: directory.uint32(at: position + 16), compressedSize: UInt64(directory.uint32(at: position + 20)),
        size: UInt64(directory.uint32(at: position + 24)), localOffset: UInt64(directory.uint32(at: position + 42)))
      entry.externalAttributes = directory.uint32(at: position + 38)
      entry.madeBy = directory[position + 5]
      let extra = directory[(position + 46 + nameLength)..<(position + 46 + nameLength + extraLength)]
      ZipDirectory.applyZip64(extra, to: &entry, local: false)
      if case .failure(let refusal) = ZipDirectory.decodedName(name, flags: entry.flags) { throw refusal }
      if entry.flags & 0x0001 != 0 {
        throw fail(
          "\(String(decoding: name, as: UTF8.self).debugDescription) is encrypted (general-purpose bit 0): a package cannot be read without a password"
        )
      }
      try ZipDirectory.checkKind(entry)
      if ZipDirectory.supportedMethods[entry.method] == nil {
        let shown = String(decoding: name, as: UTF8.self).debugDescription
        let known = ZipDirectory.knownMethods[entry.method].map { " (\($0))" } ?? ""
        throw fail(
          "\(shown) is compressed with method \(entry.method)\(known), which this reader does not decode; re-create the zip with deflate"
        )
      }
      let unicodeNames = ZipDirectory.unicodePaths(extra)
      if unicodeNames.count > 1 {
        throw fail(
          "the entry \(String(decoding: name, as: UTF8.self).debugDescription) carries \(unicodeNames.count) Unicode path fields: readers that use one (unzip takes the last) would extract another name"
        )
      }
      if let unicode = unicodeNames.first, unicode != name {
        throw fail(
          "the entry \(String(decoding: name, as: UTF8.self).debugDescription) carries another name in its Unicode path field (\(String(decoding: unicode, as: UTF8.self).debugDescription)), which unzip uses instead"
        )
      }
      entries.append(entry)
      position = next
    }
    guard position == directory.count else {
      throw fail("the central directory holds more entries than the end record says")
    }

    // Each local header against its central entry, and the entries tiling the file from byte 0
    // to the central directory with no room for anything else.
    let ordered = entries.sorted { $0.localOffset < $1.localOffset }
    namesInFileOrder = ordered.map { String(decoding: $0.name, as: UTF8.self) }
    var expected: UInt64 = 0
    for central in ordered {
      let shown = String(decoding: central.name, as: UTF8.self).debugDescription
      guard central.localOffset >= expected else { throw fail("the entry \(shown) overlaps the one before it") }
      let gap = central.localOffset - expected
      guard gap == 0 else {
        throw fail(
          expected == 0
            ? "\(gap) bytes before the first entry \(shown) (a self-extracting stub or data prepended to the zip), which readers treat differently"
            : "\(gap) bytes before the entry \(shown) belong to no entry (room for a hidden one)")
      }
      guard central.localOffset <= directoryOffset, directoryOffset - central.localOffset >= 30 else {
        throw fail("the local header of \(shown) lies outside the entries' area")
      }
      let fixed = try file.read(count: 30, at: central.localOffset)
      guard fixed.count == 30, fixed.uint32(at: 0) == 0x0403_4B50 else {
        throw fail("no local header where the central directory puts \(shown)")
      }
      let nameLength = Int(fixed.uint16(at: 26))
      let extraLength = Int(fixed.uint16(at: 28))
      let variable = try file.read(count: nameLength + extraLength, at: central.localOffset + 30)
      guard variable.count == nameLength + extraLength else { throw fail("the local header of \(shown) is truncated") }
      let localName = Array(variable[..<nameLength])
      guard localName == central.name else {
        throw fail(
          "the local header names \(String(decoding: localName, as: UTF8.self).debugDescription) where the central directory names \(shown): bsdtar and unzip would extract different files"
        )
      }
      var local = Entry(
        name: localName, flags: fixed.uint16(at: 6), method: fixed.uint16(at: 8), crc: fixed.uint32(at: 14),
        compressedSize: UInt64(fixed.uint32(at: 18)), size: UInt64(fixed.uint32(at: 22)),
        localOffset: central.localOffset)
      // A local header with a zip64 field is followed by a data descriptor with 8-byte sizes.
      let localZip64 = ZipDirectory.applyZip64(variable[nameLength...], to: &local, local: true)
      let localUnicodeNames = ZipDirectory.unicodePaths(variable[nameLength...])
      if localUnicodeNames.count > 1 {
        throw fail("the local header of \(shown) carries \(localUnicodeNames.count) Unicode path fields")
      }
      if let unicode = localUnicodeNames.first, unicode != localName {
        throw fail(
          "the local header of \(shown) carries another name in its Unicode path field (\(String(decoding: unicode, as: UTF8.self).debugDescription))"
        )
      }
      guard local.method == central.method else {
        throw fail(
          "\(shown) is stored with method \(local.method) in its local header and \(central.method) in the central directory"
        )
      }
      guard local.flags == central.flags else {
        throw fail(
          "\(shown) has flags \(String(local.flags, radix: 16)) in its local header and \(String(central.flags, radix: 16)) in the central directory"
        )
      }
      // With bit 3 the local header may leave CRC and sizes at zero (a data descriptor follows).
      let deferred = central.flags & 0x0008 != 0
      func agrees<T: BinaryInteger>(_ a: T, _ b: T) -> Bool { a == b || (deferred && a == 0) }
      guard agrees(local.crc, central.crc), agrees(local.compressedSize, central.compressedSize),
        agrees(local.size, central.size)
      else {
        throw fail("\(shown) has other CRC or sizes in its local header than in the central directory")
      }
      let dataStart = central.localOffset + 30 + UInt64(nameLength + extraLength)
      guard dataStart <= directoryOffset, central.compressedSize <= directoryOffset - dataStart else {
        throw fail("the data of \(shown) runs into the central directory")
      }
      expected = dataStart + central.compressedSize
      if deferred && central.method != 0 {
        // Only a regular file's compressed data is decoded by this reader and checked to end
        // where the central directory says; a symlink's or a folder's is not, so a streaming
        // reader, which looks for the data descriptor after the stream's end, could be led to
        // another entry hidden in it.
        let unixType = central.madeBy == 3 ? (central.externalAttributes >> 16) & 0o170000 : 0
        if central.name.last == UInt8(ascii: "/") || (unixType != 0 && unixType != 0o100000) {
          throw fail(
            "\(shown) is not a regular file, yet is compressed with its sizes in a data descriptor after the data: a streaming reader could find another end to it (and an entry hidden inside)"
          )
        }
      }
      if deferred {
        expected += try ZipDirectory.checkDescriptor(
          central, at: expected, limit: directoryOffset, zip64: localZip64, file: file)
        if central.method == 0 {
          try ZipDirectory.checkStoredData(central, from: dataStart, file: file)
        }
      }
    }
    let trailing = directoryOffset - expected
    guard trailing == 0 else {
      throw fail("\(trailing) bytes before the central directory belong to no entry (room for a hidden one)")
    }
  }

  /// Refuses an entry whose trailing '/' and external attributes (the Unix mode's type, the
  /// MS-DOS folder bit) disagree, which one reader extracts as a folder and another as a file
  /// (libarchive trusts the mode, unzip the name), and a folder that carries data.
  private static func checkKind(_ entry: Entry) throws {
    let shown = String(decoding: entry.name, as: UTF8.self).debugDescription
    let slash = entry.name.last == UInt8(ascii: "/")
    let unixType = entry.madeBy == 3 ? (entry.externalAttributes >> 16) & 0o170000 : 0
    let dosFolder = entry.externalAttributes & 0x10 != 0
    if slash {
      if unixType != 0 && unixType != 0o040000 {
        throw Inconsistency(
          description:
            "zip: \(shown) ends in '/' (a folder) but its Unix mode says type \(String(unixType, radix: 8)): readers would extract it differently"
        )
      }
      let emptyDeflate: UInt64 = entry.method == 8 ? 2 : 0
      if entry.size != 0 || entry.compressedSize > emptyDeflate {
        throw Inconsistency(
          description:
            "zip: the folder \(shown) carries \(entry.size) bytes of data (\(entry.compressedSize) stored): a folder cannot hold data, and readers would drop it or write it as a file"
        )
      }
    } else if unixType == 0o040000 {
      throw Inconsistency(
        description:
          "zip: \(shown) has a folder's Unix mode but no trailing '/': libarchive extracts it as a folder, unzip as a file"
      )
    } else if dosFolder && unixType == 0 {
      throw Inconsistency(
        description:
          "zip: \(shown) has the MS-DOS folder attribute but no trailing '/': libarchive extracts it as a folder, unzip and CPython as a file"
      )
    }
  }

  /// Checks the data descriptor that follows an entry with general-purpose bit 3 at `offset`
  /// against the central directory (its CRC and sizes must be the same) and returns its length:
  /// a streaming reader takes the sizes from it and starts the next entry right after it.
  private static func checkDescriptor(
    _ entry: Entry, at offset: UInt64, limit: UInt64, zip64: Bool, file: FileDescriptor
  )
    throws -> UInt64
  {
    let shown = String(decoding: entry.name, as: UTF8.self).debugDescription
    let bytes = try file.read(count: Int(min(24, limit - offset)), at: offset)
    let signed = bytes.count >= 4 && bytes.uint32(at: 0) == 0x0807_4B50
    let base = signed ? 4 : 0
    let sizeLength = zip64 ? 8 : 4
    let length = base + 4 + 2 * sizeLength
    guard bytes.count >= length else {
      throw Inconsistency(description: "zip: the data descriptor of \(shown) runs into the central directory")
    }
    let crc = bytes.uint32(at: base)
    let compressed = zip64 ? bytes.uint64(at: base + 4) : UInt64(bytes.uint32(at: base + 4))
    let size = zip64 ? bytes.uint64(at: base + 12) : UInt64(bytes.uint32(at: base + 8))
    guard crc == entry.crc, compressed == entry.compressedSize, size == entry.size else {
      throw Inconsistency(
        description:
          "zip: the data descriptor of \(shown) gives other CRC or sizes than the central directory: a streaming reader (bsdtar from a pipe, Java's ZipInputStream) would read another entry"
      )
    }
    return UInt64(length)
  }

  /// A stored entry with a data descriptor has no length a streaming reader can trust: it scans
  /// the data for the descriptor's signature (or the next local header). Refuses such data that
  /// holds a zip signature, where a streaming reader would end the entry early and read what
  /// follows as entries of their own.
  private static func checkStoredData(_ entry: Entry, from start: UInt64, file: FileDescriptor) throws {
    let shown = String(decoding: entry.name, as: UTF8.self).debugDescription
    let chunk = 1 << 20
    var offset: UInt64 = 0
    var carry: [UInt8] = []
    while offset < entry.compressedSize {
      let count = Int(min(UInt64(chunk), entry.compressedSize - offset))
      let window = carry + (try file.read(count: count, at: start + offset))
      guard window.count == carry.count + count else {
        throw Inconsistency(description: "zip: the data of \(shown) is truncated")
      }
      if let found = window.withUnsafeBytes({ streamingSignature(in: $0) }) {
        throw Inconsistency(
          description:
            "zip: \(shown) is stored with a data descriptor and its data holds a zip signature (50 4B \(hexByte(UInt8(found.kind & 0xFF))) \(hexByte(UInt8(found.kind >> 8))) at byte \(offset + UInt64(found.offset) - UInt64(carry.count))): a streaming reader (bsdtar from a pipe) would end it there and read the rest as other entries"
        )
      }
      carry = Array(window.suffix(3))
      offset += UInt64(count)
    }
  }

  /// The first zip signature in `bytes` (`50 4B` and a data descriptor's, local header's,
  /// central directory's or end record's two bytes) at which a streaming reader would end
  /// stored data whose length follows it: its offset and its last two bytes, little-endian.
  /// The zip writer asks the same question of a file before it stores one
  /// (``ZipSink``), so what it writes passes ``checkStoredData(_:from:file:)``.
  static func streamingSignature(in bytes: UnsafeRawBufferPointer) -> (offset: Int, kind: UInt16)? {
    guard bytes.count >= 4, let base = bytes.baseAddress else { return nil }
    let last = bytes.count - 4
    var i = 0
    while i <= last {
      guard let hit = memchr(base + i, 0x50, last - i + 1) else { return nil }
      let at = base.distance(to: UnsafeRawPointer(hit))
      if bytes[at + 1] == 0x4B {
        let kind = UInt16(bytes[at + 2]) | UInt16(bytes[at + 3]) << 8
        if kind == 0x0807 || kind == 0x0403 || kind == 0x0201 || kind == 0x0605 || kind == 0x0606 {
          return (at, kind)
        }
      }
      i = at + 1
    }
    return nil
  }

  private static func hexByte(_ byte: UInt8) -> String { hexString([byte]) }

  /// The names in the Info-ZIP Unicode Path extra fields (0x7075) of `extra`, which some readers
  /// use in place of the header's name (unzip the last one); a field too short to hold a name
  /// counts as an empty one.
  private static func unicodePaths(_ extra: ArraySlice<UInt8>) -> [[UInt8]] {
    var names: [[UInt8]] = []
    var position = extra.startIndex
    while position + 4 <= extra.endIndex {
      let id = extra.uint16(at: position)
      let length = Int(extra.uint16(at: position + 2))
      let body = position + 4
      guard body + length <= extra.endIndex else { break }
      if id == 0x7075 { names.append(length >= 5 ? Array(extra[(body + 5)..<(body + length)]) : []) }
      position = body + length
    }
    return names
  }

  /// Replaces saturated 32-bit fields with the zip64 extra field's values.
  @discardableResult
  private static func applyZip64(_ extra: ArraySlice<UInt8>, to entry: inout Entry, local: Bool) -> Bool {
    var position = extra.startIndex
    while position + 4 <= extra.endIndex {
      let id = extra.uint16(at: position)
      let length = Int(extra.uint16(at: position + 2))
      let body = position + 4
      guard body + length <= extra.endIndex else { return false }
      if id == 0x0001 {
        var field = body
        func next() -> UInt64? {
          guard field + 8 <= body + length else { return nil }
          defer { field += 8 }
          return extra.uint64(at: field)
        }
        // Only the saturated fields are there, in this order (as libarchive reads them): a local
        // header whose compressed size alone is saturated (Info-ZIP writing from a pipe) holds
        // just that one.
        if entry.size == 0xFFFF_FFFF, let v = next() { entry.size = v }
        if entry.compressedSize == 0xFFFF_FFFF, let v = next() { entry.compressedSize = v }
        if !local, entry.localOffset == 0xFFFF_FFFF, let v = next() { entry.localOffset = v }
        return true
      }
      position = body + length
    }
    return false
  }
}

extension Collection where Element == UInt8, Index == Int {
  fileprivate func uint16(at i: Int) -> UInt16 { UInt16(self[i]) | UInt16(self[i + 1]) << 8 }
  fileprivate func uint32(at i: Int) -> UInt32 { UInt32(uint16(at: i)) | UInt32(uint16(at: i + 2)) << 16 }
  fileprivate func uint64(at i: Int) -> UInt64 { UInt64(uint32(at: i)) | UInt64(uint32(at: i + 4)) << 32 }
}

/// Looks for ``ZipDirectory/streamingSignature(in:)`` in one file's bytes as they come, chunk
/// by chunk, including a signature split between two chunks.
struct StreamingSignatureWatch {
  /// The last bytes seen (at most 3), where a split signature starts.
  private var carry: [UInt8] = []
  /// Whether a signature was seen.
  private(set) var found = false

  mutating func take(_ bytes: UnsafeRawBufferPointer) {
    guard !found, !bytes.isEmpty else { return }
    if !carry.isEmpty {
      let joint = carry + bytes.prefix(3)
      if joint.withUnsafeBytes({ ZipDirectory.streamingSignature(in: $0) }) != nil {
        found = true
        return
      }
    }
    if ZipDirectory.streamingSignature(in: bytes) != nil {
      found = true
      return
    }
    carry = Array((carry + bytes.suffix(3)).suffix(3))
  }
}
