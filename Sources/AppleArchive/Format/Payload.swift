/// The archive's bytes as they come from the source, through one 64 KiB buffer.
final class SourceInput {
  private let readSource: (UnsafeMutableRawBufferPointer) throws -> Int
  private var buffer = [UInt8](repeating: 0, count: 64 << 10)
  private var start = 0
  private var end = 0
  private var atEnd = false

  init(_ read: @escaping (UnsafeMutableRawBufferPointer) throws -> Int) {
    readSource = read
  }

  /// Fills the buffer until it holds `count` bytes (at most its size) or the source ends.
  private func fill(_ count: Int) throws {
    if end - start >= count || atEnd { return }
    if start > 0 {
      buffer.withUnsafeMutableBytes { raw in
        raw.baseAddress!.copyMemory(from: raw.baseAddress! + start, byteCount: end - start)
      }
      end -= start
      start = 0
    }
    while end < count && end < buffer.count {
      let n = try buffer.withUnsafeMutableBytes { try readSource(UnsafeMutableRawBufferPointer(rebasing: $0[end...])) }
      if n == 0 {
        atEnd = true
        return
      }
      end += n
    }
  }

  /// The next `count` bytes (at most 16), without taking them; fewer only at the end.
  func peek(_ count: Int) throws -> [UInt8] {
    try fill(count)
    return Array(buffer[start..<min(end, start + count)])
  }

  /// Copies up to `out.count` bytes; 0 only at the end of the source.
  func read(into out: UnsafeMutableRawBufferPointer) throws -> Int {
    guard out.count > 0 else { return 0 }
    if start == end {
      // Large reads skip the buffer.
      if out.count >= buffer.count && !atEnd {
        let n = try readSource(out)
        if n == 0 { atEnd = true }
        return n
      }
      try fill(1)
      if start == end { return 0 }
    }
    let n = min(out.count, end - start)
    buffer.withUnsafeBytes { raw in out.baseAddress!.copyMemory(from: raw.baseAddress! + start, byteCount: n) }
    start += n
    return n
  }

  /// Reads up to `count` bytes; fewer only at the end of the source. The array grows with what
  /// arrives, so a block that declares 64 MiB in a short file costs what the file holds.
  func read(upTo count: Int) throws -> [UInt8] {
    var out: [UInt8] = []
    out.reserveCapacity(min(count, 1 << 20))
    var chunk = [UInt8](repeating: 0, count: min(count, 64 << 10))
    while out.count < count {
      let want = min(chunk.count, count - out.count)
      let n = try chunk.withUnsafeMutableBytes { try read(into: UnsafeMutableRawBufferPointer(rebasing: $0[..<want])) }
      if n == 0 { break }
      out += chunk[..<n]
    }
    return out
  }
}

/// The decoded payload: entry headers and blobs, one after another. For a raw archive, the
/// source's bytes; for a `pbz*` one, its blocks decoded one at a time.
final class Payload {
  let compression: AppleArchiveCompression
  let blockSize: UInt64
  private let input: SourceInput
  private let limits: AppleArchiveLimits
  private var block: [UInt8] = []
  private var blockPosition = 0
  private var blockNumber = 0
  private var previousRawSize: UInt64? = nil
  private var ended = false
  /// The bytes handed out so far: where the next one is in the payload.
  private(set) var produced: UInt64 = 0

  init(input: SourceInput, compression: AppleArchiveCompression, blockSize: UInt64, limits: AppleArchiveLimits) {
    self.input = input
    self.compression = compression
    self.blockSize = blockSize
    self.limits = limits
  }

  /// Copies up to `out.count` bytes; 0 only at the end of the payload.
  func read(into out: UnsafeMutableRawBufferPointer) throws -> Int {
    guard out.count > 0 else { return 0 }
    if compression == .none {
      let n = try input.read(into: out)
      try count(n)
      return n
    }
    if blockPosition == block.count {
      guard try loadBlock() else { return 0 }
    }
    let n = min(out.count, block.count - blockPosition)
    block.withUnsafeBytes { raw in out.baseAddress!.copyMemory(from: raw.baseAddress! + blockPosition, byteCount: n) }
    blockPosition += n
    produced += UInt64(n)
    return n
  }

  /// Reads up to `count` bytes; fewer only at the end of the payload.
  func read(upTo count: Int) throws -> [UInt8] {
    var out = [UInt8](repeating: 0, count: count)
    var filled = 0
    try out.withUnsafeMutableBytes { raw in
      while filled < count {
        let n = try read(into: UnsafeMutableRawBufferPointer(rebasing: raw[filled...]))
        if n == 0 { break }
        filled += n
      }
    }
    if filled < count { out.removeSubrange(filled...) }
    return out
  }

  /// Passes over `count` bytes, showing them to `observe`; returns how many there were (fewer
  /// only at the end of the payload).
  func skip(_ count: UInt64, observe: ((UnsafeRawBufferPointer) -> Void)? = nil) throws -> UInt64 {
    var scratch = [UInt8](repeating: 0, count: Int(min(count, 64 << 10)))
    var left = count
    while left > 0 {
      let n = try scratch.withUnsafeMutableBytes { raw in
        try read(into: UnsafeMutableRawBufferPointer(rebasing: raw[..<Int(min(left, UInt64(raw.count)))]))
      }
      if n == 0 { break }
      if let observe { scratch.withUnsafeBytes { observe(UnsafeRawBufferPointer(rebasing: $0[..<n])) } }
      left -= UInt64(n)
    }
    return count - left
  }

  private func count(_ n: Int) throws {
    produced += UInt64(n)
    if produced > limits.maxDecodedTotal {
      throw AppleArchiveError(.budgetExceeded(limit: limits.maxDecodedTotal))
    }
  }

  /// Decodes the next block; false at the end of the blocks.
  private func loadBlock() throws -> Bool {
    block = []
    blockPosition = 0
    if ended { return false }
    let header = try input.read(upTo: 16)
    if header.isEmpty {
      ended = true
      return false
    }
    guard header.count == 16 else {
      throw AppleArchiveError(.trailingBytes(count: header.count, afterBlock: blockNumber))
    }
    func bigEndian(_ at: Int) -> UInt64 { header[at..<at + 8].reduce(0) { $0 << 8 | UInt64($1) } }
    let rawSize = bigEndian(0)
    let compressedSize = bigEndian(8)
    if let previousRawSize, previousRawSize < blockSize {
      throw AppleArchiveError(.shortBlockNotLast(block: blockNumber, rawSize: previousRawSize, blockSize: blockSize))
    }
    blockNumber += 1
    let number = blockNumber
    guard rawSize > 0, compressedSize > 0 else {
      throw AppleArchiveError(.emptyBlock(block: number, rawSize: rawSize, compressedSize: compressedSize))
    }
    guard rawSize <= blockSize else {
      throw AppleArchiveError(.rawLargerThanBlockSize(block: number, rawSize: rawSize, blockSize: blockSize))
    }
    guard compressedSize <= rawSize else {
      throw AppleArchiveError(
        .compressedLargerThanRaw(block: number, rawSize: rawSize, compressedSize: compressedSize))
    }
    if rawSize / compressedSize > limits.maxRatio
      || (rawSize / compressedSize == limits.maxRatio && rawSize % compressedSize != 0)
    {
      throw AppleArchiveError(
        .ratioTooHigh(block: number, rawSize: rawSize, compressedSize: compressedSize, limit: limits.maxRatio))
    }
    guard rawSize <= limits.maxDecodedTotal - min(produced, limits.maxDecodedTotal) else {
      throw AppleArchiveError(.budgetExceeded(limit: limits.maxDecodedTotal))
    }
    let data = try input.read(upTo: Int(compressedSize))
    guard data.count == Int(compressedSize) else {
      throw AppleArchiveError(
        .truncatedBlock(block: number, declared: compressedSize, available: UInt64(data.count)))
    }
    previousRawSize = rawSize
    block =
      compressedSize == rawSize
      ? data : try BlockCodec.decode(data, rawSize: Int(rawSize), compression: compression, block: number)
    return true
  }
}
