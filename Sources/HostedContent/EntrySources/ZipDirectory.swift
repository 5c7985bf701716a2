import SystemIO
import XAR

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
  }

  struct Entry {
    var name: [UInt8]
    var flags: UInt16
    var method: UInt16
    var crc: UInt32
    var compressedSize: UInt64
    var size: UInt64
    var localOffset: UInt64
  }

  private(set) var entries: [Entry] = []

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
      throw fail("no end-of-central-directory record ends the file (bytes after the zip, or not a zip)")
    }
    guard candidates.count == 1 else {
      throw fail(
        "two end-of-central-directory records (one inside the comment): readers would disagree on which directory to use"
      )
    }
    let eocdOffset = tailStart + UInt64(eocd)
    var count = UInt64(tail.uint16(at: eocd + 10))
    var directorySize = UInt64(tail.uint32(at: eocd + 12))
    var directoryOffset = UInt64(tail.uint32(at: eocd + 16))
    guard tail.uint16(at: eocd + 4) == 0, tail.uint16(at: eocd + 6) == 0,
      tail.uint16(at: eocd + 8) == tail.uint16(at: eocd + 10)
    else {
      throw fail("multi-disk archives are not packages")
    }
    var directoryEnd = eocdOffset
    if count == 0xFFFF || directorySize == 0xFFFF_FFFF || directoryOffset == 0xFFFF_FFFF {
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
      let extra = directory[(position + 46 + nameLength)..<(position + 46 + nameLength + extraLength)]
      ZipDirectory.applyZip64(extra, to: &entry, local: false)
      if let unicode = ZipDirectory.unicodePath(extra), unicode != name {
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
    var expected: UInt64 = 0
    for central in ordered {
      let shown = String(decoding: central.name, as: UTF8.self).debugDescription
      guard central.localOffset >= expected else { throw fail("the entry \(shown) overlaps the one before it") }
      let gap = central.localOffset - expected
      guard gap == 0 || (gap <= 24 && expected > 0) else {
        throw fail("\(gap) bytes before the entry \(shown) belong to no entry (room for a hidden one)")
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
      ZipDirectory.applyZip64(variable[nameLength...], to: &local, local: true)
      if let unicode = ZipDirectory.unicodePath(variable[nameLength...]), unicode != localName {
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
    }
    let trailing = directoryOffset - expected
    guard trailing == 0 || (trailing <= 24 && !ordered.isEmpty) else {
      throw fail("\(trailing) bytes before the central directory belong to no entry (room for a hidden one)")
    }
  }

  /// The name in an Info-ZIP Unicode Path extra field (0x7075), which some readers use in place
  /// of the header's name; nil when there is none.
  private static func unicodePath(_ extra: ArraySlice<UInt8>) -> [UInt8]? {
    var position = extra.startIndex
    while position + 4 <= extra.endIndex {
      let id = extra.uint16(at: position)
      let length = Int(extra.uint16(at: position + 2))
      let body = position + 4
      guard body + length <= extra.endIndex else { return nil }
      if id == 0x7075, length >= 5 { return Array(extra[(body + 5)..<(body + length)]) }
      position = body + length
    }
    return nil
  }

  /// Replaces saturated 32-bit fields with the zip64 extra field's values.
  private static func applyZip64(_ extra: ArraySlice<UInt8>, to entry: inout Entry, local: Bool) {
    var position = extra.startIndex
    while position + 4 <= extra.endIndex {
      let id = extra.uint16(at: position)
      let length = Int(extra.uint16(at: position + 2))
      let body = position + 4
      guard body + length <= extra.endIndex else { return }
      if id == 0x0001 {
        var field = body
        func next() -> UInt64? {
          guard field + 8 <= body + length else { return nil }
          defer { field += 8 }
          return extra.uint64(at: field)
        }
        if entry.size == 0xFFFF_FFFF || local, let v = next() { entry.size = v }
        if entry.compressedSize == 0xFFFF_FFFF || local, let v = next() { entry.compressedSize = v }
        if !local, entry.localOffset == 0xFFFF_FFFF, let v = next() { entry.localOffset = v }
        return
      }
      position = body + length
    }
  }
}

extension Collection where Element == UInt8, Index == Int {
  fileprivate func uint16(at i: Int) -> UInt16 { UInt16(self[i]) | UInt16(self[i + 1]) << 8 }
  fileprivate func uint32(at i: Int) -> UInt32 { UInt32(uint16(at: i)) | UInt32(uint16(at: i + 2)) << 16 }
  fileprivate func uint64(at i: Int) -> UInt64 { UInt64(uint32(at: i)) | UInt64(uint32(at: i + 4)) << 32 }
}
