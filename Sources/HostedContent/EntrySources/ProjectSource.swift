import SystemIO
import XAR

/// The package view of a folder: `ContentInfo.plist` (read, overridden or generated) and
/// `Contents/`, junk left out, hard links as plain files, modes normalized (0644 files,
/// 0755 folders), never following symlinks. Entries come sorted by name bytes, so the order
/// never depends on the file system.
///
/// `validate`, `info` and `diff` read a project folder through the same view, so a project and
/// the package built from it get the same verdict.
package final class ProjectSource: EntrySource {
  package let format = PackageFormat.directory
  package let location: String
  package let packageSize: UInt64? = nil
  /// The product and version the package gets.
  package let contentInfo: ContentInfo
  /// The plist bytes that go into the package.
  let plistBytes: [UInt8]
  /// True for a content project; false for a plain folder (everything goes under Contents/).
  package let isProject: Bool
  package private(set) var leftOut: [LeftOutPath] = []
  /// The output package, left out of the walk when it is written inside the folder.
  var excludedOutput: (device: UInt64, inode: UInt64, name: String)?

  /// True when `directory` is a content project: its `ContentInfo.plist` is a regular file.
  package static func isProject(_ directory: String) -> Bool {
    Paths.isRegularFile(directory + "/" + ContentInfo.fileName)
  }

  /// - Parameters:
  ///   - productIdentifier: for a plain folder, the product; for a project, overrides the plist's.
  ///   - contentVersion: for a plain folder, the version; for a project, overrides the plist's.
  package init(directory: String, productIdentifier: String? = nil, contentVersion: String? = nil) throws {
    let options = (productIdentifier: productIdentifier, contentVersion: contentVersion)
    location = directory
    let root = try DirectoryHandle(path: directory)
    isProject = root.exists(ContentInfo.fileName)
    if isProject {
      let file: FileDescriptor
      do { file = try root.openFile(ContentInfo.fileName) } catch { throw OperationError.wrap(error) }
      let bytes = try file.read(count: PropertyList.maxEncodedSize + 1, at: 0)
      var info: ContentInfo
      do {
        info = try ContentInfo(decoding: bytes)
      } catch {
        // The content-info rule reports every problem; a name is still needed for the output.
        contentInfo = ContentInfo(
          productIdentifier: options.productIdentifier ?? "invalid",
          contentVersion: options.contentVersion.flatMap(ContentVersion.init) ?? ContentVersion(components: [0]))
        plistBytes = bytes
        return
      }
      var changed = false
      if let product = options.productIdentifier, product != info.productIdentifier {
        info.productIdentifier = product
        changed = true
      }
      if let text = options.contentVersion {
        guard let version = ContentVersion(text) else {
          throw OperationError("--content-version: \(ContentVersion.problem(with: text)!)")
        }
        info.contentVersion = version
        changed = true
      }
      contentInfo = info
      plistBytes = changed ? info.encoded() : bytes
    } else {
      guard let product = options.productIdentifier, let versionText = options.contentVersion else {
        throw OperationError(
          "'\(directory)' has no ContentInfo.plist",
          hint: "pass --product-id and --content-version to package a plain folder, or run `pkgtool init`")
      }
      if let problem = ProductIdentifier.problem(with: product) { throw OperationError("--product-id: \(problem)") }
      guard let version = ContentVersion(versionText) else {
        throw OperationError("--content-version: \(ContentVersion.problem(with: versionText)!)")
      }
      contentInfo = ContentInfo(productIdentifier: product, contentVersion: version)
      plistBytes = contentInfo.encoded()
    }
  }

  /// In-memory bytes as entry data.
  private final class Bytes: EntryData {
    var source: XARBytes
    init(_ bytes: [UInt8]) { source = XARBytes(bytes) }
    func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int { try source.read(into: buffer) }
  }

  package func forEachEntry(_ visit: (PackageEntry, EntryData?) throws -> Void) throws {
    leftOut = []
    try visit(
      PackageEntry(path: ContentInfo.fileName, kind: .file, mode: 0o644, size: UInt64(plistBytes.count)),
      Bytes(plistBytes))
    let contentRoot = isProject ? location + "/Contents" : location
    if isProject {
      let root = try DirectoryHandle(path: location)
      for (name, _) in try root.list() where name != ContentInfo.fileName && name != "Contents" {
        leftOut.append(LeftOutPath(path: name, reason: JunkFileRule.isJunk(Substring(name)) ? .junk : .outsideContent))
      }
      guard root.exists("Contents") else { return }  // the layout rule reports it
      let info = try root.status("Contents")
      guard Paths.isDirectoryMode(info.st_mode) else {
        try visit(PackageEntry(path: "Contents", kind: .file, mode: 0o644), nil)
        return
      }
    }
    try visit(PackageEntry(path: "Contents", kind: .directory, mode: 0o755), nil)
    let walker = DirectorySource(path: contentRoot, skipJunk: true, hardLinksAsFiles: true)
    walker.excludedOutput = excludedOutput
    try walker.forEachEntry { entry, data in
      var e = entry
      e.path = "Contents/" + entry.path
      switch e.kind {
      case .file: e.mode = 0o644
      case .directory, .symlink: e.mode = 0o755
      default: break  // special files keep their kind and mode: the rules refuse them
      }
      try visit(e, data)
    }
    leftOut += walker.skipped.map { LeftOutPath(path: (isProject ? "Contents/" : "") + $0, reason: .junk) }
  }
}
