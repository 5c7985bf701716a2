import Foundation
import SystemIO

/// A small signed document named by URL, a catalog or a root: fetched whole through the download
/// path packages take (``ResumingDownload``: curl without `.curlrc`, https never redirected to
/// http, a deadline, a private temporary folder removed whatever happens), cut at a size cap,
/// and handed back as bytes to be verified exactly as a file's are.
///
/// `https://` is taken for any host; plain `http://` only for a loopback host (`localhost`,
/// `127.0.0.0/8`, `::1`), and never redirected to another plain http address. A package may come
/// over plain http because the signed catalog gives its SHA-256; the catalog is what says which
/// versions are current, and over plain http anyone on the path could hand back an older one
/// that has not expired.
public enum DocumentDownload {
  /// What is fetched, for messages and for its size cap.
  public enum Kind: Sendable {
    /// A catalog: at most 64 MiB (the most ``CatalogFile`` reads).
    case catalog
    /// A root: at most 1 MiB.
    case root

    /// The most bytes accepted.
    public var limit: UInt64 {
      switch self {
      case .catalog: 64 << 20
      case .root: 1 << 20
      }
    }

    var name: String {
      switch self {
      case .catalog: "catalog"
      case .root: "root"
      }
    }
  }

  /// Whether `location` is an `http://` or `https://` URL (else it is a path).
  public static func isURL(_ location: String) -> Bool {
    let lower = location.lowercased()
    return lower.hasPrefix("https://") || lower.hasPrefix("http://")
  }

  /// `location` as messages show it: without user information, query or fragment, which may
  /// hold a secret (a token, a signature).
  public static func shown(_ location: String) -> String {
    guard var components = URLComponents(string: location) else {
      return String(location.prefix { $0 != "?" && $0 != "#" })
    }
    components.user = nil
    components.password = nil
    components.query = nil
    components.fragment = nil
    return components.string ?? String(location.prefix { $0 != "?" && $0 != "#" })
  }

  /// Whether `host` (as `URL.host` gives it) is this machine's loopback.
  static func isLoopback(_ host: String) -> Bool {
    let bare = host.lowercased().trimmingCharacters(in: CharacterSet(charactersIn: "[]"))
    if bare == "localhost" || bare == "::1" { return true }
    let parts = bare.split(separator: ".", omittingEmptySubsequences: false)
    return parts.count == 4 && parts[0] == "127" && parts.allSatisfy { UInt8($0) != nil }
  }

  /// The bytes at `location` (an http(s) URL), at most `kind.limit`, fetched within `deadline`.
  /// Throws ``OperationError`` (exit 2) naming the URL without its query: not a usable URL,
  /// plain http to a host other than loopback, an HTTP error (with `pkgtool serve`'s reason),
  /// a body over the cap, a cut or slow transfer.
  public static func fetch(
    _ location: String, kind: Kind, deadline: ResumingDownload.Deadline = .standard
  ) throws -> [UInt8] {
    let shown = shown(location)
    guard let url = URL(string: location), let host = url.host, !host.isEmpty else {
      throw OperationError(
        "'\(shown)' is not a URL pkgtool can fetch the \(kind.name) from", hint: "give an https:// URL or a file",
        code: .invalidArgument)
    }
    if location.lowercased().hasPrefix("http://"), !isLoopback(host) {
      throw OperationError(
        "cannot download the \(kind.name) '\(shown)': plain http:// is taken only from a loopback host, since anyone on the way could hand back an older \(kind.name)",
        hint: "give its https:// URL", code: .invalidArgument)
    }
    PrivateFolder.removeLeftovers(prefix: DownloadedPackage.folderPrefix)
    let (folder, lock) = try DownloadedPackage.privateFolder(for: shown)
    defer {
      DownloadedPackage.remove(folder)
      withExtendedLifetime(lock) {}
    }
    let path = folder + "/" + kind.name + ".json"
    let limit = ResumingDownload.Limit(
      bytes: kind.limit, what: "\(kind.limit >> 20) MiB, the most a \(kind.name) may be")
    try ResumingDownload(
      address: url.absoluteString, shownAs: shown, limit: limit, deadline: deadline, plainRedirects: false
    ).run(into: path)
    do {
      let file = try FileDescriptor.open(regularFile: path)
      return try file.read(count: Int(try file.size()), at: 0)
    } catch {
      throw OperationError(
        "cannot download the \(kind.name) '\(shown)': cannot read the temporary file back: \((error as? SystemError)?.reason ?? "\(error)")",
        code: .downloadFailed)
    }
  }
}
