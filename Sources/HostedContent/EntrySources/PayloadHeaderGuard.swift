import ArchiveIO

/// Watches a flat package's decompressed Payload on its way to libarchive and parses every header
/// libarchive will parse, in lockstep with it, before libarchive sees it:
///
/// - cpio: newc and crc (`070701`, `070702`), odc (`070707`), old binary in both byte orders;
/// - tar: the 512-byte header of ustar, pax and GNU archives, with GNU long names and links
///   (`L`, `K`) and pax extended headers (`x`) and their `path`, `linkpath` and `size` records.
///
/// It refuses what libarchive would allocate at the length a header declares (a name or a link
/// longer than ``maxLength``, a pax header longer than ``maxExtendedHeader``), and any byte
/// between entries that is not the next header: libarchive's cpio reader skips such bytes and
/// resynchronises on the next thing that looks like a header, so what it reads is not what the
/// archive's own structure says. What libarchive reads differently from other readers (afio's
/// large headers, GNU sparse files, hard links whose size the format leaves open, sizes in
/// base-256) is refused too. The guard stops watching where libarchive stops reading (the cpio
/// trailer, the tar end-of-archive block).
struct PayloadHeaderGuard {
  /// The longest name or link target accepted, in bytes.
  static let maxLength: UInt64 = 64 * 1024
  /// The longest pax extended header accepted, in bytes: a name and a link of the longest
  /// length, with room for the other records.
  static let maxExtendedHeader: UInt64 = 2 * maxLength + 16 * 1024
  /// Most special tar headers (long names, pax headers) in front of one entry.
  static let maxSpecialHeaders = 8

  private enum Format: String {
    case newc = "newc cpio"
    case odc = "odc cpio"
    case binaryLittleEndian = "binary cpio"
    case binaryBigEndian = "big-endian binary cpio"
    case tar = "tar"
  }

  private enum Step {
    /// The first bytes: which format.
    case start
    /// A cpio header of the format's fixed size.
    case cpioHeader
    /// A cpio entry's name (with its padding).
    case cpioName(nameSize: UInt64, padding: UInt64, dataSize: UInt64, dataPadding: UInt64, symlink: Bool)
    /// A cpio symlink's target (the entry's data).
    case cpioLink(name: [UInt8], padding: UInt64)
    /// A 512-byte tar header.
    case tarHeader
    /// A pax extended header's records.
    case paxRecords(padding: UInt64)
    /// Past the end of the archive: libarchive reads no further.
    case done
  }

  private var format: Format?
  private var step = Step.start
  /// Bytes collected for the current step, and how many it needs.
  private var held: [UInt8] = []
  private var want = 512
  /// Bytes to pass over (data, padding) before the next step.
  private var skip: UInt64 = 0
  /// The offset in the decompressed Payload of the next byte observed.
  private var offset: UInt64 = 0
  /// tar: what the pax and GNU headers in front of the current entry said.
  private var paxSize: UInt64?
  private var specialHeaders = 0

  /// Looks at the next bytes of the decompressed Payload; throws when they hold a header that
  /// must not reach libarchive.
  mutating func observe(_ chunk: [UInt8]) throws {
    var i = 0
    while i < chunk.count {
      if case .done = step { return }
      if skip > 0 {
        let n = Int(min(skip, UInt64(chunk.count - i)))
        skip -= UInt64(n)
        i += n
        offset += UInt64(n)
        continue
      }
      let n = min(want - held.count, chunk.count - i)
      held += chunk[i..<(i + n)]
      i += n
      offset += UInt64(n)
      if held.count == want { try advanceAll() }
    }
  }

  /// The Payload ended: a stream shorter than one tar block is judged as it is.
  mutating func finish() throws {
    if case .start = step, !held.isEmpty { try advanceAll() }
  }

  /// Takes the step whose bytes are held, and every following step that needs no bytes.
  private mutating func advanceAll() throws {
    try advance()
    while want == 0 {
      if case .done = step { return }
      try advance()
    }
  }

  private func damaged(_ what: String, at position: UInt64) -> LibArchiveError {
    LibArchiveError("the Payload's \(format?.rawValue ?? "archive") \(what) at offset \(position)")
  }

  private func notAHeader(at position: UInt64) -> LibArchiveError {
    damaged(
      "holds bytes that are not the next entry's header (libarchive would skip them and read on from whatever looks like one)",
      at: position)
  }

  /// The offset where the bytes held began.
  private var heldAt: UInt64 { offset - UInt64(held.count) }

  private mutating func collect(_ count: UInt64, then next: Step) {
    held = []
    want = Int(count)
    step = next
  }

  private mutating func advance() throws {
    switch step {
    case .start: try start()
    case .cpioHeader: try cpioHeader()
    case .cpioName(let nameSize, let padding, let dataSize, let dataPadding, let symlink):
      let name = Array(held.prefix(Int(nameSize)))
      if symlink {
        // libarchive reads the target before it looks for the trailer, and then compares the
        // target, not the name, with `TRAILER!!!`.
        collect(dataSize, then: .cpioLink(name: name, padding: dataPadding))
        skip += padding
        return
      }
      if nameSize == 11 && name.elementsEqual(Array("TRAILER!!!".utf8) + [0]) {
        step = .done
        return
      }
      collect(headerSize, then: .cpioHeader)
      skip += padding + dataSize + dataPadding
    case .cpioLink(let name, let padding):
      if name.count == 11 && held.starts(with: Array("TRAILER!!!".utf8)) {
        throw damaged("holds a symlink whose target reads as the end of the archive", at: heldAt)
      }
      collect(headerSize, then: .cpioHeader)
      skip += padding
    case .tarHeader: try tarHeader()
    case .paxRecords(let padding):
      try paxRecords()
      collect(512, then: .tarHeader)
      skip += padding
    case .done: return
    }
  }

  private var headerSize: UInt64 {
    switch format {
    case .newc: return 110
    case .odc: return 76
    case .binaryLittleEndian, .binaryBigEndian: return 26
    default: return 512
    }
  }

  // MARK: - Format

  private mutating func start() throws {
    let bytes = held
    let magic = String(decoding: bytes.prefix(6), as: UTF8.self)
    let cpio: Format?
    switch magic {
    case "070701", "070702": cpio = .newc
    case "070707": cpio = .odc
    case "070727": throw LibArchiveError("the Payload is an afio large cpio archive, which pkgtool does not read")
    default:
      if bytes.count >= 2 && bytes[0] == 0xC7 && bytes[1] == 0x71 {
        cpio = .binaryLittleEndian
      } else if bytes.count >= 2 && bytes[0] == 0x71 && bytes[1] == 0xC7 {
        cpio = .binaryBigEndian
      } else {
        cpio = nil
      }
    }
    // libarchive bids tar over cpio when the first block is a tar header with a good checksum.
    let tar = bytes.count == 512 && (bytes.allSatisfy { $0 == 0 } || PayloadHeaderGuard.tarChecksumIsValid(bytes))
    if let cpio, tar {
      throw LibArchiveError("the Payload reads both as a \(cpio.rawValue) archive and as a tar archive")
    }
    if tar {
      format = .tar
      step = .tarHeader
      try tarHeader()
      return
    }
    guard let cpio else {
      guard bytes.count >= 6 else { return }  // too short to be anything; libarchive says so
      throw LibArchiveError("the Payload is neither a cpio nor a tar archive")
    }
    // Judge the bytes held so far as cpio headers, from the top.
    format = cpio
    offset -= UInt64(bytes.count)
    collect(headerSize, then: .cpioHeader)
    try observe(bytes)
  }

  // MARK: - cpio

  private mutating func cpioHeader() throws {
    let h = held
    let at = heldAt
    func text(_ from: Int, _ count: Int) -> String { String(decoding: h[from..<(from + count)], as: UTF8.self) }
    let nameSize: UInt64
    let dataSize: UInt64
    let mode: UInt64
    let namePadding: UInt64
    let dataPadding: UInt64
    switch format {
    case .newc:
      // Exactly what libarchive accepts without searching further: the magic, then hex digits.
      guard text(0, 5) == "07070", h[5] == UInt8(ascii: "1") || h[5] == UInt8(ascii: "2"),
        h.allSatisfy({ (0x30...0x39).contains($0) || (0x41...0x46).contains($0) || (0x61...0x66).contains($0) })
      else { throw notAHeader(at: at) }
      func hex(_ from: Int) -> UInt64 { UInt64(text(from, 8), radix: 16)! }
      mode = hex(14)
      dataSize = hex(54)
      nameSize = hex(94)
      namePadding = (2 &- nameSize) & 3
      dataPadding = (4 - dataSize % 4) % 4
    case .odc:
      guard text(0, 6) == "070707", h.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "7") }) else {
        throw notAHeader(at: at)
      }
      func octal(_ from: Int, _ count: Int) -> UInt64 { UInt64(text(from, count), radix: 8)! }
      mode = octal(18, 6)
      nameSize = octal(59, 6)
      dataSize = octal(65, 11)
      namePadding = 0
      dataPadding = 0
    case .binaryLittleEndian, .binaryBigEndian:
      // libarchive reads the next 26 bytes as a header whatever they hold; insist on the magic.
      let little = format == .binaryLittleEndian
      func word(_ i: Int) -> UInt64 {
        little ? UInt64(h[i]) | UInt64(h[i + 1]) << 8 : UInt64(h[i]) << 8 | UInt64(h[i + 1])
      }
      guard word(0) == 0o070707 else { throw notAHeader(at: at) }
      mode = word(6)
      nameSize = word(20)
      // Two words, the more significant first; libarchive keeps it in a signed 32-bit int.
      dataSize = word(22) << 16 | word(24)
      guard dataSize < 1 << 31 else { throw damaged("header declares a size of \(dataSize) bytes", at: at) }
      namePadding = nameSize & 1
      dataPadding = dataSize & 1
    default:
      return
    }
    guard nameSize <= PayloadHeaderGuard.maxLength else {
      throw damaged("header declares a name of \(nameSize) bytes", at: at)
    }
    let symlink = mode & 0o170000 == 0o120000
    if symlink && dataSize > PayloadHeaderGuard.maxLength {
      throw damaged("header declares a symlink target of \(dataSize) bytes", at: at)
    }
    collect(
      nameSize,
      then: .cpioName(
        nameSize: nameSize, padding: namePadding, dataSize: dataSize, dataPadding: dataPadding, symlink: symlink))
  }

  // MARK: - tar

  /// libarchive's test of a tar header's checksum: unsigned or (old writers) signed byte sums.
  static func tarChecksumIsValid(_ h: [UInt8]) -> Bool {
    guard h.count == 512 else { return false }
    let field = h[148..<156]
    guard field.allSatisfy({ $0 == 0x20 || $0 == 0 || ($0 >= 0x30 && $0 <= 0x37) }) else { return false }
    guard let sum = tarNumber(field) else { return false }
    var unsigned = 0
    var signed = 0
    for (i, b) in h.enumerated() {
      let v = (148..<156).contains(i) ? 32 : Int(b)
      unsigned += v
      signed += (148..<156).contains(i) ? 32 : Int(Int8(bitPattern: b))
    }
    return sum == UInt64(max(0, unsigned)) || (signed >= 0 && sum == UInt64(signed))
  }

  /// A tar number field as libarchive reads it: leading blanks, then octal digits up to the first
  /// other byte. nil for base-256 and negative values, which pkgtool does not accept.
  static func tarNumber(_ field: ArraySlice<UInt8>) -> UInt64? {
    guard let first = field.first, first & 0x80 == 0 else { return nil }
    var i = field.startIndex
    while i < field.endIndex && (field[i] == 0x20 || field[i] == 0x09) { i += 1 }
    guard i == field.endIndex || field[i] != UInt8(ascii: "-") else { return nil }
    var value: UInt64 = 0
    while i < field.endIndex, field[i] >= 0x30, field[i] <= 0x37 {
      guard value < 1 << 60 else { return nil }
      value = value << 3 | UInt64(field[i] - 0x30)
      i += 1
    }
    return value
  }

  private static func padded(_ n: UInt64) -> UInt64 { (n + 511) & ~511 }

  private mutating func tarHeader() throws {
    let h = held
    let at = heldAt
    if h.allSatisfy({ $0 == 0 }) {
      step = .done
      return
    }
    guard PayloadHeaderGuard.tarChecksumIsValid(h) else { throw notAHeader(at: at) }
    guard let size = PayloadHeaderGuard.tarNumber(h[124..<136]) else {
      throw damaged("header declares a size pkgtool does not read (negative or base-256)", at: at)
    }
    let type = h[156]
    func special() throws {
      specialHeaders += 1
      guard specialHeaders <= PayloadHeaderGuard.maxSpecialHeaders else {
        throw damaged("has more than \(PayloadHeaderGuard.maxSpecialHeaders) extension headers for one entry", at: at)
      }
    }
    switch type {
    case UInt8(ascii: "L"), UInt8(ascii: "K"):
      try special()
      guard size <= PayloadHeaderGuard.maxLength else {
        let what = type == UInt8(ascii: "L") ? "name" : "link target"
        throw damaged("header declares a \(what) of \(size) bytes", at: at)
      }
      collect(512, then: .tarHeader)
      skip += PayloadHeaderGuard.padded(size)
    case UInt8(ascii: "x"), UInt8(ascii: "X"), UInt8(ascii: "g"):
      try special()
      guard size <= PayloadHeaderGuard.maxExtendedHeader else {
        throw damaged("pax header declares \(size) bytes", at: at)
      }
      if type == UInt8(ascii: "g") {
        // Global records: libarchive keeps none of them for the entries that follow.
        collect(512, then: .tarHeader)
        skip += PayloadHeaderGuard.padded(size)
      } else {
        collect(size, then: .paxRecords(padding: PayloadHeaderGuard.padded(size) - size))
      }
    default:
      let dataSize: UInt64
      switch type {
      case 0, UInt8(ascii: "0"), UInt8(ascii: "7"):
        dataSize = paxSize ?? size
      case UInt8(ascii: "1"):
        // Whether libarchive reads a hard link's size depends on the headers before it; only a
        // pax size, or none, says the same to every reader.
        guard paxSize != nil || size == 0 else {
          throw damaged("header of a hard link declares \(size) bytes of data", at: at)
        }
        dataSize = paxSize ?? 0
      case UInt8(ascii: "2"), UInt8(ascii: "3"), UInt8(ascii: "4"), UInt8(ascii: "5"), UInt8(ascii: "6"):
        dataSize = paxSize ?? 0
      default:
        let shown = type >= 0x21 && type < 0x7F ? "'\(Character(Unicode.Scalar(type)))'" : "\(type)"
        throw damaged("holds an entry of type \(shown), which pkgtool does not read", at: at)
      }
      paxSize = nil
      specialHeaders = 0
      collect(512, then: .tarHeader)
      skip += PayloadHeaderGuard.padded(dataSize)
    }
  }

  /// A pax extended header's records (`LENGTH KEY=VALUE\n`), which libarchive applies to the entry
  /// that follows: the names are bounded, the size kept so the guard skips what libarchive skips.
  private mutating func paxRecords() throws {
    let body = held
    let at = heldAt
    var i = 0
    while i < body.count {
      var length = 0
      var j = i
      while j < body.count, body[j] >= 0x30, body[j] <= 0x39, length < 1 << 32 {
        length = length * 10 + Int(body[j] - 0x30)
        j += 1
      }
      guard j < body.count, body[j] == 0x20, length > j - i, i + length <= body.count, body[i + length - 1] == 0x0A
      else { throw damaged("pax header holds a malformed record", at: at + UInt64(i)) }
      let record = body[(j + 1)..<(i + length - 1)]
      guard let equals = record.firstIndex(of: UInt8(ascii: "=")) else {
        throw damaged("pax header holds a malformed record", at: at + UInt64(i))
      }
      let key = String(decoding: record[..<equals], as: UTF8.self)
      let value = record[(equals + 1)...]
      switch key {
      case "path", "linkpath", "GNU.sparse.name":
        guard UInt64(value.count) <= PayloadHeaderGuard.maxLength else {
          throw damaged("pax header declares a \(key) of \(value.count) bytes", at: at + UInt64(i))
        }
      case "size":
        guard !value.isEmpty, value.count <= 19, value.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else {
          throw damaged("pax header holds a malformed size", at: at + UInt64(i))
        }
        paxSize = UInt64(String(decoding: value, as: UTF8.self))
      default:
        if key.hasPrefix("GNU.sparse") || key == "SCHILY.realsize" {
          throw damaged("pax header describes a sparse file, which pkgtool does not read", at: at + UInt64(i))
        }
      }
      i += length
    }
  }
}
