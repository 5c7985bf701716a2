/// What `install` prints: the findings, then what was done (installed, replaced, already
/// current) and which older versions were removed; a refusal is the caller's to say (it ends
/// the command: ``Install/Result/action``).
public struct InstallReport: OperationReport {
  /// What the install did.
  public var result: Install.Result
  /// The package as the user named it, for the findings' lines.
  public var displayPath: String
  /// Whether warnings counted as errors.
  public var strict: Bool
  /// `--keep`, for the line about removed versions.
  public var keep: Int?

  /// The report of `result`, whose package was named `displayPath`.
  public init(_ result: Install.Result, displayPath: String, strict: Bool, keep: Int?) {
    self.result = result
    self.displayPath = displayPath
    self.strict = strict
    self.keep = keep
  }

  /// The `--json` object.
  public struct Document: Encodable {
    var action: String
    var productIdentifier: String?
    var contentVersion: String?
    var previousVersion: String?
    var path: String?
    var removed: [String]
    var sha256: String?
    var replacedSHA256: String?
    var findings: [Finding]
  }

  /// What `--json` encodes.
  public var document: Document {
    Document(
      action: result.action.rawValue, productIdentifier: result.productIdentifier,
      contentVersion: result.version?.description, previousVersion: result.previous?.description, path: result.path,
      removed: result.removed, sha256: result.sha256, replacedSHA256: result.replacedSHA256,
      findings: result.inspection?.findings ?? [])
  }

  /// "com.example.book 1.1".
  private var name: String { "\(result.productIdentifier ?? "?") \(result.version?.description ?? "?")" }

  /// Lines for people, each ending in a newline.
  public var text: String {
    var out = ""
    if let inspection = result.inspection, !inspection.findings.isEmpty {
      out += findingLines(inspection, displayPath: displayPath, strict: strict)
    }
    switch result.action {
    case .installed:
      out += "installed \(name) into \(result.path ?? "")/\(result.previous.map { " (was \($0))" } ?? "")\n"
    case .replaced:
      out += "replaced \(name) in \(result.path ?? "")/: the same version, from other bytes\n"
    case .alreadyCurrent:
      out +=
        "\(name) is already installed from these same bytes and is current\(result.removed.isEmpty ? "; nothing to do" : "")\n"
    case .refusedDowngrade, .invalid, .refusedByCatalog: break
    }
    if !result.removed.isEmpty {
      out +=
        "removed \(result.removed.count == 1 ? "an older version" : "older versions") beyond --keep \(keep ?? 0): \(result.removed.joined(separator: ", "))\n"
    }
    return out
  }

  /// The warning when the same version was installed again from other bytes
  /// (``Install/Action/replaced``).
  public var replacedWarning: String {
    "\(name) was already installed from a package with other bytes (SHA-256 \(result.replacedSHA256 ?? "unknown") → \(result.sha256 ?? "?")); the folder was replaced in one step. Raise ContentVersion when the content changes."
  }
}
