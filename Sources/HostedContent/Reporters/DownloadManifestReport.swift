/// What `download-manifest create` and `update` print: each pack with its version (and why it
/// is that), the payloads written, and the order to publish in; when a pack broke a rule, its
/// findings only (the refusal is the caller's to say).
public struct DownloadManifestReport: OperationReport {
  /// What the run did.
  public var result: DownloadManifestEdit.Result
  /// Whether warnings counted as errors.
  public var strict: Bool

  /// The report of `result`.
  public init(_ result: DownloadManifestEdit.Result, strict: Bool) {
    self.result = result
    self.strict = strict
  }

  /// One pack in `--json`.
  public struct PackDocument: Encodable {
    var file: String
    var id: String
    var version: Int
    var previousVersion: Int?
    var change: String
    var downloadSize: UInt64
    var url: String
    var sha256: String
    var payload: String?
    var note: String?
  }

  /// The `--json` object.
  public struct Document: Encodable {
    var manifest: String?
    var digests: String?
    var written: Bool
    var baseURL: String?
    var packs: [PackDocument]
    var dropped: [String]
    /// What to upload, in order: the payloads, then the manifest.
    var publishOrder: [String]
    var findings: [Finding]
  }

  /// What `--json` encodes.
  public var document: Document {
    let payloads = result.packs.compactMap(\.payload)
    return Document(
      manifest: result.manifest, digests: result.digests, written: result.manifest != nil, baseURL: result.baseURL,
      packs: result.packs.map {
        PackDocument(
          file: $0.file, id: $0.pack.id, version: $0.pack.version, previousVersion: $0.previousVersion,
          change: $0.change.rawValue, downloadSize: $0.pack.downloadSize, url: $0.pack.url, sha256: $0.sha256,
          payload: $0.payload, note: $0.note)
      }, dropped: result.dropped,
      publishOrder: result.manifest.map { payloads + [$0] } ?? [],
      findings: result.refused.flatMap { $0.inspection.findings })
  }

  /// Lines for people, each ending in a newline.
  public var text: String {
    var out = ""
    for (file, inspection) in result.refused {
      out += findingLines(inspection, displayPath: file, strict: strict)
    }
    guard let manifest = result.manifest else { return out }
    let width = result.packs.map(\.pack.id.count).max() ?? 0
    out += "\(manifest): \(result.packs.count) asset pack\(result.packs.count == 1 ? "" : "s") written\n"
    for pack in result.packs {
      let id = pack.pack.id.padding(toLength: width, withPad: " ", startingAt: 0)
      var what: String
      switch pack.change {
      case .added: what = "new"
      case .raised: what = "raised from \(pack.previousVersion ?? 0)"
      case .unchanged: what = "unchanged"
      case .set: what = "set, was \(pack.previousVersion ?? 0)"
      }
      if let note = pack.note { what += ": " + note }
      out += "  \(id)  version \(pack.pack.version) (\(what))  \(pack.pack.downloadSize) bytes  \(pack.pack.url)\n"
    }
    for id in result.dropped { out += "  \(id)  left out (it was in the manifest before)\n" }
    if let digests = result.digests {
      out += "SHA-256 of each pack: \(digests) (keep it beside the manifest: update compares with it)\n"
    }
    let payloads = result.packs.compactMap(\.payload)
    if !payloads.isEmpty {
      let folder = payloads.first.map { String($0.dropLast(Substring($0).split(separator: "/").last?.count ?? 0)) }
      out += "payloads (extensionless, upload as they are): \(payloads.joined(separator: ", "))\n"
      out +=
        "Publish the payloads first (\(folder ?? "")* to \(result.baseURL ?? "the base URL")), then \(manifest) last: a device that reads the manifest before its payloads are in place fails the download.\n"
    } else {
      out +=
        "Publish each pack at its url first (the file with no extension: --payloads DIR writes the copies), then \(manifest) last.\n"
    }
    return out
  }
}
