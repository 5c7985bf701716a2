/// What a field's subtype may be, by key.
enum FieldShape {
  /// `1`, `2`, `4` or `8`: an unsigned little-endian integer of that many bytes.
  case integer
  /// `P`: a u16 length, then that many bytes.
  case string
  /// `A`, `B`, `C`: a blob whose size is 2, 4 or 8 bytes; its bytes follow the header.
  case blob
  /// `S` (8 bytes) or `T` (12 bytes).
  case time
  /// One hash subtype: `F` 4, `G` 20, `H` 32, `I` 48, `J` 64 bytes.
  case hash(UInt8)

  /// The subtypes allowed, for messages.
  var expected: String {
    switch self {
    case .integer: return "1, 2, 4 or 8 (an unsigned integer)"
    case .string: return "P (a string)"
    case .blob: return "A, B or C (a blob)"
    case .time: return "S or T (a time)"
    case .hash(let letter): return "\(Character(Unicode.Scalar(letter))) (a hash)"
    }
  }

  /// The keys this codec knows: Apple's `AADefs.h`, and the few more the format's users name.
  static let known: [String: FieldShape] = [
    "TYP": .integer, "PAT": .string, "LNK": .string, "UID": .integer, "GID": .integer, "MOD": .integer,
    "FLG": .integer, "DEV": .integer, "DE2": .integer, "DUZ": .integer, "SIZ": .integer, "INO": .integer,
    "NLK": .integer, "HLC": .integer, "CLC": .integer, "SLC": .integer, "IDX": .integer, "IDZ": .integer,
    "AFT": .integer, "AFR": .integer, "MTM": .time, "CTM": .time, "BTM": .time, "UIN": .string,
    "GIN": .string, "UNM": .string, "GNM": .string, "DAT": .blob, "XAT": .blob, "ACL": .blob, "YAF": .blob,
    "YEC": .blob, "CKS": .hash(0x46), "SH1": .hash(0x47), "SH2": .hash(0x48), "SH3": .hash(0x49),
    "SH5": .hash(0x4A),
  ]
}

/// Parses one entry header (all of it, magic and size included) into an ``AppleArchiveEntry``.
enum EntryHeader {
  static func parse(
    _ header: [UInt8], number: Int, payloadOffset: UInt64, limits: AppleArchiveLimits
  ) throws(AppleArchiveError) -> AppleArchiveEntry {
    let headerSize = header.count
    var path: [UInt8]? = nil
    func fail(_ reason: AppleArchiveError.Reason) -> AppleArchiveError {
      AppleArchiveError(reason, entry: number, path: path)
    }
    var seen = Set<String>()
    var kind: AppleArchiveEntry.Kind? = nil
    var entry = AppleArchiveEntry(
      number: number, payloadOffset: payloadOffset, headerSize: headerSize,
      legacyMagic: header[0] == UInt8(ascii: "Y"), kind: .file, path: [])
    var blobTotal: UInt64 = 0
    /// The first field that ties this entry's data to another entry's (`HLC`, `CLC`, `SLC`).
    var cluster: (key: String, id: UInt64)? = nil
    var pos = 6
    while pos < headerSize {
      guard headerSize - pos >= 4 else { throw fail(.junkInHeader(offset: pos, count: headerSize - pos)) }
      let keyBytes = Array(header[pos..<pos + 3])
      let subtype = header[pos + 3]
      let key = String(decoding: keyBytes, as: UTF8.self)
      let field = AppleArchiveError.printable(keyBytes + [subtype])
      guard keyBytes.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }), let shape = FieldShape.known[key] else {
        throw fail(.unknownKey(field: field))
      }
      // The value's size, from the subtype.
      var valueSize: Int
      switch (shape, subtype) {
      case (.integer, UInt8(ascii: "1")): valueSize = 1
      case (.integer, UInt8(ascii: "2")): valueSize = 2
      case (.integer, UInt8(ascii: "4")): valueSize = 4
      case (.integer, UInt8(ascii: "8")): valueSize = 8
      case (.string, UInt8(ascii: "P")): valueSize = 2
      case (.blob, UInt8(ascii: "A")): valueSize = 2
      case (.blob, UInt8(ascii: "B")): valueSize = 4
      case (.blob, UInt8(ascii: "C")): valueSize = 8
      case (.time, UInt8(ascii: "S")): valueSize = 8
      case (.time, UInt8(ascii: "T")): valueSize = 12
      case (.hash(let letter), _) where letter == subtype:
        valueSize = [0x46: 4, 0x47: 20, 0x48: 32, 0x49: 48, 0x4A: 64][letter]!
      default: throw fail(.wrongSubtype(field: field, expected: shape.expected))
      }
      if key == "TYP" && subtype != UInt8(ascii: "1") {
        throw fail(.wrongSubtype(field: field, expected: "1 (one letter)"))
      }
      let valueStart = pos + 4
      guard headerSize - valueStart >= valueSize else {
        throw fail(.fieldPastHeader(field: field, offset: pos, needed: 4 + valueSize, headerSize: headerSize))
      }
      if case .string = shape {
        let length = Int(header[valueStart]) | Int(header[valueStart + 1]) << 8
        guard headerSize - valueStart - 2 >= length else {
          throw fail(.fieldPastHeader(field: field, offset: pos, needed: 6 + length, headerSize: headerSize))
        }
        valueSize += length
      }
      guard seen.insert(key).inserted else { throw fail(.duplicateKey(key: key)) }
      entry.fieldKeys.append(field)
      let value = header[valueStart..<valueStart + valueSize]
      func integer() -> UInt64 {
        var v: UInt64 = 0
        for (i, b) in value.enumerated() { v |= UInt64(b) << (8 * UInt64(i)) }
        return v
      }
      switch shape {
      case .integer:
        let v = integer()
        switch key {
        case "TYP":
          guard let k = AppleArchiveEntry.Kind(rawValue: UInt8(v)) else { throw fail(.unknownEntryType(value: v)) }
          kind = k
        case "MOD": entry.mode = v
        case "UID": entry.uid = v
        case "GID": entry.gid = v
        case "FLG": entry.flags = v
        case "DEV": entry.device = v
        case "SIZ": entry.declaredSize = v
        case "HLC", "CLC", "SLC": if cluster == nil { cluster = (key, v) }
        default: break
        }
      case .string:
        let bytes = Array(value.dropFirst(2))
        switch key {
        case "PAT":
          path = bytes
          if let problem = pathProblem(bytes, limit: limits.maxPathBytes) { throw fail(.invalidPath(problem)) }
          entry.path = bytes
        case "LNK":
          if bytes.isEmpty { throw fail(.invalidLinkTarget(reason: "it is empty")) }
          if bytes.contains(0) { throw fail(.invalidLinkTarget(reason: "it holds a NUL byte")) }
          if bytes.count > limits.maxPathBytes {
            throw fail(
              .invalidLinkTarget(reason: "it is \(bytes.count) bytes long; the limit is \(limits.maxPathBytes)"))
          }
          entry.linkTarget = bytes
        default: break
        }
      case .time:
        var seconds: UInt64 = 0
        for i in 0..<8 { seconds |= UInt64(value[valueStart + i]) << (8 * UInt64(i)) }
        var ns: UInt32 = 0
        if valueSize == 12 {
          for i in 0..<4 { ns |= UInt32(value[valueStart + 8 + i]) << (8 * UInt32(i)) }
          guard ns < 1_000_000_000 else { throw fail(.invalidTime(key: key, nanoseconds: ns)) }
        }
        let time = AppleArchiveTime(seconds: Int64(bitPattern: seconds), nanoseconds: ns)
        switch key {
        case "MTM": entry.modificationTime = time
        case "CTM": entry.creationTime = time
        default: entry.backupTime = time
        }
      case .blob:
        let size = integer()
        let (sum, overflow) = blobTotal.addingReportingOverflow(size)
        guard !overflow else { throw fail(.blobSizesOverflow) }
        blobTotal = sum
        entry.blobs.append(.init(key: key, size: size))
        switch key {
        case "DAT": entry.dataSize = size
        case "XAT": entry.xattrSize = size
        case "ACL": entry.aclSize = size
        default: break
        }
      case .hash:
        let bytes = Array(value)
        switch key {
        case "CKS": entry.hashes.crc32 = UInt32(truncatingIfNeeded: integer())
        case "SH1": entry.hashes.sha1 = bytes
        case "SH2": entry.hashes.sha256 = bytes
        case "SH3": entry.hashes.sha384 = bytes
        default: entry.hashes.sha512 = bytes
        }
      }
      pos = valueStart + valueSize
    }
    guard let kind else { throw fail(.missingField(key: "TYP")) }
    guard seen.contains("PAT") else { throw fail(.missingField(key: "PAT")) }
    entry.kind = kind
    // Checked once the path is known, so the refusal names the entry.
    if let cluster { throw fail(.linkedData(key: cluster.key, cluster: cluster.id)) }
    if entry.path.isEmpty && kind != .directory { throw fail(.invalidPath(.empty)) }
    if kind == .symlink {
      guard entry.linkTarget != nil else { throw fail(.missingField(key: "LNK")) }
    } else if seen.contains("LNK") {
      throw fail(.fieldNotAllowed(key: "LNK", kind: kind.name))
    }
    if kind != .file {
      for key in ["DAT", "SIZ", "CKS", "SH1", "SH2", "SH3", "SH5"] where seen.contains(key) {
        throw fail(.fieldNotAllowed(key: key, kind: kind.name))
      }
    }
    if let siz = entry.declaredSize, siz != (entry.dataSize ?? 0) {
      throw fail(.sizeMismatch(siz: siz, dat: entry.dataSize ?? 0))
    }
    return entry
  }

  /// Why a path is refused, or nil. The root directory's empty path is checked by the caller.
  static func pathProblem(_ path: [UInt8], limit: Int) -> AppleArchiveError.PathProblem? {
    if path.count > limit { return .tooLong(length: path.count, limit: limit) }
    if path.isEmpty { return nil }
    if path.contains(0) { return .nulByte }
    if let c = path.first(where: { $0 < 0x20 || $0 == 0x7F }) { return .controlCharacter(c) }
    if path[0] == UInt8(ascii: "/") { return .absolute }
    for component in path.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false) {
      if component.isEmpty { return .emptyComponent }
      if component.elementsEqual([0x2E, 0x2E]) { return .dotDot }
      if component.elementsEqual([0x2E]) { return .dotComponent }
    }
    return nil
  }
}
