/// A small package tree that a rule must or must not report. Test support builds each example
/// into a real package (and, where it makes sense, a real folder) and runs the rule on it.
public struct RuleExample: Sendable {
  /// One node of an example tree. A path may end in `#2` to mean the same path stored a second
  /// time (possible in packages only).
  public struct Node: Sendable, Equatable {
    /// What a node is.
    public enum Content: Sendable, Equatable {
      /// A file with these bytes.
      case file([UInt8])
      /// A folder.
      case directory
      /// A symlink to this target.
      case symlink(String)
      /// A hard link to this path.
      case hardLink(String)
      /// A named pipe.
      case fifo
      /// A character device.
      case characterDevice
    }
    /// Its path in the package.
    public var path: String
    /// What it is.
    public var content: Content
    /// Its permission bits.
    public var mode: UInt32

    /// A node; the mode defaults to 0644 for files and 0755 for folders.
    public init(_ path: String, _ content: Content, mode: UInt32? = nil) {
      self.path = path
      self.content = content
      switch content {
      case .directory: self.mode = mode ?? 0o755
      case .symlink: self.mode = mode ?? 0o755
      default: self.mode = mode ?? 0o644
      }
    }

    /// A text file.
    public static func file(_ path: String, _ text: String, mode: UInt32? = nil) -> Node {
      Node(path, .file(Array(text.utf8)), mode: mode)
    }
    /// A file with these bytes.
    public static func file(_ path: String, bytes: [UInt8], mode: UInt32? = nil) -> Node {
      Node(path, .file(bytes), mode: mode)
    }
    /// A folder.
    public static func directory(_ path: String, mode: UInt32? = nil) -> Node { Node(path, .directory, mode: mode) }
    /// A symlink.
    public static func symlink(_ path: String, _ target: String) -> Node { Node(path, .symlink(target)) }
  }

  /// Damage done to the built package file, for integrity examples.
  public enum Damage: Sendable, Equatable {
    /// Keep only the first `n` bytes.
    case truncate(keeping: Int)
    /// Flip the last byte of the file (inside the last entry's data).
    case flipLastByte
    /// Replace the whole file with these bytes.
    case replace([UInt8])
  }

  /// How the example is named in test output and docs/rules.md.
  public var name: String
  /// The tree.
  public var nodes: [Node]
  /// The package's file name (the `package-form` rule reads it).
  public var packageFileName = "example.pkg"
  /// The container the example is built into (tar can say what XAR cannot, such as a hard link
  /// to a path outside the package).
  public var packageFormat = PackageFormat.xar
  /// The options of the validation.
  public var options = ValidationOptions()
  /// A previous version for `--against`: product and version.
  public var previous: (product: String, version: String)? = nil
  /// Bytes changed after the package is written.
  public var damage: Damage? = nil
  /// False when the example only makes sense as a package file (names, damage).
  public var appliesToFolders = true
  /// False when the example only makes sense as a folder (Background Assets asset packs).
  public var appliesToPackages = true
  /// The path the finding must name (nil: any or none).
  public var expectedPath: String? = nil

  /// An example of `nodes`.
  public init(_ name: String, nodes: [Node]) {
    self.name = name
    self.nodes = nodes
  }

  /// The standard valid package: `ContentInfo.plist`, `Contents/`, a text file.
  public static let baseNodes: [Node] = [
    .file(
      ContentInfo.fileName,
      String(
        decoding: ContentInfo(productIdentifier: "com.example.sample", contentVersion: ContentVersion("1.0")!)
          .encoded(), as: UTF8.self)),
    .directory("Contents"),
    .file("Contents/readme.txt", "Chapter one.\n"),
  ]

  /// The standard package with `nodes` added (replacing nodes at the same paths).
  public static func package(
    _ name: String, adding nodes: [Node] = [], removing: Set<String> = [], expecting path: String? = nil
  ) -> RuleExample {
    let replaced = Set(nodes.map(\.path))
    var example = RuleExample(
      name, nodes: baseNodes.filter { !replaced.contains($0.path) && !removing.contains($0.path) } + nodes)
    example.expectedPath = path
    return example
  }

  /// A valid asset-pack manifest selecting `levels/` and `intro.txt`.
  public static let assetPackManifest = """
    {"assetPackID": "com-example-levels", "downloadPolicy": {"prefetch": {"installationEventTypes": ["firstInstallation", "subsequentUpdate"]}},
     "fileSelectors": [{"directory": "levels"}, {"file": "intro.txt"}], "platforms": ["iOS", "macOS"]}
    """

  /// A Background Assets asset-pack folder: `Manifest.json` (``assetPackManifest`` unless
  /// given), `intro.txt` and `levels/1.json`, with `nodes` added. Folders only.
  public static func assetPack(
    _ name: String, manifest: String? = nil, adding nodes: [Node] = [], removing: Set<String> = [],
    expecting path: String? = nil
  ) -> RuleExample {
    let base: [Node] = [
      .file("Manifest.json", manifest ?? assetPackManifest), .file("intro.txt", "Welcome.\n"), .directory("levels"),
      .file("levels/1.json", "{}"),
    ]
    let replaced = Set(nodes.map(\.path))
    var example = RuleExample(
      name, nodes: base.filter { !replaced.contains($0.path) && !removing.contains($0.path) } + nodes)
    example.expectedPath = path
    example.appliesToPackages = false
    return example
  }

  /// A copy with other settings.
  public func with(_ change: (inout RuleExample) -> Void) -> RuleExample {
    var copy = self
    change(&copy)
    return copy
  }
}
