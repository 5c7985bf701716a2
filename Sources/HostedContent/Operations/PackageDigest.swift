import Crypto
import SystemIO
import TextCoding

/// The digest that names a package file: SHA-256 of its bytes, in hex (what `build` prints,
/// what catalogs and install records hold).
package enum PackageDigest {
  /// SHA-256 of the whole file, hex.
  package static func sha256(of file: FileDescriptor) throws -> String {
    var hasher = SHA256()
    try file.observe(offset: 0, length: try file.size()) { hasher.update(bufferPointer: $0) }
    return hexString(hasher.finalize())
  }
}
