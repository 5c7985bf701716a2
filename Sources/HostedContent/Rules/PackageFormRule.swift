import SystemIO

/// `package-form`: the file's name and its bytes agree on what it is. `.pkg` is a XAR (plain or
/// an Apple flat package), `.zip` the delivery zip; a tar is never a package (its unpacked folder
/// is what `build` reads); and a file whose bytes parse as two formats is refused whatever its name.
package final class PackageFormRule: Rule {
  package static let description = RuleDescription(
    id: "package-form", name: "Package form", category: .archive,
    headline:
      "The file's name and its bytes disagree (.pkg must be a XAR, .zip the delivery zip), or the bytes parse as two formats.",
    summary:
      "The name and the bytes disagree: .pkg must be a XAR (plain or flat package), .zip the delivery zip; a tar is no package (build its unpacked folder); a file that parses as two formats.",
    rationale:
      "Each reader picks a format its own way: a tar or zip named .pkg, or a XAR that is also a tar, is checked as one thing and extracted as another by bsdtar, Xcode or the device.",
    securitySeverity: 6.5,
    details: [
      "(Was `package-extension`.) Compares the name with the bytes: `.pkg` must be a XAR (plain or an Apple flat package), `.zip` the delivery zip. A tar is never a package, nor a `build` input: `build` reads its unpacked folder (`pkgtool build x.tar` says so). The format is sniffed from the first 512 bytes, XAR first; a file whose bytes carry two signatures (a `xar!` file with a tar header, a zip that is also a tar) is refused whatever its name, because bsdtar, Xcode and the device would each read a different archive from it."
    ],
    triggering: [
      RuleExample.package("tar named .pkg").with {
        $0.packageFormat = .tar
        $0.appliesToFolders = false
      },
      RuleExample.package("zip named .pkg").with {
        $0.packageFormat = .zip
        $0.appliesToFolders = false
      },
      RuleExample.package("XAR named .zip").with {
        $0.packageFileName = "content.zip"
        $0.appliesToFolders = false
      },
      RuleExample.package("tar named .tar").with {
        $0.packageFormat = .tar
        $0.packageFileName = "content.tar"
        $0.appliesToFolders = false
      },
      RuleExample.package("XAR with another extension").with {
        $0.packageFileName = "content.xar"
        $0.appliesToFolders = false
      },
    ],
    nonTriggering: [
      RuleExample.package("XAR named .pkg"),
      RuleExample.package("upper case .PKG").with { $0.packageFileName = "CONTENT.PKG" },
      RuleExample.package("delivery zip named .zip").with {
        $0.packageFormat = .zip
        $0.packageFileName = "content.zip"
      },
    ])

  private let fileName: String?

  package init(context: RuleContext) { fileName = context.packageFileName }

  /// A folder has no name to agree with; an Apple Archive does (`.aar`).
  package static func skipReason(_ context: RuleContext) -> String? {
    context.sourceFormat == .assetPack ? context.hostedContentOnly : nil
  }

  /// What a file named `fileName` must be, in words, or nil for any name.
  static func expectedForms(for fileName: String) -> (forms: Set<PackageFormat>, words: String)? {
    let lower = fileName.lowercased()
    if lower.hasSuffix(".pkg") { return ([.xar, .flatPackage], "a XAR package (plain or an Apple flat package)") }
    if lower.hasSuffix(".zip") { return ([.zip], "the delivery zip") }
    if lower.hasSuffix(".aar") { return ([.appleArchive], "an Apple Archive (a Background Assets asset pack)") }
    return nil
  }

  package func finish(_ summary: InspectionSummary, into findings: inout [Finding]) {
    guard let fileName, summary.format != .directory else { return }
    if !summary.otherForms.isEmpty {
      let others = summary.otherForms.map(\.displayName).joined(separator: " and ")
      findings.append(
        finding(
          nil,
          "'\(fileName)' is a \(summary.format.displayName) and also parses as a \(others): readers disagree on what it holds",
          hint: "build the package again with pkgtool build; never accept a file that is two archives at once"))
    }
    if summary.format == .tar {
      findings.append(
        finding(
          nil, "'\(fileName)' is a tar archive, which is not a package form",
          hint:
            "unpack it into a folder (tar -xf), then run `pkgtool build` on the folder to make a .pkg (or --format zip)"
        ))
      return
    }
    // Standard input has no name to agree with its bytes (its form is sniffed from them).
    if fileName == StandardInput.displayName { return }
    guard let expected = PackageFormRule.expectedForms(for: fileName) else {
      findings.append(
        finding(
          nil,
          "'\(fileName)' is a \(summary.format.displayName), but a package file must be named .pkg (a XAR) or .zip (the delivery zip)",
          hint: Self.renameHint(summary.format)))
      return
    }
    if !expected.forms.contains(summary.format) {
      findings.append(
        finding(
          nil, "'\(fileName)' is named as \(expected.words), but its bytes are a \(summary.format.displayName)",
          hint: Self.renameHint(summary.format)))
    }
  }

  private static func renameHint(_ format: PackageFormat) -> String {
    switch format {
    case .zip: return "rename it to end in .zip"
    case .appleArchive: return "rename it to end in .aar"
    default: return "rename it to end in .pkg"
    }
  }
}
