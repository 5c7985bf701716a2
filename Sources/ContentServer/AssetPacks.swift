import Crypto
import Foundation
import HostedContent
import SystemIO
import TextCoding

/// One file the server streams, open while a store (or a download) holds it: the bytes served
/// are the bytes hashed when it was opened, even if the file is renamed over or removed on disk.
/// A file written in place is caught by ``isUnchanged()``.
package struct ServedFile: Sendable {
  /// The open file.
  let file: FileDescriptor
  /// The path it was opened at.
  package let path: String
  /// What `Paths.changeStamp` gave for it when it was hashed: device, inode, size, modification
  /// and change times, link count.
  let stamp: [Int64]
  /// Its size in bytes.
  package let size: Int64
  /// Its SHA-256, lower-case hex: the ETag.
  package let sha256: String

  /// Opens and hashes the regular file at `path` (links followed). Throws `SystemError` when it
  /// cannot be read, and `OperationError` when it changed while it was hashed.
  static func open(_ path: String) throws -> ServedFile {
    let file = try FileDescriptor.open(regularFile: path, followSymlink: true)
    let stamp = try Paths.changeStamp(of: file)
    let sha = try PackageDigest.sha256(of: file)
    // Written to while it was hashed: the digest may mix old and new bytes.
    guard (try? Paths.changeStamp(of: file)) == stamp else {
      throw OperationError(
        "'\(path)' changed while it was being checked", hint: "copy files in under another name, then rename")
    }
    return ServedFile(file: file, path: path, stamp: stamp, size: stamp[2], sha256: sha)
  }

  /// The same open file when `path` still names it and nothing wrote to it; nil otherwise.
  func reusable(at path: String) -> ServedFile? {
    guard self.path == path, Paths.changeStamp(of: path) == stamp, isUnchanged() else { return nil }
    return self
  }

  /// False when the open file's size, modification or change time moved since it was hashed:
  /// something wrote to it in place, and its bytes are no longer the ones its ETag names. The
  /// change time alone is excused only for a rename over the file or its removal, which leave
  /// the open file's bytes as they were (a download in flight finishes from them): its link
  /// count dropped and its path names another file now. (A change of mode or owner also moves
  /// the change time: the file is then hashed again at the next reload.)
  package func isUnchanged() -> Bool {
    guard let now = try? Paths.changeStamp(of: file), now.count == stamp.count else { return false }
    guard now[2...4] == stamp[2...4] else { return false }
    if now[5...6] == stamp[5...6] { return true }
    guard now[7] < stamp[7] else { return false }
    guard let named = Paths.identity(of: path) else { return true }
    return Int64(bitPattern: named.device) != stamp[0] || Int64(bitPattern: named.inode) != stamp[1]
  }
}

/// What `serve --asset-packs` is started with: self-hosted Background Assets packs, each gated by
/// the products whose purchase opens it.
package struct AssetPackConfiguration: Sendable {
  /// The folder of `.aar` files, each named `ID` or `ID.aar`.
  package var directory: String
  /// The download manifest (`ba-package download-manifest create`, `pkgtool download-manifest
  /// create`) served at `/download-manifest.json`, checked against the packs; optional.
  package var manifestPath: String?
  /// For each pack ID, the products any one of which opens it.
  package var products: [String: Set<String>]
  /// Pack IDs served to anyone, without a credential.
  package var open: Set<String>

  /// A configuration; see the properties.
  package init(directory: String, manifestPath: String?, products: [String: Set<String>], open: Set<String>) {
    self.directory = directory
    self.manifestPath = manifestPath
    self.products = products
    self.open = open
  }
}

/// The packs served at `/packs/ID`, read and checked as a whole (a reload builds a new one).
package struct AssetPacks: Sendable {
  /// One pack.
  package struct Pack: Sendable {
    /// Its asset-pack ID: the path under `/packs/`.
    package let id: String
    /// The products any one of which opens it; empty for an open pack.
    package let products: Set<String>
    /// The open file.
    package let file: ServedFile
  }

  /// The packs by ID.
  package let packs: [String: Pack]
  /// The download manifest's bytes, served unchanged, and its ETag; nil without one.
  package let manifestBytes: [UInt8]?
  package let manifestETag: String?

  /// Reads the folder, maps each pack to its products, and checks the download manifest against
  /// the packs. A pack of `previous` whose file did not change is taken over without hashing it
  /// again. Errors (`OperationError`) name the file and what to do.
  package init(_ configuration: AssetPackConfiguration, reusing previous: AssetPacks? = nil) throws {
    let directory = configuration.directory
    let names: [String]
    do {
      names = try FileManager.default.contentsOfDirectory(atPath: directory).sorted()
    } catch {
      throw OperationError(
        "cannot read the asset-pack folder '\(directory)'", hint: "pass the folder of .aar files with --asset-packs")
    }
    var files: [String: String] = [:]
    for name in names where !name.hasPrefix(".") {
      let path = directory + "/" + name
      guard Paths.isRegularFile(path, followingLinks: true) else { continue }
      let id = name.hasSuffix(".aar") ? String(name.dropLast(4)) : name
      if let problem = AssetPackManifest.problem(withAssetPackID: id) {
        throw OperationError(
          "'\(path)' is not named after an asset-pack ID: \(problem)",
          hint: "name each pack ID or ID.aar, with the ID of its Manifest.json; move other files out of \(directory)")
      }
      if let other = files[id] {
        throw OperationError(
          "two files in '\(directory)' are the asset pack '\(id)': '\(Paths.name(of: other))' and '\(name)'",
          hint: "keep one of them")
      }
      files[id] = path
    }
    for id in Set(configuration.products.keys).union(configuration.open).sorted() where files[id] == nil {
      throw OperationError(
        "--pack-product or --open names the asset pack '\(id)', which is not in '\(directory)'",
        hint:
          "copy \(id).aar into \(directory), or name a pack it holds: \(files.keys.sorted().joined(separator: ", "))")
    }
    var packs: [String: Pack] = [:]
    for (id, path) in files.sorted(by: { $0.key < $1.key }) {
      let products = configuration.products[id] ?? []
      guard !products.isEmpty || configuration.open.contains(id) else {
        throw OperationError(
          "the asset pack '\(id)' ('\(path)') is mapped to no product: anyone could download it",
          hint: "give --pack-product \(id)=PRODUCT_ID (repeat for each product that opens it), or --open \(id)")
      }
      let file: ServedFile
      if let old = previous?.packs[id]?.file.reusable(at: path) {
        file = old
      } else {
        do { file = try ServedFile.open(path) } catch let error as OperationError { throw error } catch {
          throw OperationError("cannot read the asset pack '\(path)': \(error)")
        }
        // The archive itself says which pack it is: a device that asked for this ID must get it.
        let declared = try DownloadManifestEdit.assetPackID(of: file.file, path: path)
        guard declared == id else {
          throw OperationError(
            "'\(path)' is the asset pack '\(declared)' (its Manifest.json), not '\(id)' as its name says",
            hint: "name it \(declared).aar, or export it again with --asset-pack-id \(id)")
        }
      }
      packs[id] = Pack(id: id, products: configuration.open.contains(id) ? [] : products, file: file)
    }
    self.packs = packs
    if let manifestPath = configuration.manifestPath {
      let bytes = try Self.readManifest(manifestPath)
      try Self.check(manifest: bytes, path: manifestPath, against: packs)
      manifestBytes = bytes
      manifestETag = "\"" + hexString(SHA256.hash(data: bytes)) + "\""
    } else {
      manifestBytes = nil
      manifestETag = nil
    }
  }

  static func readManifest(_ path: String) throws -> [UInt8] {
    do {
      let file = try FileDescriptor.open(regularFile: path)
      let size = try file.size()
      guard size <= 16 << 20 else { throw OperationError("the download manifest '\(path)' is larger than 16 MiB") }
      return try file.read(count: Int(size), at: 0)
    } catch let error as OperationError {
      throw error
    } catch {
      throw OperationError(
        "cannot read the download manifest '\(path)': \(error)",
        hint: "make it with: pkgtool download-manifest create PACK.aar... --base-url URL -o manifest.json")
    }
  }

  /// Every pack the manifest lists is served here, with the size it says (its shape, IDs and
  /// URLs are checked as `pkgtool download-manifest` reads them): a device would otherwise fetch
  /// what the manifest does not describe.
  static func check(manifest bytes: [UInt8], path: String, against packs: [String: Pack]) throws {
    for entry in try DownloadManifest.decode(bytes, name: path).assetPacks {
      guard let pack = packs[entry.id] else {
        throw OperationError(
          "the download manifest '\(path)' lists the asset pack '\(entry.id)', which is not served here",
          hint: "copy \(entry.id).aar into the --asset-packs folder, or publish the manifest that lists these packs")
      }
      guard entry.downloadSize == UInt64(pack.file.size) else {
        throw OperationError(
          "the download manifest '\(path)' gives '\(entry.id)' a downloadSize of \(entry.downloadSize); '\(pack.file.path)' is \(pack.file.size) bytes",
          hint: "update it: pkgtool download-manifest update \(path) \(pack.file.path)")
      }
    }
  }

  /// The paths whose change makes a reload worth trying, with their stamps.
  func watchedStamps(_ configuration: AssetPackConfiguration) -> [String: [Int64]?] {
    var stamps: [String: [Int64]?] = [configuration.directory: Paths.changeStamp(of: configuration.directory)]
    if let manifest = configuration.manifestPath { stamps[manifest] = Paths.changeStamp(of: manifest) }
    for pack in packs.values { stamps[pack.file.path] = Paths.changeStamp(of: pack.file.path) }
    return stamps
  }
}
