import Foundation
import XAR
import Zlib

/// Builds XAR bytes by hand, so tests can make every kind of broken archive on purpose.
///
/// By default the result is valid: a SHA-1 TOC checksum at heap offset 0 that matches. Each knob
/// breaks one thing.
package struct CraftedXAR {
  /// The TOC XML; `{TOCCHECKSUM}` is replaced by the standard `<checksum>` element.
  package var toc: String
  /// The heap after the TOC checksum.
  package var heap: [UInt8] = []
  package var magic: [UInt8] = Array("xar!".utf8)
  package var version: UInt16 = 1
  package var headerSize: UInt16 = 28
  package var checksumCode: UInt32 = 1
  /// Replaces the compressed TOC length in the header.
  package var declaredTOCLength: UInt64? = nil
  /// Replaces the uncompressed TOC length in the header.
  package var declaredTOCUncompressed: UInt64? = nil
  /// Bytes appended to the compressed TOC (inside the declared length).
  package var tocTrailer: [UInt8] = []
  /// Flips the stored TOC checksum.
  package var corruptTOCChecksum = false
  /// zlib level for the TOC (0 stores the XML verbatim, so its bytes land at known offsets).
  package var tocLevel: Int32 = 6
  /// The TOC checksum algorithm (the `<checksum>` in `toc` must name the same one).
  package var tocChecksum: XARChecksumAlgorithm = .sha1

  package init(toc: String, heap: [UInt8] = []) {
    self.toc = toc
    self.heap = heap
  }

  /// A TOC document around `files`.
  package static func document(_ files: String) -> String {
    """
    <?xml version="1.0" encoding="UTF-8"?>
    <xar>
     <toc>
      <checksum style="sha1"><offset>0</offset><size>20</size></checksum>
      \(files)
     </toc>
    </xar>
    """
  }

  /// A `<data>` element for `bytes` stored at heap offset `offset` (20 + position in `heap`),
  /// with correct checksums unless overridden.
  package static func dataElement(
    stored: [UInt8], plain: [UInt8], offset: Int, encoding: String = "application/octet-stream",
    size: Int? = nil, length: Int? = nil, extracted: String? = nil, archived: String? = nil
  ) -> String {
    var a = XARHasher(.sha1)
    a.update(stored)
    var e = XARHasher(.sha1)
    e.update(plain)
    return """
      <data><length>\(length ?? stored.count)</length><offset>\(offset)</offset><size>\(size ?? plain.count)</size>\
      <encoding style="\(encoding)"/>\
      <archived-checksum style="sha1">\(archived ?? a.finalize().hex)</archived-checksum>\
      <extracted-checksum style="sha1">\(extracted ?? e.finalize().hex)</extracted-checksum></data>
      """
  }

  package func bytes() -> [UInt8] {
    let xml = Array(toc.utf8)
    let compressed = ZlibDeflater.compress(xml, level: tocLevel) + tocTrailer
    var hasher = XARHasher(tocChecksum)
    hasher.update(compressed)
    var checksum = hasher.finalize().digest
    if corruptTOCChecksum { checksum[0] ^= 0xFF }
    var out = magic
    out += be(headerSize) + be(version)
    out += be(declaredTOCLength ?? UInt64(compressed.count))
    out += be(declaredTOCUncompressed ?? UInt64(xml.count))
    out += be(checksumCode)
    while out.count < Int(headerSize) { out.append(0) }
    return out + compressed + checksum + heap
  }

  package func write(to path: String) throws {
    try Data(bytes()).write(to: URL(fileURLWithPath: path))
  }

  private func be<T: FixedWidthInteger>(_ v: T) -> [UInt8] {
    withUnsafeBytes(of: v.bigEndian) { Array($0) }
  }
}
