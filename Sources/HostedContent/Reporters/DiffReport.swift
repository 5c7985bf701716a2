/// What `diff` prints: the version, the files added, removed and changed, the content size, and
/// the warnings (``PackageDiff/Result/warnings``).
public struct DiffReport: OperationReport {
  /// The comparison.
  public var diff: PackageDiff.Result

  /// The report of `diff`.
  public init(_ diff: PackageDiff.Result) { self.diff = diff }

  /// What `--json` encodes: the result itself.
  public var document: PackageDiff.Result { diff }

  /// Lines for people, each ending in a newline.
  public var text: String {
    let d = diff
    var out = ""
    let packs = d.oldProduct == nil && d.newProduct == nil && (d.oldAssetPackID != nil || d.newAssetPackID != nil)
    if packs {
      // Asset packs: their IDs, and no version (a pack has none of its own).
      let old = (d.oldAssetPackID ?? "?").debugEscapedForTerminal
      let new = (d.newAssetPackID ?? "?").debugEscapedForTerminal
      out += "asset pack: \(old == new ? new : "\(old) → \(new)")\n"
    } else {
      if d.oldProduct != d.newProduct {
        out += "product: \(d.oldProduct ?? "?") → \(d.newProduct ?? "?")\n"
      } else {
        out += "product: \(d.newProduct ?? "?")\n"
      }
      out += "version: \(d.oldVersion ?? "?") → \(d.newVersion ?? "?")\n"
    }
    for c in d.added { out += "+ \(c.path.debugEscapedForTerminal) (\(describeBytes(c.newSize ?? 0)))\n" }
    for c in d.removed { out += "- \(c.path.debugEscapedForTerminal) (\(describeBytes(c.oldSize ?? 0)))\n" }
    for c in d.changed {
      let size =
        c.oldSize == c.newSize
        ? "same size, \(describeBytes(c.newSize ?? 0))"
        : "\(describeBytes(c.oldSize ?? 0)) → \(describeBytes(c.newSize ?? 0))"
      out += "~ \(c.path.debugEscapedForTerminal) (\(c.what.joined(separator: ", ")); \(size))\n"
    }
    out += "\(d.added.count) added, \(d.removed.count) removed, \(d.changed.count) changed\n"
    out +=
      "content: \(Self.sizeChange(d.sizeDelta)): \(describeBytes(d.oldContentSize)) → \(describeBytes(d.newContentSize))\n"
    for warning in d.warnings { out += "warning: \(warning)\n" }
    return out
  }

  /// The change of size in words: "grew by 1,234 bytes (1.2 kB)", "shrank by …", "unchanged".
  static func sizeChange(_ delta: Int64) -> String {
    if delta == 0 { return "size unchanged" }
    return (delta > 0 ? "grew by " : "shrank by ") + describeBytes(delta.magnitude)
  }
}
