import Foundation
import HostedContent
import XAR

extension HostilePackage {
  /// Projects and asset packs with ignore files, exclusions and export inputs.
  ///
  /// Empty on purpose: the hostile inputs of this round are projects with a side file (an ignore
  /// file excluding ContentInfo.plist or Contents/, patterns with `..`, a trailing backslash, an
  /// ignore file that is a FIFO) and asset-pack folders (a malformed Manifest.json, Mach-O code),
  /// which are refused with an error (exit 2) or judged as folders, not package files a rule
  /// reports. The `HostilePackage` shape (one package file, one rule finding) cannot express
  /// them; they are in Tests/PkgToolCLITests/ExcludeTests.swift and ExportAssetPackTests.swift.
  static let round3Exclude: [HostilePackage] = []
}
