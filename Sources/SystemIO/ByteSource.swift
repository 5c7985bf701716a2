/// Bytes that come once, in order: an open file, an entry's decoded data, a buffer. The one
/// reading interface of every layer: the XAR reader's data streams, the sources' entry data
/// (re-exported by the library as `HostedContent.EntryData`), the XAR writer's input.
public protocol ByteSource: AnyObject {
  /// Fills up to `buffer.count` bytes; returns how many, 0 at the end.
  func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int
}

extension FileDescriptor: ByteSource {}

/// Bytes in memory, as a ``ByteSource``.
package final class MemoryBytes: ByteSource {
  private let bytes: [UInt8]
  private var position = 0

  package init(_ bytes: [UInt8]) { self.bytes = bytes }

  package func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
    let n = min(buffer.count, bytes.count - position)
    guard n > 0 else { return 0 }
    bytes.withUnsafeBytes {
      buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: $0[position..<(position + n)]))
    }
    position += n
    return n
  }
}
