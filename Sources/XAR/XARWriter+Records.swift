import Dispatch
import SystemIO

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

// The compact records a XARWriter keeps per entry (no full paths, no array per file), and how
// entries are added to them.
extension XARWriter {
  struct Record {
    var parent: Int32
    var firstChild: Int32 = -1
    var lastChild: Int32 = -1
    var nextSibling: Int32 = -1
    var name: String
    var kind: XAREntryKind
    var attributes: Attributes
    var linkTarget: String? = nil
    var hardLinkOf: Int32 = -1
    var isHardLinkOriginal = false
    /// Index into `dataRecords`, or -1.
    var data: Int32 = -1
  }

  /// Where a file's data went; checksums live in `digests` (no array per file).
  struct DataRecord {
    var offset: UInt64
    var length: UInt64
    var size: UInt64
    var gzip: Bool
    var digestStart: Int32  // archived digest, then extracted digest
  }

  /// Records by (parent, name): names are shared with the records, not copied as full paths.
  struct Key: Hashable {
    var parent: Int32
    var name: String
  }

  func setData(
    _ record: Int32, offset: UInt64, length: UInt64, size: UInt64, gzip: Bool, archived: XARChecksum?,
    extracted: XARChecksum?
  ) {
    var start: Int32 = -1
    if options.checksum != .none, let archived, let extracted {
      start = Int32(digests.count)
      digests += archived.digest
      digests += extracted.digest
    }
    records[Int(record)].data = Int32(dataRecords.count)
    dataRecords.append(DataRecord(offset: offset, length: length, size: size, gzip: gzip, digestStart: start))
  }

  /// The data of a record, as the TOC describes it.
  func data(of record: Record) -> XARData? {
    guard record.data >= 0 else { return nil }
    let d = dataRecords[Int(record.data)]
    var archived: XARChecksum?
    var extracted: XARChecksum?
    if d.digestStart >= 0 {
      let n = options.checksum.digestSize
      let a = Int(d.digestStart)
      archived = XARChecksum(algorithm: options.checksum, digest: Array(digests[a..<(a + n)]))
      extracted = XARChecksum(algorithm: options.checksum, digest: Array(digests[(a + n)..<(a + 2 * n)]))
    }
    return XARData(
      offset: d.offset, length: d.length, size: d.size, encoding: d.gzip ? .gzip : .none,
      archivedChecksum: archived, extractedChecksum: extracted)
  }

  func lookup(_ path: String) -> Int32? {
    var parent: Int32 = -1
    for component in path.split(separator: "/", omittingEmptySubsequences: false) {
      guard let i = index[Key(parent: parent, name: String(component))] else { return nil }
      parent = i
    }
    return parent
  }

  func lookupParent(_ path: String) -> Int32? {
    if lastParent.path == path { return lastParent.index }
    return lookup(path)
  }

  func addRecord(_ path: String, kind: XAREntryKind, attributes: Attributes) throws -> Int32 {
    guard !finished else { throw XARError.writerFinished }
    let (parentPath, name) = try XARWriter.split(path)
    var parent: Int32 = -1
    if let parentPath {
      guard let p = lookupParent(parentPath), records[Int(p)].kind == .directory else {
        throw XARError.missingParent(path: path, parent: parentPath)
      }
      parent = p
    }
    let key = Key(parent: parent, name: name)
    guard index[key] == nil else { throw XARError.duplicatePath(path) }
    let i = Int32(records.count)
    records.append(Record(parent: parent, name: name, kind: kind, attributes: attributes))
    index[key] = i
    lastParent = (parentPath, parent)
    if parent >= 0 {
      if records[Int(parent)].lastChild >= 0 {
        records[Int(records[Int(parent)].lastChild)].nextSibling = i
      } else {
        records[Int(parent)].firstChild = i
      }
      records[Int(parent)].lastChild = i
    } else {
      if rootLast >= 0 { records[Int(rootLast)].nextSibling = i } else { rootFirst = i }
      rootLast = i
    }
    return i
  }

  static func split(_ path: String) throws -> (parent: String?, name: String) {
    guard !path.isEmpty else { throw XARError.invalidPath(path, reason: "the path is empty") }
    guard !path.hasPrefix("/") else {
      throw XARError.invalidPath(path, reason: "absolute paths are not allowed")
    }
    guard !path.utf8.contains(0) else {
      throw XARError.invalidPath(path, reason: "the path holds a NUL byte")
    }
    let components = path.split(separator: "/", omittingEmptySubsequences: false)
    for component in components {
      if component.isEmpty || component == "." || component == ".." {
        throw XARError.invalidPath(path, reason: "empty, '.' or '..' components are not allowed")
      }
    }
    guard let slash = path.lastIndex(of: "/") else { return (nil, path) }
    return (String(path[..<slash]), String(path[path.index(after: slash)...]))
  }
}
