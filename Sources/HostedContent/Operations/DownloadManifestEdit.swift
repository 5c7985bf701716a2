import Crypto
import SystemIO
import TextCoding

/// `download-manifest create` and `update`: the download manifest of self-hosted asset packs
/// (``DownloadManifest``) from the `.aar` files themselves, with the versions devices compare
/// kept safe: a version never goes down, and a pack whose bytes changed gets a higher one.
///
/// Each pack is read whole through pkgtool's Apple Archive reader and the asset-pack rules
/// (`validate` on it); its ID is its own `Manifest.json`'s `assetPackID`. Its SHA-256 (of the
/// `.aar` file, what devices download) is recorded beside the manifest (``PackDigests``), so
/// that `update` knows which packs changed. Every refusal comes before anything is written;
/// then the payloads (`payloads/ID`, extensionless copies), the manifest (whole or not at all),
/// and last the digests.
public enum DownloadManifestEdit {
  /// How the packs are read and where they go.
  public struct Options: Sendable {
    /// `create`: the base URL (`https://`, or loopback `http://`); a trailing `/` is added.
    public var baseURL: String?
    /// `create`: the platform every pack must name in its `Manifest.json` (`iOS`, `macOS`,
    /// `tvOS`, `visionOS`).
    public var platform: String?
    /// `create`: each pack's version, by position (as `ba-package --asset-pack-versions`).
    public var versions: [Int]?
    /// A folder for the extensionless copies to upload (`DIR/ID`); made if missing.
    public var payloads: String?
    /// How each pack is checked.
    public var validation = ValidationOptions()
    /// What the reader accepts.
    public var limits = ReaderLimits()
    /// The defaults: no payloads.
    public init() {}
  }

  /// What happened to one pack.
  public enum Change: String, Sendable, Codable {
    /// New in the manifest.
    case added
    /// Its bytes changed (or were never recorded): its version rose.
    case raised
    /// The same bytes as recorded: the same version.
    case unchanged
    /// `--versions` set it (to the version before or above).
    case set
  }

  /// One pack as written.
  public struct PackResult: Sendable {
    /// The `.aar` file as named.
    public var file: String
    /// The entry written.
    public var pack: DownloadManifest.Pack
    /// The version in the manifest before, if the pack was in it.
    public var previousVersion: Int?
    /// What happened.
    public var change: Change
    /// SHA-256 of the `.aar` file, hex.
    public var sha256: String
    /// The extensionless copy written, with `--payloads`.
    public var payload: String?
    /// Why the version is what it is, in words.
    public var note: String?
  }

  /// What a run did.
  public struct Result: Sendable {
    /// The manifest written; nil when a pack broke a rule (``refused``).
    public var manifest: String?
    /// The digests file written beside it.
    public var digests: String?
    /// The base URL of the packs.
    public var baseURL: String?
    /// The packs named, in order.
    public var packs: [PackResult] = []
    /// Packs of the manifest before that `create` left out.
    public var dropped: [String] = []
    /// Each pack that broke a rule, with its inspection: nothing was written.
    public var refused: [(file: String, inspection: InspectionResult)] = []
  }

  /// One `.aar`, read and checked.
  struct ReadPack {
    var file: String
    var descriptor: FileDescriptor
    var manifest: AssetPackManifest
    var size: UInt64
    var sha256: String
    /// SHA-256 of each file in the pack, by path (the manifest included).
    var files: [String: String]
  }

  /// Reads `path` as an asset-pack archive: the whole archive through the asset-pack rules, and
  /// the SHA-256 of the file; the inspection alone when a rule failed.
  static func readPack(_ path: String, options: Options) throws -> (ReadPack?, InspectionResult) {
    let file: FileDescriptor
    do { file = try FileDescriptor.open(regularFile: path) } catch { throw OperationError.wrap(error) }
    let before = try Paths.changeStamp(of: file)
    var files: [String: String] = [:]
    let inspection = try Validation.run(
      path: path, file: file, options: options.validation, limits: options.limits,
      onFileDigest: { files[$0] = $1 })
    guard inspection.format == .appleArchive else {
      throw OperationError(
        "'\(path)' is not an asset pack: it reads as \(inspection.format.displayName), not an Apple Archive",
        hint: "pkgtool export background-assets PACKAGE -o NAME.aar (or ba-package on a Mac) writes one",
        code: .inputUnsuitable)
    }
    guard !inspection.failed(strict: options.validation.strict), let manifest = inspection.assetPackManifest else {
      return (nil, inspection)
    }
    let size: UInt64
    let sha256: String
    do {
      size = try file.size()
      sha256 = try PackageDigest.sha256(of: file)
      guard try Paths.changeStamp(of: file) == before else {
        throw OperationError("'\(path)' changed while it was read", hint: "run it again", code: .inputChanged)
      }
    } catch let error as OperationError { throw error } catch { throw OperationError.wrap(error) }
    let pack = ReadPack(
      file: path, descriptor: file, manifest: manifest, size: size, sha256: sha256, files: files)
    return (pack, inspection)
  }

  /// The asset-pack ID of the archive at `path`, read from its own `Manifest.json` after the
  /// whole archive passed the asset-pack rules (for `serve --asset-packs`, which serves a pack
  /// under that ID). The file's name is not judged (`package-form`): a pack is uploaded without
  /// its extension. Throws `OperationError` naming the file and the first finding otherwise.
  package static func assetPackID(of file: FileDescriptor, path: String) throws -> String {
    let inspection = try Validation.run(
      path: path, file: file, options: ValidationOptions(), limits: ReaderLimits(), onFileDigest: { _, _ in })
    let errors = inspection.findings.filter { $0.severity == .error && $0.ruleID != "package-form" }
    guard inspection.format == .appleArchive, errors.isEmpty, let manifest = inspection.assetPackManifest else {
      let why =
        inspection.format != .appleArchive
        ? "it reads as \(inspection.format.displayName), not an Apple Archive"
        : errors.first.map { "\($0.message) [\($0.ruleID)]" } ?? "it has no Manifest.json"
      throw OperationError(
        "'\(path)' is not an asset pack a device would read: \(why)",
        hint: "pkgtool validate it for every finding; pkgtool export background-assets writes a pack",
        code: .inputUnsuitable)
    }
    return manifest.assetPackID
  }

  /// Reads every pack; refuses two packs with one ID.
  static func readPacks(_ paths: [String], options: Options, result: inout Result) throws -> [ReadPack] {
    guard !paths.isEmpty else {
      throw OperationError("no asset pack given", hint: "name one or more PACK.aar files", code: .invalidArgument)
    }
    var packs: [ReadPack] = []
    for path in paths {
      let (pack, inspection) = try readPack(path, options: options)
      guard let pack else {
        result.refused.append((path, inspection))
        continue
      }
      if let first = packs.first(where: { $0.manifest.assetPackID == pack.manifest.assetPackID }) {
        throw OperationError(
          "'\(first.file)' and '\(path)' are both the asset pack '\(pack.manifest.assetPackID)'",
          hint: "a manifest lists each pack ID once; name one file per pack", code: .invalidArgument)
      }
      packs.append(pack)
    }
    return packs
  }

  /// The manifest at `path` and its digests, if the manifest exists.
  static func existing(_ path: String) throws -> (DownloadManifest, PackDigests?)? {
    guard Paths.status(path) != nil else { return nil }
    let bytes: [UInt8]
    do { bytes = try FileDescriptor.open(regularFile: path).read(count: 4 << 20, at: 0) } catch {
      throw OperationError.wrap(error)
    }
    let manifest = try DownloadManifest.decode(bytes, name: path)
    let digestsPath = PackDigests.path(for: path)
    guard Paths.status(digestsPath) != nil else { return (manifest, nil) }
    let digestBytes: [UInt8]
    do { digestBytes = try FileDescriptor.open(regularFile: digestsPath).read(count: 4 << 20, at: 0) } catch {
      throw OperationError.wrap(error)
    }
    return (manifest, try PackDigests.decode(digestBytes, name: digestsPath))
  }

  /// The version of `pack` when nothing sets it: the one before if its bytes are the same, one
  /// more if they changed or were never recorded, 1 for a new pack.
  static func nextVersion(of pack: ReadPack, before: DownloadManifest.Pack?, digests: PackDigests?)
    -> (Int, Change, String?)
  {
    guard let before else { return (1, .added, nil) }
    guard let recorded = digests?.byID[before.id] else {
      return (
        before.version + 1, .raised,
        "no SHA-256 recorded for it beside the manifest: raised, so that devices fetch these bytes"
      )
    }
    if recorded == pack.sha256 && before.downloadSize == pack.size { return (before.version, .unchanged, nil) }
    return (before.version + 1, .raised, "its bytes changed")
  }

  /// `download-manifest create`: a manifest of `packs` at `output`, each URL the base URL plus
  /// its ID. Over an existing manifest, no version goes down: without `versions` each pack keeps
  /// its version when its bytes are the same and gets one more when they changed; a version
  /// given below the one before, or equal to it for other bytes, is refused.
  public static func create(packs paths: [String], output: String, options: Options) throws -> Result {
    guard let given = options.baseURL else {
      throw OperationError(
        "--base-url is required", hint: "e.g. --base-url https://cdn.example.com/packs/",
        code: .invalidArgument)
    }
    let base = try DownloadManifest.checkedBaseURL(given)
    if let versions = options.versions {
      guard versions.count == paths.count else {
        throw OperationError(
          "--versions gives \(versions.count) version\(versions.count == 1 ? "" : "s") for \(paths.count) pack\(paths.count == 1 ? "" : "s")",
          hint: "one version per pack, in the packs' order", code: .invalidArgument)
      }
      if let bad = versions.first(where: { $0 < 1 || $0 > DownloadManifest.maxVersion }) {
        throw OperationError("--versions: \(bad) is not a version from 1 up", code: .invalidArgument)
      }
    }
    try checkOutput(output)
    let before = try existing(output)
    var result = Result(baseURL: base)
    let packs = try readPacks(paths, options: options, result: &result)
    guard result.refused.isEmpty else { return result }
    if let platform = options.platform {
      for pack in packs where !pack.manifest.platforms.contains(platform) {
        throw OperationError(
          "'\(pack.file)' is for \(pack.manifest.platforms.joined(separator: ", ")), not \(platform)",
          hint: "export the pack with --platforms \(platform), or make the manifest for its platform",
          code: .invalidArgument)
      }
    }
    var refusals: [String] = []
    for (index, pack) in packs.enumerated() {
      let id = pack.manifest.assetPackID
      let previous = before?.0.pack(id)
      var (version, change, note) = nextVersion(of: pack, before: previous, digests: before?.1)
      if let given = options.versions?[index] {
        if let previous {
          let recorded = before?.1?.byID[id]
          let changed = recorded.map { $0 != pack.sha256 } ?? false || previous.downloadSize != pack.size
          if given < previous.version {
            refusals.append(
              "'\(id)' would go from version \(previous.version) down to \(given): devices that have \(previous.version) would never fetch it again"
            )
          } else if given == previous.version && changed {
            refusals.append(
              "'\(id)' has other bytes than its version \(previous.version) in '\(output)', but keeps that version: devices that have it would never fetch the new bytes"
            )
          }
          change = given == previous.version ? .unchanged : .set
        } else {
          change = .added
        }
        version = given
        note = nil
      }
      result.packs.append(
        PackResult(
          file: pack.file,
          pack: DownloadManifest.Pack(id: id, version: version, downloadSize: pack.size, url: base + id),
          previousVersion: previous?.version, change: change, sha256: pack.sha256, note: note))
    }
    guard refusals.isEmpty else {
      throw OperationError(
        refusals.joined(separator: "; ") + "; '\(output)' was left as it was",
        hint:
          "give versions above the ones in the manifest, or leave --versions out: pkgtool then raises exactly the packs whose bytes changed",
        code: .invalidArgument)
    }
    if let before {
      result.dropped = before.0.assetPacks.map(\.id).filter { id in !packs.contains { $0.manifest.assetPackID == id } }
    }
    let manifest = DownloadManifest(assetPacks: result.packs.map(\.pack))
    var digests = PackDigests()
    for pack in result.packs { digests.byID[pack.pack.id] = pack.sha256 }
    try write(manifest, digests: digests, packs: packs, to: output, options: options, result: &result)
    return result
  }

  /// `download-manifest update`: raises the version of each of `packs` whose bytes differ from
  /// the ones recorded, and adds a pack the manifest does not list (version 1, at the manifest's
  /// base URL); every other pack stays as it is.
  public static func update(manifest path: String, packs paths: [String], options: Options) throws -> Result {
    guard let (before, recorded) = try existing(path) else {
      throw OperationError(
        "'\(path)' does not exist", hint: "pkgtool download-manifest create writes the first one",
        code: .inputUnreadable)
    }
    var result = Result(baseURL: before.baseURL)
    let packs = try readPacks(paths, options: options, result: &result)
    guard result.refused.isEmpty else { return result }
    var manifest = before
    var digests = recorded ?? PackDigests()
    for pack in packs {
      let id = pack.manifest.assetPackID
      let previous = before.pack(id)
      let (version, change, note) = nextVersion(of: pack, before: previous, digests: recorded)
      let url: String
      if let previous {
        url = previous.url
      } else {
        guard let base = before.baseURL else {
          throw OperationError(
            "'\(id)' is new, and the packs of '\(path)' share no base URL to put it under; '\(path)' was left as it was",
            hint: "run download-manifest create with --base-url and every pack", code: .inputUnsuitable)
        }
        url = base + id
      }
      let entry = DownloadManifest.Pack(id: id, version: version, downloadSize: pack.size, url: url)
      if let index = manifest.assetPacks.firstIndex(where: { $0.id == id }) {
        manifest.assetPacks[index] = entry
      } else {
        manifest.assetPacks.append(entry)
      }
      digests.byID[id] = pack.sha256
      result.packs.append(
        PackResult(
          file: pack.file, pack: entry, previousVersion: previous?.version, change: change, sha256: pack.sha256,
          note: note))
    }
    // A pack listed with no recorded digest keeps having none (update raises it when named).
    digests.byID = digests.byID.filter { id, _ in manifest.pack(id) != nil }
    try write(manifest, digests: digests, packs: packs, to: path, options: options, result: &result)
    return result
  }

  /// Refuses an output that is a folder, or in a folder that does not exist.
  static func checkOutput(_ output: String) throws {
    if Paths.isDirectory(output) {
      throw OperationError(
        "'\(output)' is a folder", hint: "name the manifest file, e.g. -o download-manifest.json",
        code: .outputUnwritable)
    }
    if !Paths.isDirectory(Paths.parent(of: output)) {
      throw OperationError(
        "cannot write '\(output)': the folder '\(Paths.parent(of: output))' does not exist", hint: "create it first",
        code: .outputUnwritable)
    }
  }

  /// The payloads (when asked), then the manifest, then the digests: a failure part way leaves
  /// a manifest that lists only payloads already in place, and digests no newer than it (at
  /// worst the next update raises a pack once more).
  static func write(
    _ manifest: DownloadManifest, digests: PackDigests, packs: [ReadPack], to output: String, options: Options,
    result: inout Result
  ) throws {
    if let folder = options.payloads {
      if Paths.status(folder) == nil {
        do { try DirectoryHandle(path: Paths.parent(of: folder)).createDirectory(Paths.name(of: folder)) } catch {
          throw OperationError.writing(folder, error)
        }
      }
      guard Paths.isDirectory(folder) else {
        throw OperationError("--payloads '\(folder)' is not a folder", code: .outputUnwritable)
      }
      for (index, pack) in packs.enumerated() {
        let target = folder + "/" + pack.manifest.assetPackID
        try copy(pack, to: target)
        result.packs[index].payload = target
      }
    }
    do { try PendingFile.write(manifest.encoded, to: output) } catch { throw OperationError.writing(output, error) }
    result.manifest = output
    let digestsPath = PackDigests.path(for: output)
    do { try PendingFile.write(digests.encoded, to: digestsPath) } catch {
      throw OperationError.writing(digestsPath, error)
    }
    result.digests = digestsPath
  }

  /// Copies the pack's bytes from its open descriptor to `target` (beside, then renamed over),
  /// checking on the way that they are the bytes hashed.
  static func copy(_ pack: ReadPack, to target: String) throws {
    do {
      let pending = try PendingFile(beside: target, mode: 0o644)
      var hasher = SHA256()
      var offset: UInt64 = 0
      var failure: Error?
      try pack.descriptor.observe(offset: 0, length: pack.size) { chunk in
        guard failure == nil else { return }
        hasher.update(bufferPointer: chunk)
        do { try pending.descriptor.write(chunk, at: offset) } catch { failure = error }
        offset += UInt64(chunk.count)
      }
      if let failure { throw failure }
      guard hexString(hasher.finalize()) == pack.sha256 else {
        pending.discard()
        throw OperationError(
          "'\(pack.file)' changed while it was copied to '\(target)'", hint: "run it again", code: .inputChanged)
      }
      try pending.commit(replace: true)
    } catch let error as OperationError {
      throw error
    } catch {
      throw OperationError.writing(target, error)
    }
  }
}
