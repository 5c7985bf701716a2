import Foundation
import SystemIO

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

  /// `templates/README.md`, written for content authors: `{{IAPProductIdentifier}}`,
  /// `{{ContentVersion}}` and `{{ProjectFolder}}` are replaced.
  public static let readme = """
    # {{IAPProductIdentifier}}

    This folder is the In-App Purchase hosted-content project of `{{IAPProductIdentifier}}`,
    made by `pkgtool init` at version {{ContentVersion}}:

    - `ContentInfo.plist` names the product (`IAPProductIdentifier`) and the version of its
      content (`ContentVersion`). Raise the version with every update: `pkgtool bump {{ProjectFolder}}`
    - `Contents/` holds the files the app receives, in any folder structure. No executable code,
      no symlinks that point outside `Contents/`, at most 2 GB in all.

    Check the project, then build and check the package (from the folder that holds this one):

        pkgtool validate {{ProjectFolder}}
        pkgtool build {{ProjectFolder}}          # -> {{IAPProductIdentifier}}-{{ContentVersion}}.pkg
        pkgtool validate {{IAPProductIdentifier}}-{{ContentVersion}}.pkg

    After `pkgtool bump`, the package name follows the new version.

    Only `ContentInfo.plist` and `Contents/` go into the package: this README and anything else
    beside them are left out (validate names them in its summary, and warns about a file that
    looks like content), and so are junk files such as `.DS_Store` anywhere.

    """

  /// The README filled in.
  public static func readme(productIdentifier: String, version: ContentVersion, folder: String) -> String {
    readme.replacingOccurrences(of: "{{IAPProductIdentifier}}", with: productIdentifier)
      .replacingOccurrences(of: "{{ContentVersion}}", with: version.description)
      .replacingOccurrences(of: "{{ProjectFolder}}", with: folder)
  }

  /// Creates `directory` (which must not exist, or be empty) with a plist, `Contents/` and a README.
  public static func create(at directory: String, productIdentifier: String, version: ContentVersion) throws {
    if let problem = ProductIdentifier.problem(with: productIdentifier) {
      throw OperationError("--product-id: \(problem)", code: .invalidArgument)
    }
    let parentPath = Paths.parent(of: directory)
    let name = Paths.name(of: directory)
    let parent: DirectoryHandle
    do { parent = try DirectoryHandle(path: parentPath) } catch {
      throw OperationError(
        "cannot create '\(directory)': the folder '\(parentPath)' does not exist", hint: "create it first",
        code: .outputUnwritable)
    }
    let files: [(name: String, bytes: [UInt8]?)] = [
      (ContentInfo.fileName, Array(contentInfo(productIdentifier: productIdentifier, version: version).utf8)),
      ("Contents", nil),
      (
        "README.md",
        Array(
          readme(
            productIdentifier: productIdentifier, version: version, folder: Paths.name(of: Paths.absolute(directory))
          ).utf8)
      ),
    ]
    if parent.exists(name) {
      // An existing empty folder (`init .` among them) is filled in place: the files are
      // made in a staging folder inside it, then renamed up one by one.
      let existing = try? parent.openDirectory(name)
      guard let existing, (try? existing.list())?.isEmpty == true else {
        throw OperationError(
          "'\(directory)' already exists and is not an empty folder", hint: "choose a new folder name",
          code: .outputExists)
      }
      let staging = try PendingFolder(in: existing, for: "project", purpose: "init")
      defer { staging.discard() }
      try write(files, into: staging.handle)
      for file in files { try staging.handle.rename(file.name, to: file.name, in: existing) }
      return
    }
    let staging = try PendingFolder(in: parent, for: name, purpose: "init")
    try write(files, into: staging.handle)
    try staging.publish(as: name, replace: false)
  }

  private static func write(_ files: [(name: String, bytes: [UInt8]?)], into folder: DirectoryHandle) throws {
    for file in files {
      if let bytes = file.bytes {
        try folder.createFile(file.name).write(bytes)
      } else {
        try folder.createDirectory(file.name)
      }
    }
  }
}
