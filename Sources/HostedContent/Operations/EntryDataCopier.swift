import XAR

/// The data half of a run: reads each entry's bytes once, in chunks, and copies them to a sink
/// or drains them, within one work budget. Bytes decoded and thrown away cost the same as bytes
/// written, so a refused or skipped entry cannot make a command inflate more than `validate`
/// does. A file's bytes must add up to its declared size.
package struct EntryDataCopier {
  /// Thrown when the bytes decoded pass the budget: reading stops there (a fact for the
  /// `size-limit` rule, see ``RuleRunner/finish(_:maxSize:)``).
  package struct BudgetExceeded: Error {}

  /// The read buffer: its first bytes after ``readFirst(_:declared:)`` are the rules' `head`.
  package private(set) var buffer: [UInt8]
  /// Bytes decoded so far, whatever became of them.
  package private(set) var produced: UInt64 = 0
  /// The budget (`--max-size`).
  package let maxSize: UInt64
  /// Set by ``readFirst(_:declared:)`` when the data ended while the head was gathered: the
  /// next read is not made (it would come after the end).
  private var headEnded = false
  /// An error of a read made while the head was gathered after the first: thrown at the next
  /// read instead, so that the rules still see the entry first, as when one read gave the head.
  private var headError: (any Error)?

  /// A copier reading `chunkSize` bytes per step within `maxSize` decoded bytes.
  package init(chunkSize: Int, maxSize: UInt64) {
    buffer = [UInt8](repeating: 0, count: chunkSize)
    self.maxSize = maxSize
  }

  /// Reads a file's first bytes into ``buffer``: as many as the buffer holds, or the whole file
  /// when it is smaller (`declared`), however few bytes each read gives (an Apple Archive gives
  /// what is left of its current block): a rule that looks at the head (a Mach-O magic, a
  /// manifest's size) must see it whole, wherever the format cuts it. Returns how many bytes.
  /// Reads past the declared size or the end are never made here: the end and the checks it
  /// brings (a checksum, a size) come with the next read, as they did with one read.
  package mutating func readFirst(_ data: EntryData, declared: UInt64) throws -> Int {
    headEnded = false
    headError = nil
    var total = try buffer.withUnsafeMutableBytes { try data.read(into: $0) }
    let wanted = Int(min(UInt64(buffer.count), declared))
    while total > 0 && total < wanted {
      do {
        let n = try buffer.withUnsafeMutableBytes { raw in
          try data.read(into: UnsafeMutableRawBufferPointer(rebasing: raw[total...]))
        }
        if n == 0 {
          headEnded = true
          break
        }
        total += n
      } catch {
        headError = error
        break
      }
    }
    return total
  }

  /// The next chunk after the head (see ``readFirst(_:declared:)``).
  private mutating func next(_ data: EntryData) throws -> Int {
    if let error = headError {
      headError = nil
      throw error
    }
    if headEnded {
      headEnded = false
      return 0
    }
    return try buffer.withUnsafeMutableBytes { try data.read(into: $0) }
  }

  /// Reads the rest of `entry`'s data (after `initial` bytes already in ``buffer``) and throws
  /// it away, checking its size and charging the budget.
  package mutating func drain(_ data: EntryData, of entry: PackageEntry, initial: Int) throws {
    var total = UInt64(initial)
    var n = initial
    while n > 0 {
      guard total <= entry.size else {
        throw XARError.dataLongerThanDeclared(path: entry.path, declared: entry.size)
      }
      produced += UInt64(n)
      if produced > maxSize { throw BudgetExceeded() }
      n = try next(data)
      total += UInt64(n)
    }
  }

  /// Copies `entry`'s data (after `initial` bytes already in ``buffer``) chunk by chunk to
  /// `write`, checking its size and charging the budget; `each` sees every chunk too (a hash,
  /// the plist's bytes, progress). Throws, with the file half written, when the data is longer
  /// or shorter than declared or the budget runs out.
  package mutating func copy(
    _ data: EntryData, of entry: PackageEntry, initial: Int, to write: (UnsafeRawBufferPointer) throws -> Void,
    each: (UnsafeRawBufferPointer, _ produced: UInt64) -> Void
  ) throws {
    var total: UInt64 = 0
    var n = initial
    while n > 0 {
      total += UInt64(n)
      produced += UInt64(n)
      guard total <= entry.size else {
        throw XARError.dataLongerThanDeclared(path: entry.path, declared: entry.size)
      }
      if produced > maxSize { throw BudgetExceeded() }
      let produced = self.produced
      try buffer.withUnsafeBytes { raw in
        let chunk = UnsafeRawBufferPointer(rebasing: raw[..<n])
        each(chunk, produced)
        try write(chunk)
      }
      n = try next(data)
    }
    guard total == entry.size else {
      throw XARError.dataSizeMismatch(path: entry.path, declared: entry.size, actual: total)
    }
  }
}
