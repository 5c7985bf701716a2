/// The children of a TOC `<file>` that the parser reads; any other is ignored.
enum FileField: Int, CaseIterable {
  case mode, uid, gid, user, group, mtime, link
  case name, type, data

  /// The field of element `name`, if it is one that is read.
  init?(element name: String) {
    switch name {
    case "mode": self = .mode
    case "uid": self = .uid
    case "gid": self = .gid
    case "user": self = .user
    case "group": self = .group
    case "mtime": self = .mtime
    case "link": self = .link
    case "name": self = .name
    case "type": self = .type
    case "data": self = .data
    default: return nil
    }
  }

  /// The element's name.
  var element: String {
    switch self {
    case .mode: return "mode"
    case .uid: return "uid"
    case .gid: return "gid"
    case .user: return "user"
    case .group: return "group"
    case .mtime: return "mtime"
    case .link: return "link"
    case .name: return "name"
    case .type: return "type"
    case .data: return "data"
    }
  }

  /// True for the fields kept as text in ``FieldValues`` (name, type and data are kept apart).
  var isAttribute: Bool { rawValue <= FileField.link.rawValue }

  /// Its bit in a set of fields seen (each may appear once).
  var bit: UInt32 { 1 << UInt32(rawValue) }
}

/// The children of a `<file>`'s `<data>` that the parser reads.
enum DataField: Int, CaseIterable {
  case offset, length, size, encoding, archivedChecksum, extractedChecksum

  init?(element name: String) {
    switch name {
    case "offset": self = .offset
    case "length": self = .length
    case "size": self = .size
    case "encoding": self = .encoding
    case "archived-checksum": self = .archivedChecksum
    case "extracted-checksum": self = .extractedChecksum
    default: return nil
    }
  }

  var element: String {
    switch self {
    case .offset: return "offset"
    case .length: return "length"
    case .size: return "size"
    case .encoding: return "encoding"
    case .archivedChecksum: return "archived-checksum"
    case .extractedChecksum: return "extracted-checksum"
    }
  }

  var bit: UInt32 { 1 << UInt32(rawValue) }
}

/// Text values by field, in a small array rather than a dictionary per entry.
struct FieldValues<Field: RawRepresentable & CaseIterable> where Field.RawValue == Int {
  private var values = [String?](repeating: nil, count: Field.allCases.count)

  subscript(_ field: Field) -> String? {
    get { values[field.rawValue] }
    set { values[field.rawValue] = newValue }
  }
}
