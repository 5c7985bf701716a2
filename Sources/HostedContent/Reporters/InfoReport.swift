import Foundation

/// What `info` prints about a package: its format, product, version, sizes, checksums, SHA-256
/// and verdict, and with `--files` a line per entry. For input that is not a package at all it
/// prints what `validate` does (``PackageInfo/Summary/unreadable``).
public struct InfoReport: OperationReport {
  /// What `info` found.
  public var info: PackageInfo.Summary
  /// The input as the user named it, for the findings' lines.
  public var displayPath: String

  /// The report of `info`, whose input was named `displayPath`.
  public init(_ info: PackageInfo.Summary, displayPath: String) {
    self.info = info
    self.displayPath = displayPath
  }

  /// What `--json` encodes: the summary itself.
  public var document: PackageInfo.Summary { info }

  /// Lines for people, each ending in a newline.
  public var text: String {
    // Not a package: the same lines as validate and unpack.
    if info.unreadable { return findingLines(info.inspection, displayPath: displayPath, strict: false) }
    var out = ""
    out += "package      \(info.path.debugEscapedForTerminal)\n"
    out += "format       \(info.format)\n"
    if let pack = info.assetPackID, info.productIdentifier == nil {
      // An asset pack has an ID and no version of its own.
      out += "asset pack   \(pack.debugEscapedForTerminal)\n"
    } else {
      out += "product      \(info.productIdentifier ?? "(unknown)")\n"
      out += "version      \(info.contentVersion ?? "(unknown)")\n"
    }
    out += "entries      \(info.entryCount) (\(info.fileCount) files)\n"
    out += "content      \(describeBytes(info.contentSize))\n"
    if let size = info.packageSize { out += "package size \(describeBytes(size))\n" }
    if let stored = info.storedSize, let percent = info.storedPercent {
      out +=
        "compression  content \(groupedDigits(info.contentSize)) → \(groupedDigits(stored)) bytes stored (\(String(format: "%.1f", percent))%)\n"
    }
    if let overhead = info.overheadSize {
      out += "overhead     \(groupedDigits(overhead)) bytes of header, table of contents and entry headers\n"
    }
    out += "checksums    \(info.checksumStyle)\n"
    if let sha = info.sha256 { out += "sha256       \(sha)\n" }
    let errors = info.findings.filter { $0.severity == .error }.count
    out +=
      "valid        \(info.valid ? "yes" : "no (\(errors) \(errors == 1 ? "error" : "errors"); run pkgtool validate)")\n"
    if let rows = info.files {
      out += "\n"
      for row in rows {
        let stored = row.storedSize.map(String.init) ?? "-"
        out +=
          "\(row.mode) \(row.kind.padding(9)) \(String(row.size).leftPadding(12)) \(stored.leftPadding(12)) \((row.encoding ?? "-").padding(6)) \(row.sha256 ?? "-".padding(64)) \(row.path.debugEscapedForTerminal)\(row.linkTarget.map { " -> \($0.debugEscapedForTerminal)" } ?? "")\n"
      }
    }
    return out
  }
}
