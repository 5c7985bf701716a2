import Crypto
import Foundation
import HostedContent
import SystemIO
import TextCoding

/// Who must have signed the catalog `serve` serves: the publisher's public key, or the chain of
/// roots an app ships (files or folders, read again on every reload so that a root rotation is
/// picked up).
package enum CatalogAuthority: Sendable {
  /// One key, whose signature is enough.
  case key(CatalogPublicKey)
  /// The root files and folders, oldest first: the newest root's catalog role decides.
  case roots([String])

  /// The keys and threshold a catalog must meet at `now`. A root that does not verify (or has
  /// expired) throws ``CatalogError``.
  package func trust(now: Date) throws -> CatalogTrust {
    switch self {
    case .key(let key): return CatalogTrust(key: key)
    case .roots(let paths):
      let chain = try RootFile.verifyChain(paths, now: now)
      return chain[chain.count - 1].catalogTrust
    }
  }
}

/// What the server serves, read and checked as every client would check it: the catalog's exact
/// bytes, verified (signatures, threshold, expiry), and for every version it lists, the package
/// file, open, whose size and SHA-256 are the catalog's. Files in the folder that the catalog does
/// not list are never served.
///
/// A store never changes: a reload builds a new one (``LiveContent`` swaps it in), and a download
/// in flight keeps the store it started from, and so the file it opened.
package struct ContentStore: Sendable {
  /// The catalog file's bytes, served unchanged.
  package let catalogBytes: [UInt8]
  /// The catalog's ETag: its SHA-256, quoted.
  package let catalogETag: String
  /// The catalog as signed and verified.
  package let catalog: Catalog
  /// When the catalog expires (nil for a catalog written before pkgtool wrote an expiry).
  package let expiry: Date?
  /// The packages by the name they are served under (`/packages/NAME`).
  package let packages: [String: Package]
  /// The Background Assets packs served under `/packs/ID`, when `--asset-packs` was given.
  package let assetPacks: AssetPacks?

  /// One package the catalog lists, its file open while a store (or a download) holds it.
  package struct Package: Sendable {
    /// The name under `/packages/`.
    package let name: String
    /// The product and the version the catalog lists it as.
    package let productIdentifier: String
    /// The version's `ContentVersion`.
    package let contentVersion: String
    /// The open file, hashed.
    package let file: ServedFile
    /// Its size in bytes.
    package var size: Int64 { file.size }
    /// Its SHA-256, lower-case hex.
    package var sha256: String { file.sha256 }
  }

  /// Reads the catalog at `catalogPath`, verifies it with `authority` at `now` as a client would,
  /// and opens and checks every package it lists in `directory`, and the asset packs of
  /// `assetPacks` (``AssetPacks``). A package of `previous` whose
  /// path still names the same unchanged file is taken over without hashing it again.
  ///
  /// Throws ``CatalogError`` when a client would refuse the catalog, and `OperationError` (naming
  /// the file and what to do) when a file cannot be read or does not match the catalog.
  package init(
    catalogPath: String, directory: String, authority: CatalogAuthority, assetPacks: AssetPackConfiguration? = nil,
    now: Date = Date(), reusing previous: ContentStore? = nil
  ) throws {
    do {
      let catalogFile = try FileDescriptor.open(regularFile: catalogPath)
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
    let trust = try authority.trust(now: now)
    catalog = try CatalogFile.verify(catalogBytes, trust: trust)
    try catalog.checkNotExpired(now: now)
    expiry = try catalog.expiryDate()
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
        let file: ServedFile
        if let old = previous?.packages[name]?.file.reusable(at: path), old.sha256 == version.sha256 {
          file = old
        } else {
          do { file = try ServedFile.open(path) } catch let error as OperationError { throw error } catch {
            throw OperationError(
              "the catalog lists \(what) as '\(name)', but '\(path)' cannot be read: \(error)",
              hint: "copy the published packages into \(directory), or pass the folder that holds them with --packages")
          }
        }
        guard file.size == version.size else {
          throw OperationError(
            "'\(path)' is \(file.size) bytes; the catalog lists \(what) as \(version.size) bytes",
            hint: "serve the catalog that was published with these packages")
        }
        guard file.sha256 == version.sha256 else {
          throw OperationError(
            "'\(path)' has SHA-256 \(file.sha256); the catalog lists \(what) as \(version.sha256)",
            hint: "serve the catalog that was published with these packages")
        }
        packages[name] = Package(
          name: name, productIdentifier: product.productIdentifier, contentVersion: version.contentVersion, file: file)
      }
    }
    self.packages = packages
    self.assetPacks = try assetPacks.map { try AssetPacks($0, reusing: previous?.assetPacks) }
  }

  /// The paths whose change makes a reload worth trying: the catalog, the packages folder (a
  /// file added or renamed in), and every package the catalog lists; with their
  /// `Paths.changeStamp` (nil for a path that is missing).
  package func watchedStamps(catalogPath: String, directory: String) -> [String: [Int64]?] {
    var stamps: [String: [Int64]?] = [catalogPath: Paths.changeStamp(of: catalogPath)]
    stamps[directory] = Paths.changeStamp(of: directory)
    for package in packages.values { stamps[package.file.path] = Paths.changeStamp(of: package.file.path) }
    return stamps
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
