import Crypto
import Foundation
import HostedContent
import SystemIO
import TextCoding

/// What the server serves, read and checked once at startup: the catalog's exact bytes, and for
/// every version it lists, the package file, open, whose size and SHA-256 are the catalog's.
/// Files in the folder that the catalog does not list are never served.
package struct ContentStore: Sendable {
  /// The catalog file's bytes, served unchanged.
  package let catalogBytes: [UInt8]
  /// The catalog's ETag: its SHA-256, quoted.
  package let catalogETag: String
  /// The catalog as signed.
  package let catalog: Catalog
  /// The packages by the name they are served under (`/packages/NAME`).
  package let packages: [String: Package]

  /// One package file, open for the server's lifetime: the bytes served are the bytes hashed at
  /// startup even if the file is replaced on disk.
  package struct Package: Sendable {
    /// The name under `/packages/`.
    package let name: String
    /// The product and the version the catalog lists it as.
    package let productIdentifier: String
    /// The version's `ContentVersion`.
    package let contentVersion: String
    /// Its size in bytes.
    package let size: Int64
    /// Its SHA-256, lower-case hex.
    package let sha256: String
    /// The open file.
    let file: FileDescriptor
  }

  /// Reads the catalog at `catalogPath` and opens and checks every package it lists in
  /// `directory`. Errors name the file and say what to do.
  package init(catalogPath: String, directory: String) throws {
    let catalogFile: FileDescriptor
    do {
      catalogFile = try FileDescriptor.open(regularFile: catalogPath)
      let size = try catalogFile.size()
      guard size <= 64 << 20 else { throw OperationError("the catalog '\(catalogPath)' is larger than 64 MiB") }
      catalogBytes = try catalogFile.read(count: Int(size), at: 0)
    } catch let error as OperationError {
      throw error
    } catch {
      throw OperationError(
        "cannot read the catalog '\(catalogPath)': \(error)",
        hint: "make it with: pkgtool publish X.pkg --key ... -o catalog.json")
    }
    struct Published: Decodable { var signed: Catalog }
    do {
      catalog = try JSONDecoder().decode(Published.self, from: Data(catalogBytes)).signed
    } catch {
      throw OperationError(
        "'\(catalogPath)' is not a catalog pkgtool publish writes (no 'signed' object with products and versions)",
        hint: "make it with: pkgtool publish X.pkg --key ... -o catalog.json")
    }
    guard catalog.formatVersion == Catalog.currentFormatVersion else {
      throw OperationError(
        "the catalog '\(catalogPath)' has format \(catalog.formatVersion); this pkgtool serves format \(Catalog.currentFormatVersion)"
      )
    }
    catalogETag = "\"" + hexString(SHA256.hash(data: catalogBytes)) + "\""

    var packages: [String: Package] = [:]
    for product in catalog.products {
      for version in product.versions {
        let name = try Self.fileName(of: version.url, catalogPath: catalogPath)
        let path = directory + "/" + name
        let what = "\(product.productIdentifier) \(version.contentVersion)"
        if let other = packages[name] {
          guard other.sha256 == version.sha256 else {
            throw OperationError(
              "the catalog '\(catalogPath)' names '\(name)' for both \(other.productIdentifier) \(other.contentVersion) and \(what)"
            )
          }
          continue
        }
        let file: FileDescriptor
        let size: UInt64
        do {
          file = try FileDescriptor.open(regularFile: path, followSymlink: true)
          size = try file.size()
        } catch {
          throw OperationError(
            "the catalog lists \(what) as '\(name)', but '\(path)' cannot be read: \(error)",
            hint: "copy the published packages into \(directory), or pass the folder that holds them with --packages")
        }
        guard size == UInt64(clamping: version.size) else {
          throw OperationError(
            "'\(path)' is \(size) bytes; the catalog lists \(what) as \(version.size) bytes",
            hint: "serve the catalog that was published with these packages")
        }
        let sha = try PackageDigest.sha256(of: file)
        guard sha == version.sha256 else {
          throw OperationError(
            "'\(path)' has SHA-256 \(sha); the catalog lists \(what) as \(version.sha256)",
            hint: "serve the catalog that was published with these packages")
        }
        packages[name] = Package(
          name: name, productIdentifier: product.productIdentifier, contentVersion: version.contentVersion,
          size: version.size, sha256: sha, file: file)
      }
    }
    self.packages = packages
  }

  /// The version the catalog lists for `product`: `contentVersion`, or the newest.
  package func version(of product: String, contentVersion: String?) -> Package? {
    guard let entry = catalog.products.first(where: { $0.productIdentifier == product }) else { return nil }
    let version: Catalog.Version?
    if let contentVersion {
      version = entry.versions.first { $0.contentVersion == contentVersion }
    } else {
      version = entry.versions.max { a, b in
        guard let va = ContentVersion(a.contentVersion), let vb = ContentVersion(b.contentVersion) else { return false }
        return va < vb
      }
    }
    guard let version else { return nil }
    return packages.values.first { $0.sha256 == version.sha256 && $0.productIdentifier == product }
  }

  /// The path a package is served under: `/packages/` and its name, percent-encoded except for
  /// letters, digits and `-._~`. This is the path a URL signature covers.
  package static func servedPath(of name: String) -> String {
    var out = "/packages/"
    for byte in name.utf8 {
      switch byte {
      case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
        UInt8(ascii: "0")...UInt8(ascii: "9"),
        UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
        out.unicodeScalars.append(Unicode.Scalar(byte))
      default:
        out += String(format: "%%%02X", byte)
      }
    }
    return out
  }

  /// The last path component of a catalog URL, percent-decoded, if it is a plain file name.
  static func fileName(of url: String, catalogPath: String) throws -> String {
    let withoutQuery = url.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)[0]
    let last = withoutQuery.split(separator: "/", omittingEmptySubsequences: false).last.map(String.init) ?? ""
    guard let name = last.removingPercentEncoding, !name.isEmpty, name != ".", name != "..",
      !name.contains("/"), !name.contains("\\"),
      !name.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F })
    else {
      throw OperationError(
        "the catalog '\(catalogPath)' lists the URL '\(url)', whose last component is not a plain file name",
        hint: "publish with --base-url so that each package's URL ends in its file name")
    }
    return name
  }
}
