import Foundation

/// `init`: a new content project. The texts here are the files in the repository's
/// `templates/` folder (a test keeps them equal); they are compiled in so an installed binary
/// needs no resource files.
public enum ProjectTemplate {
  /// `templates/ContentInfo.plist`: `{{IAPProductIdentifier}}` and `{{ContentVersion}}` are
  /// replaced.
  public static let contentInfo = """
    <?xml version="1.0" encoding="UTF-8"?>
    <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
    <plist version="1.0">
    <dict>
    \t<key>ContentVersion</key>
    \t<string>{{ContentVersion}}</string>
    \t<key>IAPProductIdentifier</key>
    \t<string>{{IAPProductIdentifier}}</string>
    </dict>
    </plist>

    """

  /// The template plist filled in. Product identifiers and versions hold no XML specials.
  public static func contentInfo(productIdentifier: String, version: ContentVersion) -> String {
    contentInfo.replacingOccurrences(of: "{{IAPProductIdentifier}}", with: productIdentifier)
      .replacingOccurrences(of: "{{ContentVersion}}", with: version.description)
  }

  /// The README written for content authors.
  public static let readme = """
    # Hosted content project

    This folder is an In-App Purchase hosted-content project:

    - `ContentInfo.plist` names the product (`IAPProductIdentifier`) and the version of its
      content (`ContentVersion`). Raise the version with every update: `pkgtool bump .`
    - `Contents/` holds the files the app receives, in any folder structure. No executable code,
      no symlinks that point outside `Contents/`, at most 2 GB in all.

    Build and check the package:

        pkgtool build . -o ../PRODUCT-VERSION.pkg
        pkgtool validate ../PRODUCT-VERSION.pkg

    Files such as `.DS_Store` are left out of the package automatically.

    """

  /// Creates `directory` (which must not exist, or be empty) with a plist, `Contents/` and a README.
  public static func create(at directory: String, productIdentifier: String, version: ContentVersion) throws {
    if let problem = ProductIdentifier.problem(with: productIdentifier) {
      throw OperationError("--product-id: \(problem)")
    }
    let parentPath = Paths.parent(of: directory)
    let name = Paths.name(of: directory)
    let parent: DirectoryHandle
    do { parent = try DirectoryHandle(path: parentPath) } catch {
      throw OperationError("cannot create '\(directory)': the folder '\(parentPath)' does not exist", hint: "create it first")
    }
    if parent.exists(name) {
      let existing = try? parent.openDirectory(name)
      guard let existing, (try? existing.list())?.isEmpty == true else {
        throw OperationError("'\(directory)' already exists and is not an empty folder", hint: "choose a new folder name")
      }
      try parent.removeTree(name)
    }
    let staging = try StagingFolder(in: parent, for: name, purpose: "init")
    let plist = try staging.handle.createFile(ContentInfo.fileName)
    try plist.write(Array(contentInfo(productIdentifier: productIdentifier, version: version).utf8))
    try staging.handle.createDirectory("Contents")
    let readmeFile = try staging.handle.createFile("README.md")
    try readmeFile.write(Array(readme.utf8))
    try staging.publish(as: name, replace: false)
  }
}
