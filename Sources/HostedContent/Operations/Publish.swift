import SystemIO

/// `publish`: validate packages and add them to a signed catalog (docs/catalog.md). Publishing
/// again keeps every entry already there, in a stable order, so the file diffs cleanly; a
/// version already published with other bytes is refused.
public enum Publish {
  /// Where the packages will be served from, and how they are checked.
  public struct Options: Sendable {
    /// Where the packages will be served: each URL is this plus `/` and the file's name.
    public var baseURL: String
    /// The lowest app version that can use the content, recorded for each new entry.
    public var minimumAppVersion: String?
    /// How each package is validated first.
    public var validation = ValidationOptions()
    /// What the package reader accepts.
    public var limits = ReaderLimits()
    /// A catalog this one continues (`--previous`): when the output is written anew, its
    /// sequence starts past this one's, so clients that used the old catalog accept the new
    /// one. It must verify with the signing key.
    public var previous: String?
    /// Seconds from now until the catalog written expires (``Catalog/expires``).
    public var lifetime: Int64 = Catalog.defaultLifetime

    /// Packages to be served under `baseURL`.
    public init(baseURL: String) { self.baseURL = baseURL }
  }

  /// What a publish wrote.
  public struct Result {
    /// The catalog as written (or, when a package was refused, as it was).
    public var catalog: Catalog
    /// `product version` of each entry added.
    public var added: [String]
    /// Packages that broke a rule, with their inspection; nothing is written when there is one.
    public var refused: [(path: String, inspection: InspectionResult)]
    /// True when the catalog file was written.
    public var written: Bool
  }

  /// Validates `packages` and writes `output`, signed with `key`. An existing `output` must
  /// verify with the same key; it is extended, never rebuilt.
  ///
  /// `progress`, when given, is asked for a handler for each package as its validation starts
  /// (see ``ProgressHandler``).
  public static func run(
    packages: [String], key: CatalogSigningKey, output: String, options: Options,
    progress: ((_ package: String) -> ProgressHandler?)? = nil
  ) throws -> Result {
    try run(
      packages: packages, signer: CatalogSigner(keys: [key]), output: output, options: options, progress: progress)
  }

  /// As ``run(packages:key:output:options:progress:)``, signed by every key of `signer`. An
  /// existing `output` (and `--previous`) must verify with one of them, or under one of its roots.
  public static func run(
    packages: [String], signer: CatalogSigner, output: String, options: Options,
    progress: ((_ package: String) -> ProgressHandler?)? = nil
  ) throws -> Result {
    try signer.checkThreshold()
    let base = try checkedBaseURL(options.baseURL)
    // Publishes into one catalog take turns: each reads the catalog under the lock, so none
    // loses another's products or signs the same sequence.
    let lock = try OperationError.turn(in: Paths.parent(of: output), for: "publish", timeout: 120)
    defer { withExtendedLifetime(lock) {} }
    var (catalog, raisedByPrevious) = try startingCatalog(output, signer: signer, options: options)
    var refused: [(String, InspectionResult)] = []
    var entries: [(product: String, version: Catalog.Version)] = []
    for path in packages {
      guard !Paths.isDirectory(path) else {
        throw OperationError(
          "'\(path)' is a folder; publish takes package files", hint: "build it first: pkgtool build \(path)",
          code: .inputUnsuitable)
      }
      // Opened once: the bytes validated are the bytes hashed into the catalog.
      let file: FileDescriptor
      do { file = try FileDescriptor.open(regularFile: path) } catch { throw OperationError.wrap(error) }
      let stamp = try file.changeStamp()
      let inspection = try Validation.run(
        path: path, file: file, options: options.validation, limits: options.limits, progress: progress?(path))
      guard !inspection.failed(strict: options.validation.strict), let info = inspection.contentInfo else {
        refused.append((path, inspection))
        continue
      }
      let sha256 = try PackageDigest.sha256(of: file)
      guard (try? file.changeStamp()) == stamp else {
        throw OperationError(
          "'\(path)' changed while it was being published; nothing was written", hint: "publish again",
          code: .inputChanged)
      }
      let version = Catalog.Version(
        contentVersion: info.contentVersion.description, url: base + "/" + percentEncodedPath(Paths.name(of: path)),
        size: Int64(clamping: try file.size()), sha256: sha256, format: inspection.format.rawValue,
        minimumAppVersion: options.minimumAppVersion)
      entries.append((info.productIdentifier, version))
    }
    guard refused.isEmpty else { return Result(catalog: catalog, added: [], refused: refused, written: false) }

    let added = try add(entries, to: &catalog)
    guard !added.isEmpty || raisedByPrevious else {
      return Result(catalog: catalog, added: [], refused: [], written: false)
    }
    try signAgain(&catalog, signer: signer, lifetime: options.lifetime, to: output)
    return Result(catalog: catalog, added: added, refused: [], written: true)
  }

  /// The catalog a publish extends: the one at `output` (it must verify with `signer`), its
  /// sequence raised to `--previous`'s when that is higher. `raisedByPrevious` is true then: the
  /// catalog is written even with nothing new, or clients that used the previous one would
  /// refuse it as a replay.
  private static func startingCatalog(_ output: String, signer: CatalogSigner, options: Options) throws -> (
    Catalog, raisedByPrevious: Bool
  ) {
    var catalog = Catalog()
    if Paths.status(output) != nil {
      do {
        catalog = try signer.existing(output)
      } catch let error as CatalogError {
        throw OperationError(
          "the existing catalog '\(output)' cannot be extended: \(error)",
          hint: "sign with the key that signed it, or publish to a new file")
      }
    }
    var raisedByPrevious = false
    if let previous = options.previous {
      let old: Catalog
      do { old = try signer.existing(previous) } catch let error
        as CatalogError
      {
        throw OperationError(
          "the previous catalog '\(previous)' cannot be continued: \(error)",
          hint: "--previous takes a catalog signed with the same --key")
      }
      if old.sequence > catalog.sequence {
        catalog.sequence = old.sequence
        raisedByPrevious = true
      }
    }
    return (catalog, raisedByPrevious)
  }

  /// Adds each version of `entries` to `catalog`, unless it is there already byte for byte;
  /// refuses a version already published from other bytes. Returns what was added.
  private static func add(_ entries: [(product: String, version: Catalog.Version)], to catalog: inout Catalog) throws
    -> [String]
  {
    var added: [String] = []
    for (product, version) in entries {
      var index = catalog.products.firstIndex { $0.productIdentifier == product }
      if index == nil {
        catalog.products.append(Catalog.Product(productIdentifier: product, versions: []))
        index = catalog.products.count - 1
      }
      if let existing = catalog.products[index!].versions.first(where: { $0.contentVersion == version.contentVersion })
      {
        guard existing.sha256 == version.sha256 else {
          throw OperationError(
            "\(product) \(version.contentVersion) is already published from other bytes (SHA-256 \(existing.sha256))",
            hint: "raise ContentVersion (pkgtool bump) and build again; a published version never changes")
        }
        continue  // published before, byte for byte: nothing to add
      }
      catalog.products[index!].versions.append(version)
      added.append("\(product) \(version.contentVersion)")
    }
    return added
  }

  /// `https://…`, `http://…` or `file://…`, without a trailing slash.
  static func checkedBaseURL(_ text: String) throws -> String {
    var url = Substring(text)
    while url.hasSuffix("/") { url = url.dropLast() }
    let lower = url.lowercased()
    // Printable ASCII only: a control character, a space, U+2028 or a no-break space would be
    // signed into every URL, and clients' URL parsers treat them differently.
    guard lower.hasPrefix("https://") || lower.hasPrefix("http://") || lower.hasPrefix("file://"),
      url.utf8.allSatisfy({ (0x21...0x7E).contains($0) }), url.count > 8
    else {
      throw OperationError(
        "--base-url '\(text)' is not an absolute http(s) or file URL of printable ASCII characters",
        hint: "e.g. --base-url https://cdn.example.com/content", code: .invalidArgument)
    }
    // What goes into a signed, public catalog and has every package's name appended to it:
    // no password, and no query or fragment that would swallow the file name.
    let afterScheme = url[url.range(of: "://")!.upperBound...]
    let authority = afterScheme.prefix { $0 != "/" && $0 != "?" && $0 != "#" }
    if authority.isEmpty && !lower.hasPrefix("file://") {
      throw OperationError(
        "--base-url '\(text)' names no host", hint: "e.g. --base-url https://cdn.example.com/content",
        code: .invalidArgument)
    }
    if url.split(separator: "/", omittingEmptySubsequences: false).dropFirst(3).contains(where: {
      $0 == ".." || $0 == "."
    }) {
      throw OperationError(
        "--base-url '\(text)' has a '.' or '..' segment, which clients resolve differently",
        hint: "give the folder's path as it is", code: .invalidArgument)
    }
    if authority.contains("@") {
      throw OperationError(
        "--base-url carries a user name or password ('…@'): it would be published in the signed, public catalog",
        hint: "give the server's address alone; authenticate downloads another way", code: .invalidArgument)
    }
    if url.contains("#") {
      throw OperationError(
        "--base-url '\(text)' has a fragment ('#…'): every package's file name would be appended to it, so every version would fetch the same URL",
        hint: "leave the fragment out", code: .invalidArgument)
    }
    if url.contains("?") {
      throw OperationError(
        "--base-url '\(text)' has a query ('?…'): the package's file name would be appended to the query, not the path",
        hint: "leave the query out; sign URLs at the server or CDN instead", code: .invalidArgument)
    }
    return String(url)
  }

  /// The next version of `catalog`: sequence + 1, a new expiry, products and versions in their
  /// stable order, signed with `key` and written over `path` (publish and every catalog edit).
  static func signAgain(_ catalog: inout Catalog, signer: CatalogSigner, lifetime: Int64, to path: String) throws {
    catalog.sequence += 1
    catalog.setExpiry(lifetime: lifetime)
    catalog.sort()
    try write(try CatalogFile.encode(catalog, signedWith: signer.keys), to: path)
  }

  /// Beside, then renamed over: the catalog appears whole.
  static func write(_ bytes: [UInt8], to path: String) throws {
    do { try PendingFile.write(bytes, to: path) } catch {
      throw OperationError("cannot write the catalog '\(path)': \(error)", code: .outputUnwritable)
    }
  }
}
