import SystemIO

/// Something that yields bytes once, in order: a file, a buffer, a pipe.
package protocol XARByteSource {
  /// Fills up to `buffer.count` bytes; returns how many, 0 at the end.
  mutating func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int
}

extension FileDescriptor: XARByteSource {}

/// Bytes in memory, as a ``XARByteSource``.
package struct XARBytes: XARByteSource {
  private let bytes: [UInt8]
  private var position = 0

  package init(_ bytes: [UInt8]) { self.bytes = bytes }

  package mutating func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
    let n = min(buffer.count, bytes.count - position)
    guard n > 0 else { return 0 }
    bytes.withUnsafeBytes {
      buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: $0[position..<(position + n)]))
    }
    position += n
    return n
  }
}
