import SystemIO
import XAR

/// The digest that names a package file: SHA-256 of its bytes, in hex (what `build` prints,
/// what catalogs and install records hold).
package enum PackageDigest {
  /// SHA-256 of the whole file, hex.
  package static func sha256(of file: FileDescriptor) throws -> String {
    var hasher = XARHasher(.sha256)
    try file.observe(offset: 0, length: try file.size()) { hasher.update($0) }
    return hasher.finalize().hex
  }
}
