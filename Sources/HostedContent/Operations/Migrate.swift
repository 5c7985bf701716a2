import SystemIO

/// `migrate`: hosted content to self-hosted Background Assets in one step. A package (or content
/// project), or a folder of them, becomes one asset pack per product (`DIR/ID.aar`, the newest
/// version of each product, through ``ExportBackgroundAssets``), each read back through
/// pkgtool's Apple Archive reader and checked to hold exactly the package's `Contents/` files
/// (their SHA-256 list), and the download manifest of those packs (`DIR/download-manifest.json`,
/// with the payloads in `DIR/payloads/`, through ``DownloadManifestEdit``: running it again with
/// new package versions raises only the changed packs' versions).
public enum Migrate {
  /// The manifest's name in the output folder.
  public static let manifestName = "download-manifest.json"
  /// The payloads' folder in the output folder.
  public static let payloadsName = "payloads"

  /// What the packs and the manifest say.
  public struct Options: Sendable {
    /// Where the packs are served (`https://`, or loopback `http://`).
    public var baseURL: String
    /// The platform (`iOS`, `macOS`, `tvOS`, `visionOS`) of the packs and the manifest.
    public var platform: String
    /// When the system downloads each pack.
    public var policy: AssetPackManifest.Policy = .prefetch
    /// How each package is checked.
    public var validation = ValidationOptions()
    /// What the reader accepts.
    public var limits = ReaderLimits()

    /// Packs for `platform`, served under `baseURL`.
    public init(baseURL: String, platform: String) {
      self.baseURL = baseURL
      self.platform = platform
    }
  }

  /// One product's pack.
  public struct Pack: Sendable {
    /// The package (or project) it was made from.
    public var source: String
    /// The product and its version.
    public var productIdentifier: String
    /// See ``productIdentifier``.
    public var contentVersion: String
    /// The pack's ID.
    public var assetPackID: String
    /// The `.aar` written.
    public var archive: String
    /// The files compared (the pack's, without `Manifest.json`), all equal to `Contents/`'s.
    public var files: Int
    /// Files of the pack that are copies of a link of the package (compared by their bytes
    /// through the export, not listed in the package).
    public var linkCopies: [String]
    /// Junk of `Contents/` left out of the pack.
    public var leftOutJunk: [String]
  }

  /// What a migration did.
  public struct Result: Sendable {
    /// The packs, by product.
    public var packs: [Pack] = []
    /// Older versions of a product in the folder that were passed over.
    public var passedOver: [String] = []
    /// The download manifest's run; nil until the packs are written.
    public var manifest: DownloadManifestEdit.Result?
    /// A package that broke a rule, with its inspection: nothing was written for any.
    public var refused: [(file: String, inspection: InspectionResult)] = []
  }

  /// The packages (`*.pkg`) and content projects in `folder`, sorted by name; the folder itself
  /// when it is a project.
  static func inputs(_ path: String) throws -> [String] {
    guard Paths.isDirectory(path), !ProjectSource.isProject(path) else { return [path] }
    let names: [String]
    do { names = try DirectoryHandle(path: path).list().filter(\.validUTF8).map(\.name).sorted() } catch {
      throw OperationError.wrap(error)
    }
    let found = names.map { path + "/" + $0 }.filter {
      ($0.lowercased().hasSuffix(".pkg") && Paths.isRegularFile($0, followingLinks: true))
        || (Paths.isDirectory($0) && ProjectSource.isProject($0))
    }
    guard !found.isEmpty else {
      throw OperationError(
        "'\(path)' holds no package (*.pkg) and no content project", hint: "name a package, a project, or their folder",
        code: .inputUnsuitable)
    }
    return found
  }

  /// Migrates `source` (a package, a project, or a folder of them) into the folder `output`.
  public static func run(source: String, output: String, options: Options) throws -> Result {
    let base = try DownloadManifest.checkedBaseURL(options.baseURL)
    var result = Result()
    // Each input checked, with the SHA-256 of each of its files: the newest version per product.
    var newest: [String: (path: String, info: ContentInfo, files: [String: String])] = [:]
    for path in try inputs(source) {
      var files: [String: String] = [:]
      let inspection = try Validation.run(
        path: path, options: options.validation, limits: options.limits, onFileDigest: { files[$0] = $1 })
      guard !inspection.failed(strict: options.validation.strict), let info = inspection.contentInfo else {
        result.refused.append((path, inspection))
        continue
      }
      let product = info.productIdentifier
      if let other = newest[product] {
        if other.info.contentVersion == info.contentVersion {
          // A project and the package built from it: one content, taken once.
          let contents = { (files: [String: String]) in files.filter { $0.key.hasPrefix("Contents/") } }
          if contents(other.files) == contents(files) {
            result.passedOver.append(path)
            continue
          }
          throw OperationError(
            "'\(other.path)' and '\(path)' are both \(product) \(info.contentVersion)",
            hint: "their Contents/ differ: keep one package per version in the folder", code: .inputUnsuitable)
        }
        if other.info.contentVersion > info.contentVersion {
          result.passedOver.append(path)
          continue
        }
        result.passedOver.append(other.path)
      }
      newest[product] = (path, info, files)
    }
    guard result.refused.isEmpty else { return result }

    if Paths.status(output) == nil {
      do { try DirectoryHandle(path: Paths.parent(of: output)).createDirectory(Paths.name(of: output)) } catch {
        throw OperationError.writing(output, error)
      }
    }
    guard Paths.isDirectory(output) else {
      throw OperationError("'\(output)' is not a folder", hint: "name a folder for the packs", code: .outputExists)
    }
    let folder: DirectoryHandle
    do { folder = try DirectoryHandle(path: output) } catch { throw OperationError.writing(output, error) }

    var archives: [String] = []
    for product in newest.keys.sorted() {
      let (path, info, packageFiles) = newest[product]!
      let id = AssetPackManifest.suggestedAssetPackID(from: product)
      var export = ExportBackgroundAssets.Options()
      export.assetPackID = id
      export.policy = options.policy
      if options.policy == .onDemand { export.installationEvents = [] }
      export.platforms = [options.platform]
      export.validation = options.validation
      export.limits = options.limits
      export.force = true
      // Written under a pending name, and put in place only once it has been read back.
      let pendingName = ".pending-\(id).aar"
      folder.removeFileIfPresent(pendingName)
      let exported = try ExportBackgroundAssets.run(
        source: path, to: output + "/" + pendingName, options: export)
      guard exported.output != nil else {
        folder.removeFileIfPresent(pendingName)
        result.refused.append((path, exported.assetPackInspection ?? exported.inspection))
        return result
      }
      defer { folder.removeFileIfPresent(pendingName) }
      // Read back through the reader and the asset-pack rules: the same files as Contents/.
      var read = DownloadManifestEdit.Options()
      read.validation = options.validation
      read.limits = options.limits
      let (pack, inspection) = try DownloadManifestEdit.readPack(output + "/" + pendingName, options: read)
      guard let pack else {
        result.refused.append((output + "/" + id + ".aar", inspection))
        return result
      }
      let copies = Set(exported.replacedSymlinks + exported.replacedHardLinks)
      let junk = Set(exported.leftOutJunk)
      let expected = packageFiles.filter { $0.key.hasPrefix("Contents/") && !junk.contains($0.key) }
      let packed = pack.files.filter { $0.key != AssetPackManifest.fileName && !copies.contains($0.key) }
      guard expected == packed else {
        let differing = Set(expected.keys).symmetricDifference(packed.keys).union(
          expected.keys.filter { packed[$0] != nil && packed[$0] != expected[$0] }
        ).sorted()
        throw OperationError(
          "the asset pack made from '\(path)' does not hold the package's Contents/ files: \(differing.prefix(5).joined(separator: ", ")); nothing was put in place",
          hint: "report it as a pkgtool bug", code: .other)
      }
      let archive = output + "/" + id + ".aar"
      do { try folder.rename(pendingName, to: id + ".aar", in: folder) } catch {
        throw OperationError.writing(archive, error)
      }
      archives.append(archive)
      result.packs.append(
        Pack(
          source: path, productIdentifier: product, contentVersion: info.contentVersion.description,
          assetPackID: id, archive: archive, files: packed.count, linkCopies: copies.sorted(),
          leftOutJunk: junk.sorted()))
    }

    var manifestOptions = DownloadManifestEdit.Options()
    manifestOptions.baseURL = base
    manifestOptions.platform = options.platform
    manifestOptions.payloads = output + "/" + payloadsName
    manifestOptions.validation = options.validation
    manifestOptions.limits = options.limits
    // `create` over the manifest of an earlier run: each pack keeps its version when its bytes
    // are the same and gets one more when they changed (what `update` does), and the folder is
    // the whole truth (a product no longer in it leaves the manifest).
    result.manifest = try DownloadManifestEdit.create(
      packs: archives, output: output + "/" + manifestName, options: manifestOptions)
    return result
  }
}
