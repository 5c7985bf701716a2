import Foundation

/// The download manifest of self-hosted ("managed") Background Assets asset packs: the JSON the
/// app's `BAManifestURL` names, in the shape Apple's `ba-package download-manifest create` writes,
///
/// ```json
/// {"assetPacks": [{"downloadSize": 1234, "id": "BookPack", "url": "https://cdn.example.com/packs/BookPack", "version": 2}]}
/// ```
///
/// where `url` is the base URL with the pack's ID appended (no extension) and `downloadSize` is
/// the size of the `.aar` file in bytes. A device downloads a pack again when its version rises.
public struct DownloadManifest: Equatable, Sendable {
  /// One asset pack of the manifest.
  public struct Pack: Codable, Equatable, Sendable {
    /// The asset pack's ID, its `Manifest.json`'s `assetPackID`.
    public var id: String
    /// The version devices compare: a pack is downloaded again when it rises.
    public var version: Int
    /// The `.aar` file's size in bytes.
    public var downloadSize: UInt64
    /// Where the pack's bytes are: the base URL and the ID.
    public var url: String

    /// A pack entry as written.
    public init(id: String, version: Int, downloadSize: UInt64, url: String) {
      self.id = id
      self.version = version
      self.downloadSize = downloadSize
      self.url = url
    }
  }

  /// The packs, in the order given.
  public var assetPacks: [Pack]

  /// A manifest of `assetPacks`.
  public init(assetPacks: [Pack]) { self.assetPacks = assetPacks }

  /// The pack with `id`, if any.
  public func pack(_ id: String) -> Pack? { assetPacks.first { $0.id == id } }

  /// The highest version pkgtool writes (a JSON number any reader holds exactly).
  package static let maxVersion = Int(JSONValue.largestExactInteger)

  private struct Document: Codable { var assetPacks: [Pack] }

  /// The manifest's JSON: indented, keys sorted, a final newline.
  package var encoded: [UInt8] { (try? JSONText.bytes(Document(assetPacks: assetPacks))) ?? [] }

  /// Reads a manifest's bytes; `name` is the file named in the messages. Refuses what pkgtool
  /// would not write: another shape, a version below 1, an ID that is not a safe asset-pack ID
  /// (it becomes a file name and the end of a URL), an ID twice, a URL that does not end with
  /// its ID.
  package static func decode(_ bytes: [UInt8], name: String) throws -> DownloadManifest {
    func refuse(_ why: String) -> OperationError {
      OperationError(
        "'\(name)' is not a download manifest pkgtool can continue: \(why)",
        hint: "pkgtool download-manifest create writes a new one", code: .inputUnsuitable)
    }
    let value: JSONValue
    do { value = try JSONValue(parsing: bytes) } catch { throw refuse("\(error)") }
    guard let root = value.objectValue, case .array(let items)? = root["assetPacks"] else {
      throw refuse("it is not a JSON object with an 'assetPacks' array")
    }
    var packs: [Pack] = []
    for (index, item) in items.enumerated() {
      guard let fields = item.objectValue, case .string(let id)? = fields["id"],
        case .integer(let version)? = fields["version"], case .integer(let size)? = fields["downloadSize"],
        case .string(let url)? = fields["url"]
      else {
        throw refuse("assetPacks[\(index)] is not an object with 'id', 'version', 'downloadSize' and 'url'")
      }
      if let problem = AssetPackManifest.problem(withAssetPackID: id) {
        throw refuse("assetPacks[\(index)]: \(problem)")
      }
      guard version >= 1, size >= 0 else {
        throw refuse("assetPacks[\(index)] ('\(id)') has a version below 1 or a negative downloadSize")
      }
      guard url.hasSuffix("/" + id) else { throw refuse("the url of '\(id)' does not end with '/\(id)'") }
      if packs.contains(where: { $0.id == id }) { throw refuse("the pack '\(id)' is listed twice") }
      packs.append(Pack(id: id, version: Int(version), downloadSize: UInt64(size), url: url))
    }
    return DownloadManifest(assetPacks: packs)
  }

  /// The base URL every pack's `url` starts with, when they share one (nil for an empty
  /// manifest or one whose packs lie in different folders).
  package var baseURL: String? {
    let bases = Set(assetPacks.map { String($0.url.dropLast($0.id.utf8.count)) })
    return bases.count == 1 ? bases.first : nil
  }

  /// `text` as a download manifest's base URL, with a trailing slash: `https://`, or `http://`
  /// to a loopback host (`localhost`, `127.x.x.x`, `[::1]`) for testing; no user, query or
  /// fragment.
  package static func checkedBaseURL(_ text: String) throws -> String {
    let url = try Publish.checkedBaseURL(text)
    let lower = url.lowercased()
    if lower.hasPrefix("http://") {
      let authority = lower.dropFirst("http://".count).prefix { $0 != "/" }
      let host: Substring
      if authority.hasPrefix("[") {
        host = authority.prefix { $0 != "]" }.dropFirst()
      } else {
        host = authority.prefix { $0 != ":" }
      }
      // 127.x.x.x as four numbers: `127.0.0.1.example.com` is a name anyone may own.
      let octets = host.split(separator: ".", omittingEmptySubsequences: false)
      let ipv4Loopback =
        octets.count == 4 && octets[0] == "127"
        && octets.allSatisfy { !$0.isEmpty && $0.count <= 3 && $0.allSatisfy(\.isASCII) && UInt8($0) != nil }
      let loopback = host == "localhost" || host == "::1" || ipv4Loopback
      guard loopback else {
        throw OperationError(
          "--base-url '\(text)' is plain http to '\(host)': devices download asset packs over https (App Transport Security), and anyone on the path could change them",
          hint:
            "use https://…; plain http is taken only for a loopback host (127.0.0.1, localhost, [::1]) while testing",
          code: .invalidArgument)
      }
    } else if !lower.hasPrefix("https://") {
      throw OperationError(
        "--base-url '\(text)' is not an https URL", hint: "e.g. --base-url https://cdn.example.com/packs/",
        code: .invalidArgument)
    }
    return url + "/"
  }
}

/// The SHA-256 of each pack of a download manifest, as pkgtool last wrote it: what
/// `download-manifest update` compares a pack's bytes with. It is kept in a file beside the
/// manifest (``path(for:)``, `MANIFEST.sha256sums`) in the form `sha256sum` writes and checks
/// (`HEX  ID`, one line per pack, named as the extensionless payload), so the manifest keeps
/// exactly Apple's shape, and `sha256sum -c` run in the payloads folder checks an upload.
package struct PackDigests: Equatable, Sendable {
  /// SHA-256 (lowercase hex) by pack ID.
  package var byID: [String: String] = [:]

  package init(byID: [String: String] = [:]) { self.byID = byID }

  /// The file beside the manifest at `manifest`.
  package static func path(for manifest: String) -> String { manifest + ".sha256sums" }

  /// The lines, sorted by ID.
  package var encoded: [UInt8] {
    Array(byID.keys.sorted().map { "\(byID[$0]!)  \($0)\n" }.joined().utf8)
  }

  /// Reads the lines `encoded` writes; a line of another form is refused (`name` in the message).
  package static func decode(_ bytes: [UInt8], name: String) throws -> PackDigests {
    var digests = PackDigests()
    for (number, line) in String(decoding: bytes, as: UTF8.self).split(separator: "\n").enumerated() {
      let parts = line.split(separator: " ", maxSplits: 1)
      let hex = parts.first.map(String.init) ?? ""
      var id = parts.count == 2 ? String(parts[1]) : ""
      if id.hasPrefix(" ") || id.hasPrefix("*") { id.removeFirst() }
      guard hex.utf8.count == 64, hex.utf8.allSatisfy({ (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }),
        AssetPackManifest.problem(withAssetPackID: id) == nil
      else {
        throw OperationError(
          "'\(name)' line \(number + 1) is not 'SHA256  PACK-ID'",
          hint: "it is pkgtool's record of each pack's bytes; delete it and the next update raises every pack named",
          code: .inputUnsuitable)
      }
      digests.byID[id] = hex
    }
    return digests
  }
}
