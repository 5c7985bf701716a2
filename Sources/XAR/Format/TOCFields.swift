/// The TOC elements the parser knows, found from their names' bytes without making a string.
enum TOCElement: UInt8, CaseIterable, Hashable {
  case xar, toc, checksum, creationTime, offset, size, file
  case name, type, mode, uid, gid, user, group, mtime, link, data
  case length, encoding, archivedChecksum, extractedChecksum
  /// `<signature>` and `<x-signature>` of the TOC: a signature's bytes in the heap.
  case signature, xSignature
  /// `<ea>` of a `<file>`: an extended attribute, whose bytes lie in the heap.
  case ea
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
    case .signature: return "signature"
    case .xSignature: return "x-signature"
    case .ea: return "ea"
    case .other: return "(other)"
    }
  }

  /// Matches the name's bytes against the known names: by length and the bytes read as
  /// little-endian words (the first eight, then the next eight, then the rest), so each event
  /// costs a few loads and compares, not a string (`TOCElementTests` checks every name, and
  /// every name one byte away from one, against a plain string comparison).
  init(_ bytes: UnsafeRawBufferPointer) {
    let n = bytes.count
    guard n >= 2, n <= 18 else {
      self = .other
      return
    }
    func word(_ from: Int) -> UInt64 {
      var value: UInt64 = 0
      var i = min(n, from + 8)
      while i > from {
        i -= 1
        value = value << 8 | UInt64(bytes[i])
      }
      return value
    }
    let first = word(0)
    switch (n, first) {
    case (2, 0x0000_0000_0000_6165): self = .ea
    case (3, 0x0000_0000_0072_6178): self = .xar
    case (3, 0x0000_0000_0063_6F74): self = .toc
    case (3, 0x0000_0000_0064_6975): self = .uid
    case (3, 0x0000_0000_0064_6967): self = .gid
    case (4, 0x0000_0000_656C_6966): self = .file
    case (4, 0x0000_0000_656D_616E): self = .name
    case (4, 0x0000_0000_6570_7974): self = .type
    case (4, 0x0000_0000_6564_6F6D): self = .mode
    case (4, 0x0000_0000_7265_7375): self = .user
    case (4, 0x0000_0000_6B6E_696C): self = .link
    case (4, 0x0000_0000_6174_6164): self = .data
    case (4, 0x0000_0000_657A_6973): self = .size
    case (5, 0x0000_0070_756F_7267): self = .group
    case (5, 0x0000_0065_6D69_746D): self = .mtime
    case (6, 0x0000_7465_7366_666F): self = .offset
    case (6, 0x0000_6874_676E_656C): self = .length
    case (8, 0x6D75_736B_6365_6863): self = .checksum
    case (8, 0x676E_6964_6F63_6E65): self = .encoding
    case (9, 0x7275_7461_6E67_6973) where word(8) == 0x65: self = .signature
    case (11, 0x7461_6E67_6973_2D78) where word(8) == 0x65_7275: self = .xSignature
    case (13, 0x6E6F_6974_6165_7263) where word(8) == 0x65_6D69_742D: self = .creationTime
    case (17, 0x6465_7669_6863_7261) where word(8) == 0x7573_6B63_6568_632D && word(16) == 0x6D:
      self = .archivedChecksum
    case (18, 0x6574_6361_7274_7865) where word(8) == 0x736B_6365_6863_2D64 && word(16) == 0x6D75:
      self = .extractedChecksum
    default: self = .other
    }
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
    switch element {
    case .mode: self = .mode
    case .uid: self = .uid
    case .gid: self = .gid
    case .user: self = .user
    case .group: self = .group
    case .mtime: self = .mtime
    case .link: self = .link
    case .name: self = .name
    case .type: self = .type
    case .data: self = .data
    default: return nil
    }
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
