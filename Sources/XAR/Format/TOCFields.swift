/// The TOC elements the parser knows, found from their names' bytes without making a string.
enum TOCElement: UInt8, CaseIterable, Hashable {
  case xar, toc, checksum, creationTime, offset, size, file
  case name, type, mode, uid, gid, user, group, mtime, link, data
  case length, encoding, archivedChecksum, extractedChecksum
  /// Any other element.
  case other

  /// The element's name in the TOC.
  var name: String {
    switch self {
    case .xar: return "xar"
    case .toc: return "toc"
    case .checksum: return "checksum"
    case .creationTime: return "creation-time"
    case .offset: return "offset"
    case .size: return "size"
    case .file: return "file"
    case .name: return "name"
    case .type: return "type"
    case .mode: return "mode"
    case .uid: return "uid"
    case .gid: return "gid"
    case .user: return "user"
    case .group: return "group"
    case .mtime: return "mtime"
    case .link: return "link"
    case .data: return "data"
    case .length: return "length"
    case .encoding: return "encoding"
    case .archivedChecksum: return "archived-checksum"
    case .extractedChecksum: return "extracted-checksum"
    case .other: return "(other)"
    }
  }

  /// The known names by length (a name is matched against those of its length only).
  private static let byLength: [[(name: StaticString, element: TOCElement)]] = {
    var table = [[(name: StaticString, element: TOCElement)]](repeating: [], count: 19)
    let all: [(StaticString, TOCElement)] = [
      ("xar", .xar), ("toc", .toc), ("uid", .uid), ("gid", .gid), ("file", .file), ("name", .name), ("type", .type),
      ("mode", .mode), ("user", .user), ("link", .link), ("data", .data), ("size", .size), ("group", .group),
      ("mtime", .mtime), ("offset", .offset), ("length", .length), ("checksum", .checksum), ("encoding", .encoding),
      ("creation-time", .creationTime), ("archived-checksum", .archivedChecksum),
      ("extracted-checksum", .extractedChecksum),
    ]
    for (name, element) in all { table[name.utf8CodeUnitCount].append((name, element)) }
    return table
  }()

  /// Matches the name's bytes against the known names of the same length.
  init(_ bytes: UnsafeRawBufferPointer) {
    if bytes.count < TOCElement.byLength.count {
      for candidate in TOCElement.byLength[bytes.count]
      where candidate.name.withUTF8Buffer({ UnsafeRawBufferPointer($0).elementsEqual(bytes) }) {
        self = candidate.element
        return
      }
    }
    self = .other
  }
}

/// The children of a TOC `<file>` that the parser reads; any other is ignored.
enum FileField: Int, CaseIterable {
  case mode, uid, gid, user, group, mtime, link
  case name, type, data

  /// The element of each field, in the fields' order.
  private static let elements: [TOCElement] = [.mode, .uid, .gid, .user, .group, .mtime, .link, .name, .type, .data]

  /// The field of `element`, if it is one that is read.
  init?(_ element: TOCElement) {
    guard let i = FileField.elements.firstIndex(of: element) else { return nil }
    self.init(rawValue: i)
  }

  /// The element's name.
  var element: String { FileField.elements[rawValue].name }

  /// True for the fields kept as text in ``FieldValues`` (name, type and data are kept apart).
  var isAttribute: Bool { rawValue <= FileField.link.rawValue }

  /// Its bit in a set of fields seen (each may appear once).
  var bit: UInt32 { 1 << UInt32(rawValue) }
}

/// The children of a `<file>`'s `<data>` that the parser reads.
enum DataField: Int, CaseIterable {
  case offset, length, size, encoding, archivedChecksum, extractedChecksum

  /// The element of each field, in the fields' order.
  private static let elements: [TOCElement] = [
    .offset, .length, .size, .encoding, .archivedChecksum, .extractedChecksum,
  ]

  init?(_ element: TOCElement) {
    guard let i = DataField.elements.firstIndex(of: element) else { return nil }
    self.init(rawValue: i)
  }

  /// The element's name.
  var element: String { DataField.elements[rawValue].name }

  var bit: UInt32 { 1 << UInt32(rawValue) }
}

/// Text values by field, stored inline (no allocation per entry).
struct FieldValues<Field: RawRepresentable & CaseIterable> where Field.RawValue == Int {
  private var v0, v1, v2, v3, v4, v5, v6, v7, v8, v9: String?

  subscript(_ field: Field) -> String? {
    get {
      switch field.rawValue {
      case 0: return v0
      case 1: return v1
      case 2: return v2
      case 3: return v3
      case 4: return v4
      case 5: return v5
      case 6: return v6
      case 7: return v7
      case 8: return v8
      default: return v9
      }
    }
    set {
      switch field.rawValue {
      case 0: v0 = newValue
      case 1: v1 = newValue
      case 2: v2 = newValue
      case 3: v3 = newValue
      case 4: v4 = newValue
      case 5: v5 = newValue
      case 6: v6 = newValue
      case 7: v7 = newValue
      case 8: v8 = newValue
      default: v9 = newValue
      }
    }
  }
}
