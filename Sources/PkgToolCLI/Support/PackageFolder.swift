import HostedContent
import SystemIO

/// What a folder named as an input means: a content project, an asset-pack folder, or a folder
/// of packages (a `dist/` a pipeline filled), which stands for every package in it.
enum PackageFolder {
  /// The extensions a package file has (an `.aar` is an asset pack).
  static let packageExtensions: Set<String> = ["pkg", "zip", "aar"]

  /// `paths` with each folder of packages replaced by its packages (sorted by name); files,
  /// projects and asset-pack folders stay as they are. A folder that is none of these is an
  /// error that says what was expected.
  static func expand(_ paths: [String]) throws -> [String] {
    var expanded: [String] = []
    for path in paths {
      guard Paths.isDirectory(path), !isContentFolder(path) else {
        expanded.append(path)
        continue
      }
      let names: [(name: String, validUTF8: Bool)]
      do { names = try DirectoryHandle(path: path).list() } catch { throw OperationError.wrap(error) }
      let packages = names.filter { entry in
        guard let dot = entry.name.lastIndex(of: "."), entry.name.first != "." else { return false }
        return packageExtensions.contains(entry.name[entry.name.index(after: dot)...].lowercased())
      }.map(\.name).sorted { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) }
      let prefix = path.hasSuffix("/") ? path : path + "/"
      let files = packages.map { prefix + $0 }.filter { Paths.isRegularFile($0) }
      guard !files.isEmpty else {
        throw OperationError(
          "'\(path)' is neither a content project (it has no ContentInfo.plist or Contents/ folder) nor a folder of packages (it holds no .pkg, .zip or .aar file)",
          hint:
            "pass a content project (pkgtool init makes one), a package, or a folder of packages; to check a plain folder of content, build it with --product-id and --content-version and validate the package"
        )
      }
      expanded += files
    }
    return expanded
  }

  /// A folder that is itself the input: a project (ContentInfo.plist or Contents/) or an
  /// asset-pack folder (Manifest.json).
  static func isContentFolder(_ path: String) -> Bool {
    Paths.isRegularFile(path + "/ContentInfo.plist") || Paths.isDirectory(path + "/Contents")
      || Paths.isRegularFile(path + "/Manifest.json")
  }
}
