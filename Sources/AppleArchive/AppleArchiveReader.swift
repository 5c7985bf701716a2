import SystemIO

/// Reads an Apple Archive one entry at a time: ``next()`` gives the next entry's header, and
/// ``readData(into:)`` its data, in chunks, until ``next()`` is called again (unread data is
/// skipped then). Holds one decoded block and a 64 KiB buffer, whatever the archive's size.
///
/// Hashes the header declares (`CKS`, `SH1`, `SH2`, `SH3`, `SH5`) are checked as the data is
/// read; a mismatch throws when the last byte is read, instead of that byte's chunk. Data the
/// caller never starts reading is skipped without hashing. After any error, every call throws it
/// again.
package final class AppleArchiveReader {
  /// How the archive is stored.
  package let compression: AppleArchiveCompression
  /// The framing's block size; nil for a raw archive.
  package let blockSize: UInt64?
  /// The limits the archive is read under.
  package let limits: AppleArchiveLimits

  private let payload: Payload
  private var current: AppleArchiveEntry?
  /// The blobs of the current entry not yet passed: index of the next one, bytes left of it.
  private var blobIndex = 0
  private var blobLeft: UInt64 = 0
  private var hasher: DataHasher?
  private var entryCount = 0
  private var failure: AppleArchiveError?

  /// Reads the archive in `file` from its start (with positioned reads: the descriptor's own
  /// position is neither used nor moved).
  package convenience init(file: FileDescriptor, limits: AppleArchiveLimits = AppleArchiveLimits()) throws {
    var offset: UInt64 = 0
    try self.init(limits: limits) { buffer in
      let n = try file.read(into: buffer, at: offset)
      offset += UInt64(n)
      return n
    }
  }

  /// Reads an archive held in memory.
  package convenience init(bytes: [UInt8], limits: AppleArchiveLimits = AppleArchiveLimits()) throws {
    var offset = 0
    try self.init(limits: limits) { buffer in
      let n = min(buffer.count, bytes.count - offset)
      bytes.withUnsafeBytes { buffer.baseAddress!.copyMemory(from: $0.baseAddress! + offset, byteCount: n) }
      offset += n
      return n
    }
  }

  /// Reads the archive that `read` yields: it fills the buffer it is given from the start and
  /// returns how many bytes it put there, 0 at the end.
  ///
  /// Reads the first bytes to tell a raw archive from a `pbz*` one; throws when they are neither,
  /// and for AEA, LZ4, LZBITMAP and framings that break the limits.
  package init(
    limits: AppleArchiveLimits = AppleArchiveLimits(), read: @escaping (UnsafeMutableRawBufferPointer) throws -> Int
  ) throws {
    self.limits = limits
    let input = SourceInput(read)
    let magic = try input.peek(4)
    func starts(_ text: String) -> Bool { magic.starts(with: Array(text.utf8)) }
    if magic.isEmpty { throw AppleArchiveError(.empty) }
    if magic == Array("AA01".utf8) || magic == Array("YAA1".utf8) {
      compression = .none
      blockSize = nil
      payload = Payload(input: input, compression: .none, blockSize: 0, limits: limits)
      return
    }
    if magic == Array("AEA1".utf8) { throw AppleArchiveError(.encrypted) }
    // A file cut inside its first 4 bytes: say so, rather than "not an archive".
    if magic.count < 4 {
      if Array("AA01".utf8).starts(with: magic) || Array("YAA1".utf8).starts(with: magic) {
        throw AppleArchiveError(.truncatedHeader(needed: 6, available: magic.count), entry: 1)
      }
      if Array("pbz".utf8).starts(with: magic) { throw AppleArchiveError(.truncatedFraming(available: magic.count)) }
    }
    guard starts("pbz"), magic.count == 4 else { throw AppleArchiveError(.notAppleArchive(found: magic)) }
    switch magic[3] {
    case UInt8(ascii: "e"): compression = .lzfse
    case UInt8(ascii: "z"): compression = .zlib
    case UInt8(ascii: "x"): compression = .lzma
    default: throw AppleArchiveError(.unsupportedCompression(letter: magic[3]))
    }
    let framing = try input.read(upTo: 12)
    guard framing.count == 12 else { throw AppleArchiveError(.truncatedFraming(available: framing.count)) }
    let size = framing[4..<12].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
    guard size > 0 else { throw AppleArchiveError(.zeroBlockSize) }
    // A block is held whole in memory: past 1 GiB the limit is 1 GiB, whatever it is set to.
    let maxBlockSize = min(limits.maxBlockSize, 1 << 30)
    guard size <= maxBlockSize else { throw AppleArchiveError(.blockSizeTooLarge(size: size, limit: maxBlockSize)) }
    blockSize = size
    payload = Payload(input: input, compression: compression, blockSize: size, limits: limits)
  }

  /// The next entry, or nil at the end of the archive. Passes over what is left of the entry
  /// before (its data, read or not, and its other blobs).
  package func next() throws -> AppleArchiveEntry? {
    if let failure { throw failure }
    do {
      try finishEntry()
      current = nil
      return try readHeader()
    } catch let error as AppleArchiveError {
      var error = error
      if error.entry == nil, let current {
        error.entry = current.number
        error.path = current.path
      }
      failure = error
      throw error
    }
  }

  /// Copies up to `buffer.count` bytes of the current entry's data (its `DAT` blob); returns 0
  /// at its end, and when the entry has none.
  package func readData(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
    if let failure { throw failure }
    guard let entry = current else { return 0 }
    guard let dataIndex = entry.blobs.firstIndex(where: { $0.key == "DAT" }) else {
      // No data: a hash the header declares is a hash of nothing, and must be that.
      if !entry.hashes.isEmpty, let mismatch = DataHasher(entry.hashes).mismatch() {
        let error = AppleArchiveError(
          .hashMismatch(key: mismatch.key, declared: mismatch.declared, actual: mismatch.actual), entry: entry.number,
          path: entry.path)
        failure = error
        throw error
      }
      return 0
    }
    do {
      while blobIndex < dataIndex { try passBlob() }
      guard blobIndex == dataIndex else { return 0 }
      if hasher == nil { hasher = DataHasher(entry.hashes) }
      if blobLeft == 0 {
        try endData()
        return 0
      }
      let want = Int(min(UInt64(buffer.count), blobLeft))
      let n = try payload.read(into: UnsafeMutableRawBufferPointer(rebasing: buffer[..<want]))
      guard n > 0 else {
        let size = entry.blobs[dataIndex].size
        throw AppleArchiveError(.truncatedBlob(key: "DAT", declared: size, available: size - blobLeft))
      }
      hasher!.update(UnsafeRawBufferPointer(rebasing: buffer[..<n]))
      blobLeft -= UInt64(n)
      if blobLeft == 0 { try endData() }
      return n
    } catch let error as AppleArchiveError {
      var error = error
      if error.entry == nil {
        error.entry = entry.number
        error.path = entry.path
      }
      failure = error
      throw error
    }
  }

  /// Reads the whole of the current entry's data (for small data: a plist, a test).
  package func readAllData() throws -> [UInt8] {
    var out: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 64 << 10)
    while true {
      let n = try chunk.withUnsafeMutableBytes { try readData(into: $0) }
      if n == 0 { return out }
      out += chunk[..<n]
    }
  }

  // MARK: Inside

  private func readHeader() throws -> AppleArchiveEntry? {
    let offset = payload.produced
    let start = try payload.read(upTo: 6)
    if start.isEmpty { return nil }
    let number = entryCount + 1
    func fail(_ reason: AppleArchiveError.Reason) -> AppleArchiveError {
      AppleArchiveError(reason, entry: number)
    }
    guard number <= limits.maxEntries else { throw fail(.tooManyEntries(limit: limits.maxEntries)) }
    let magic = Array(start.prefix(4))
    guard magic == Array("AA01".utf8) || magic == Array("YAA1".utf8) || start.count < 4 else {
      throw fail(.badMagic(found: magic))
    }
    guard start.count == 6 else { throw fail(.truncatedHeader(needed: 6, available: start.count)) }
    let size = Int(start[4]) | Int(start[5]) << 8
    guard size >= 6 else { throw fail(.headerSizeTooSmall(size: size)) }
    guard size <= limits.maxHeaderSize else { throw fail(.headerTooLarge(size: size, limit: limits.maxHeaderSize)) }
    let rest = try payload.read(upTo: size - 6)
    guard rest.count == size - 6 else { throw fail(.truncatedHeader(needed: size, available: 6 + rest.count)) }
    let entry = try EntryHeader.parse(start + rest, number: number, payloadOffset: offset, limits: limits)
    entryCount = number
    current = entry
    blobIndex = 0
    blobLeft = entry.blobs.first?.size ?? 0
    hasher = nil
    return entry
  }

  /// Passes over the rest of the current entry: its blobs, checking the data's hashes when the
  /// caller had begun to read it.
  private func finishEntry() throws {
    guard let entry = current else { return }
    while blobIndex < entry.blobs.count {
      if entry.blobs[blobIndex].key == "DAT", hasher != nil {
        let size = entry.blobs[blobIndex].size
        let got = try payload.skip(blobLeft) { self.hasher!.update($0) }
        guard got == blobLeft else {
          throw AppleArchiveError(.truncatedBlob(key: "DAT", declared: size, available: size - blobLeft + got))
        }
        blobLeft = 0
        try endData()
      } else {
        try passBlob()
      }
    }
  }

  /// Passes over what is left of the blob at `blobIndex` and moves to the next.
  private func passBlob() throws {
    guard let entry = current, blobIndex < entry.blobs.count else { return }
    let blob = entry.blobs[blobIndex]
    let got = try payload.skip(blobLeft)
    guard got == blobLeft else {
      throw AppleArchiveError(.truncatedBlob(key: blob.key, declared: blob.size, available: blob.size - blobLeft + got))
    }
    advanceBlob()
  }

  private func advanceBlob() {
    blobIndex += 1
    if let entry = current, blobIndex < entry.blobs.count {
      blobLeft = entry.blobs[blobIndex].size
    } else {
      blobLeft = 0
    }
  }

  /// The data has been read to its end: check its hashes, move past it.
  private func endData() throws {
    if let mismatch = hasher?.mismatch() {
      throw AppleArchiveError(.hashMismatch(key: mismatch.key, declared: mismatch.declared, actual: mismatch.actual))
    }
    advanceBlob()
  }
}
