/// Reads `bplist00` property lists, bounds-checking every offset and refusing cycles.
///
/// An object may be referenced from many places (writers share equal strings and numbers), and
/// the tree the reader returns holds it once per reference: a chain of arrays that each refer to
/// the next twice is 2^N nodes from a few hundred bytes. So the reader counts what it
/// materialises, each object once per reference (one unit, plus one per byte of a string or
/// data), and refuses a list whose total passes ``budget(for:)``: the cost of a property list
/// stays linear in its bytes.
enum BinaryPropertyListReader {
  static let maxDepth = 64

  /// What a binary property list of `count` bytes may materialise: a few times its size, which
  /// real lists (where sharing saves bytes, not multiplies them) never approach.
  static func budget(for count: Int) -> Int { 4 * count + 4096 }

  static func decode(_ bytes: [UInt8]) throws -> PropertyList {
    guard bytes.count >= 8 + 32, bytes.starts(with: Array("bplist00".utf8)) else {
      throw PropertyListError("not a binary property list (bplist00) or truncated")
    }
    let t = bytes.count - 32
    let offsetSize = Int(bytes[t + 6])
    let refSize = Int(bytes[t + 7])
    let objectCount = read(bytes, t + 8, 8)
    let top = read(bytes, t + 16, 8)
    let tableOffset = read(bytes, t + 24, 8)
    guard (1...8).contains(offsetSize), (1...8).contains(refSize), objectCount > 0,
      objectCount < UInt64(bytes.count), top < objectCount,
      tableOffset >= 8, tableOffset < UInt64(t),
      objectCount * UInt64(offsetSize) <= UInt64(t) - tableOffset
    else { throw PropertyListError("binary property list: invalid trailer") }
    var parser = Parser(
      bytes: bytes, offsetSize: offsetSize, refSize: refSize, count: Int(objectCount),
      table: Int(tableOffset), limit: Int(tableOffset), budget: budget(for: bytes.count))
    return try parser.object(Int(top), depth: 0)
  }

  static func read(_ bytes: [UInt8], _ at: Int, _ size: Int) -> UInt64 {
    var v: UInt64 = 0
    for i in 0..<size { v = v << 8 | UInt64(bytes[at + i]) }
    return v
  }

  private struct Parser {
    let bytes: [UInt8]
    let offsetSize: Int
    let refSize: Int
    let count: Int
    let table: Int
    let limit: Int
    /// What may still be materialised (see ``BinaryPropertyListReader``).
    var budget: Int
    var visiting = Set<Int>()

    func fail(_ what: String) -> PropertyListError { PropertyListError("binary property list: \(what)") }

    func need(_ at: Int, _ n: Int) throws {
      guard at >= 8, n >= 0, at <= limit, n <= limit - at else { throw fail("object out of bounds") }
    }

    func offset(of index: Int) throws -> Int {
      guard index >= 0, index < count else { throw fail("object reference out of range") }
      let offset = read(bytes, table + index * offsetSize, offsetSize)
      guard offset < UInt64(limit) else { throw fail("object offset out of bounds") }
      return Int(offset)
    }

    /// The object count that follows a marker whose low nibble is 0xF.
    func length(_ marker: UInt8, at: inout Int) throws -> Int {
      let low = Int(marker & 0x0F)
      guard low == 0x0F else { return low }
      try need(at, 1)
      let intMarker = bytes[at]
      guard intMarker & 0xF0 == 0x10 else { throw fail("invalid length") }
      let size = 1 << Int(intMarker & 0x0F)
      guard size <= 8 else { throw fail("invalid length") }
      try need(at + 1, size)
      let v = read(bytes, at + 1, size)
      at += 1 + size
      guard v < UInt64(limit) else { throw fail("length out of bounds") }
      return Int(v)
    }

    /// Takes `units` from the budget; throws once it is spent.
    mutating func spend(_ units: Int) throws {
      budget -= units
      guard budget >= 0 else {
        throw fail(
          "its shared objects expand to more than 4 times its size (\(BinaryPropertyListReader.budget(for: bytes.count)) nodes and bytes)"
        )
      }
    }

    mutating func object(_ index: Int, depth: Int) throws -> PropertyList {
      guard depth < BinaryPropertyListReader.maxDepth else { throw fail("nested too deeply") }
      try spend(1)
      var at = try offset(of: index)
      try need(at, 1)
      let marker = bytes[at]
      at += 1
      switch marker >> 4 {
      case 0x0:
        switch marker {
        case 0x08: return .boolean(false)
        case 0x09: return .boolean(true)
        default: throw fail("unsupported marker 0x\(String(marker, radix: 16))")
        }
      case 0x1:
        let size = 1 << Int(marker & 0x0F)
        guard size <= 16 else { throw fail("invalid integer") }
        try need(at, size)
        let v = read(bytes, at + max(0, size - 8), min(size, 8))
        // 16 bytes: a 128-bit integer, as Apple writes unsigned values above Int64.max. Only
        // what 64 bits hold exactly is read (the upper half zero, or all ones for a negative).
        if size == 16 {
          let high = read(bytes, at, 8)
          if high == 0 && v > UInt64(Int64.max) { return .unsignedInteger(v) }
          guard (high == 0 && v <= UInt64(Int64.max)) || (high == UInt64.max && v > UInt64(Int64.max)) else {
            throw fail("an integer wider than 64 bits")
          }
        }
        return .integer(Int64(bitPattern: v))
      case 0x2:
        let size = 1 << Int(marker & 0x0F)
        try need(at, size)
        if size == 4 { return .real(Double(Float(bitPattern: UInt32(read(bytes, at, 4))))) }
        guard size == 8 else { throw fail("invalid real") }
        return .real(Double(bitPattern: read(bytes, at, 8)))
      case 0x3:
        guard marker == 0x33 else { throw fail("invalid date") }
        try need(at, 8)
        let seconds = Double(bitPattern: read(bytes, at, 8))
        // Years 1 to 9999, as XML plist dates can say (found by fuzzing: writing a larger one crashed).
        guard seconds.isFinite, abs(seconds) < 2.5e11 else { throw fail("date out of range") }
        return .date(seconds)
      case 0x4:
        let n = try length(marker, at: &at)
        try need(at, n)
        try spend(n)
        return .data(Array(bytes[at..<(at + n)]))
      case 0x5:
        let n = try length(marker, at: &at)
        try need(at, n)
        try spend(n)
        guard let s = String(validating: bytes[at..<(at + n)], as: UTF8.self) else {
          throw fail("invalid ASCII string")
        }
        return .string(s)
      case 0x6:
        let n = try length(marker, at: &at)
        guard n <= limit / 2 else { throw fail("string out of bounds") }
        try need(at, n * 2)
        try spend(n * 2)
        var units: [UInt16] = []
        units.reserveCapacity(n)
        for i in 0..<n { units.append(UInt16(bytes[at + 2 * i]) << 8 | UInt16(bytes[at + 2 * i + 1])) }
        guard let s = String(validating: units, as: UTF16.self) else { throw fail("invalid UTF-16 string") }
        return .string(s)
      case 0xA, 0xD:
        let n = try length(marker, at: &at)
        let isDict = marker >> 4 == 0xD
        let refs = isDict ? 2 * n : n
        guard refs <= limit / refSize else { throw fail("collection out of bounds") }
        try need(at, refs * refSize)
        try spend(refs)
        guard visiting.insert(index).inserted else { throw fail("an object contains itself") }
        defer { visiting.remove(index) }
        func ref(_ i: Int) -> Int { Int(clamping: read(bytes, at + i * refSize, refSize)) }
        if !isDict {
          var items: [PropertyList] = []
          for i in 0..<n { items.append(try object(ref(i), depth: depth + 1)) }
          return .array(items)
        }
        var pairs: [(key: String, value: PropertyList)] = []
        var keys = Set<String>()
        for i in 0..<n {
          guard case .string(let key) = try object(ref(i), depth: depth + 1) else {
            throw fail("a dictionary key is not a string")
          }
          guard keys.insert(key).inserted else { throw fail("duplicate key '\(key)'") }
          pairs.append((key, try object(ref(n + i), depth: depth + 1)))
        }
        return .dictionary(pairs)
      default:
        throw fail("unsupported marker 0x\(String(marker, radix: 16))")
      }
    }
  }
}

/// Writes `bplist00` property lists: objects in depth-first order, no sharing, smallest widths.
enum BinaryPropertyListWriter {
  static func encode(_ value: PropertyList) -> [UInt8] {
    var objects: [[UInt8]] = []
    // First pass: count objects to size references.
    func count(_ v: PropertyList) -> Int {
      switch v {
      case .array(let items): return 1 + items.reduce(0) { $0 + count($1) }
      case .dictionary(let pairs): return 1 + pairs.reduce(0) { $0 + 1 + count($1.value) }
      default: return 1
      }
    }
    let total = count(value)
    let refSize = total < 256 ? 1 : total < 65_536 ? 2 : 4
    func big(_ v: UInt64, _ size: Int) -> [UInt8] { (0..<size).reversed().map { UInt8(v >> (8 * UInt64($0)) & 0xFF) } }
    func header(_ kind: UInt8, _ n: Int) -> [UInt8] {
      if n < 15 { return [kind << 4 | UInt8(n)] }
      return [kind << 4 | 0x0F] + intObject(Int64(n))
    }
    func intObject(_ i: Int64) -> [UInt8] {
      if i >= 0 && i < 256 { return [0x10, UInt8(i)] }
      if i >= 0 && i < 65_536 { return [0x11] + big(UInt64(i), 2) }
      if i >= 0 && i < 1 << 32 { return [0x12] + big(UInt64(i), 4) }
      return [0x13] + big(UInt64(bitPattern: i), 8)
    }
    @discardableResult
    func add(_ v: PropertyList) -> Int {
      let index = objects.count
      objects.append([])
      var bytes: [UInt8]
      switch v {
      case .boolean(let b): bytes = [b ? 0x09 : 0x08]
      case .integer(let i): bytes = intObject(i)
      case .unsignedInteger(let u): bytes = [0x14] + big(0, 8) + big(u, 8)
      case .real(let r): bytes = [0x23] + big(r.bitPattern, 8)
      case .date(let d): bytes = [0x33] + big(d.bitPattern, 8)
      case .data(let d): bytes = header(0x4, d.count) + d
      case .string(let s):
        if s.utf8.allSatisfy({ $0 < 0x80 }) {
          bytes = header(0x5, s.utf8.count) + Array(s.utf8)
        } else {
          let units = Array(s.utf16)
          bytes = header(0x6, units.count) + units.flatMap { [UInt8($0 >> 8), UInt8($0 & 0xFF)] }
        }
      case .array(let items):
        var refs: [Int] = []
        for item in items { refs.append(add(item)) }
        bytes = header(0xA, items.count) + refs.flatMap { big(UInt64($0), refSize) }
      case .dictionary(let pairs):
        var keyRefs: [Int] = []
        var valueRefs: [Int] = []
        for (key, _) in pairs { keyRefs.append(add(.string(key))) }
        for (_, item) in pairs { valueRefs.append(add(item)) }
        bytes = header(0xD, pairs.count) + (keyRefs + valueRefs).flatMap { big(UInt64($0), refSize) }
      }
      objects[index] = bytes
      return index
    }
    add(value)
    var out = Array("bplist00".utf8)
    var offsets: [Int] = []
    for object in objects {
      offsets.append(out.count)
      out += object
    }
    let tableOffset = out.count
    let offsetSize = tableOffset < 256 ? 1 : tableOffset < 65_536 ? 2 : tableOffset < 1 << 32 ? 4 : 8
    for o in offsets { out += big(UInt64(o), offsetSize) }
    out += [0, 0, 0, 0, 0, 0, UInt8(offsetSize), UInt8(refSize)]
    out += big(UInt64(objects.count), 8) + big(0, 8) + big(UInt64(tableOffset), 8)
    return out
  }
}
