import SystemIO

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// `bump`: raise `ContentVersion` in a project's plist, keeping its format and every other key;
/// the file is replaced atomically.
public enum Bump {
  /// How the version changes.
  public enum Change: Sendable, Equatable {
    /// Raise one part (major, minor or patch), zeroing those after it.
    case raise(ContentVersion.Part)
    /// An explicit version; must be greater unless `force`.
    case set(ContentVersion, force: Bool)
  }

  /// What a bump did (or, with `dryRun`, would do).
  public struct Result: Sendable {
    /// The plist changed.
    public var plist: String
    /// The product whose version changed.
    public var productIdentifier: String
    /// The version before.
    public var old: ContentVersion
    /// The version after.
    public var new: ContentVersion
    /// The plist's form, kept as it was.
    public var format: PropertyListFormat
  }

  /// `--set` named a version that is not greater than the current one (exit 1, like a refused
  /// downgrade).
  public struct NotGreater: Error, CustomStringConvertible {
    /// The version in the plist.
    public var current: ContentVersion
    /// The version asked for.
    public var new: ContentVersion
    /// The refusal, for people.
    public var description: String { "\(new) is not greater than the current \(current)" }
  }

  /// Bumps the plist at `path`, or `path/ContentInfo.plist` when `path` is a folder. With
  /// `dryRun`, only computes the result.
  public static func run(path: String, change: Change, dryRun: Bool = false) throws -> Result {
    let plist = Paths.isDirectory(path) ? (path.hasSuffix("/") ? path : path + "/") + ContentInfo.fileName : path
    // Bumps of one plist take turns, each reading it under the lock: eight at once give eight
    // versions, not eight times 1.0 → 1.1.
    let lock = dryRun ? nil : try OperationError.turn(in: Paths.parent(of: plist), for: "bump", timeout: 60)
    defer { withExtendedLifetime(lock) {} }
    let bytes: [UInt8]
    do {
      let file = try FileDescriptor.open(regularFile: plist)
      bytes = try file.read(count: PropertyList.maxEncodedSize + 1, at: 0)
    } catch {
      throw OperationError.wrap(error)
    }
    var info: ContentInfo
    do {
      info = try ContentInfo(decoding: bytes)
    } catch {
      throw OperationError("'\(plist)' is not a valid ContentInfo.plist: \(error)")
    }
    let old = info.contentVersion
    switch change {
    case .raise(let part):
      let new = old.bumped(part)
      // A part past 18 digits would be written and then refused by every reader.
      guard ContentVersion(new.description) != nil else {
        throw OperationError(
          "\(old) cannot be raised: the next version \(new) has a part longer than 18 digits",
          hint: "set a new version with --set")
      }
      info.contentVersion = new
    case .set(let version, let force):
      if !(version > old) && !force {
        throw NotGreater(current: old, new: version)
      }
      info.contentVersion = version
    }
    // Every other key must come back exactly as it was: a value this writer cannot keep is a
    // reason not to rewrite the file at all.
    let encoded = info.encoded()
    var expected = info.properties
    expected.set(ContentInfo.versionKey, .string(info.contentVersion.description))
    guard let reread = try? ContentInfo(decoding: encoded), reread.properties == expected else {
      throw OperationError(
        "'\(plist)' holds a value pkgtool cannot write back exactly; it was left as it was",
        hint: "edit ContentVersion by hand, or with Xcode or plutil")
    }
    if !dryRun { try replaceFile(plist, encoded) }
    return Result(
      plist: plist, productIdentifier: info.productIdentifier, old: old, new: info.contentVersion, format: info.format)
  }

  /// Writes `bytes` beside `path` and renames over it, keeping the file's permission bits.
  static func replaceFile(_ path: String, _ bytes: [UInt8]) throws {
    // A regular file keeps its bits; a symlink's own (0777) are no file's, so 0644 then.
    let mode = Paths.status(path).flatMap { $0.st_mode & S_IFMT == S_IFREG ? $0.st_mode & 0o777 : nil } ?? 0o644
    if let folder = try? DirectoryHandle(path: Paths.parent(of: path)) {
      PendingFolder.removeStale(in: folder, for: Paths.name(of: path))
    }
    do { try PendingFile.write(bytes, to: path, mode: mode) } catch { throw OperationError.wrap(error) }
  }
}
