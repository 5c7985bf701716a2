/// What `root show` prints: a root's version, expiry and roles (``summary(_:)``), then the key
/// ids of each role and how many must sign, none of it verified.
public struct RootShowReport: OperationReport {
  /// The root, as the file says (``RootFile/parse(contentsOf:)``).
  public var root: Root
  /// The file as the user named it.
  public var displayPath: String

  /// The report of `root`, read unverified from the file named `displayPath`.
  public init(_ root: Root, displayPath: String) {
    self.root = root
    self.displayPath = displayPath
  }

  /// What `--json` encodes: the root itself.
  public var document: Root { root }

  /// Lines for people, each ending in a newline.
  public var text: String {
    var text = "\(displayPath): root \(Self.summary(root)) (not verified here)\n"
    for (name, role) in [("root", root.roles.root), ("catalog", root.roles.catalog)] {
      text += "\(name) keys (\(role.threshold) must sign): \(role.keyIds.joined(separator: ", "))\n"
    }
    return text
  }

  /// "version 2, expires …, root 1 of 2 key(s), catalog 1 of 1 key(s)": what `root init`,
  /// `rotate`, `show` and `verify` say of a root.
  public static func summary(_ root: Root) -> String {
    "version \(root.version), expires \(root.expires), root \(root.roles.root.threshold) of \(root.roles.root.keyIds.count) key(s), catalog \(root.roles.catalog.threshold) of \(root.roles.catalog.keyIds.count) key(s)"
  }
}
