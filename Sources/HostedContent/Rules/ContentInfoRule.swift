/// `content-info`: `ContentInfo.plist` is present, a valid plist dictionary with a well-formed
/// `ContentVersion` and `IAPProductIdentifier` (matching `--product-id` when given).
package final class ContentInfoRule: Rule {
  package static let description = RuleDescription(
    id: "content-info", name: "ContentInfo.plist", category: .layout,
    headline: "ContentInfo.plist missing or malformed, or its ContentVersion or IAPProductIdentifier missing or wrong.",
    summary:
      "Missing or malformed plist, root not a dictionary, ContentVersion or IAPProductIdentifier missing, of the wrong type or malformed (the product ID must be reverse-DNS labels of letters, digits and _, none empty; it becomes a folder name on install); product ID different from --product-id.",
    rationale:
      "The store and the client read the product and version from this file; without it the package cannot be matched to its In-App Purchase.",
    details: [
      "Checks the product ID strictly, since `install` turns it into a folder name: reverse-DNS labels of ASCII letters, digits and `_`, separated by single periods, no empty label (so no leading, trailing or doubled period, no `.` or `..`), at most 255 bytes. Versions are one to three parts of at most 18 digits each."
    ],
    triggering: [
      RuleExample.package("no plist", removing: [ContentInfo.fileName]),
      RuleExample.package(
        "not a plist", adding: [.file(ContentInfo.fileName, "ContentVersion = 1.0")], expecting: ContentInfo.fileName),
      RuleExample.package(
        "version not a number",
        adding: [.file(ContentInfo.fileName, plist(version: "one", product: "com.example.sample"))],
        expecting: ContentInfo.fileName),
      RuleExample.package(
        "bad product id", adding: [.file(ContentInfo.fileName, plist(version: "1.0", product: "com example"))],
        expecting: ContentInfo.fileName),
      RuleExample.package(
        "product id '..'", adding: [.file(ContentInfo.fileName, plist(version: "1.0", product: ".."))],
        expecting: ContentInfo.fileName),
      RuleExample.package("other product").with { $0.options.productIdentifier = "com.example.other" },
    ],
    nonTriggering: [
      RuleExample.package("valid plist"),
      RuleExample.package("matching product").with { $0.options.productIdentifier = "com.example.sample" },
      RuleExample.package(
        "extra keys",
        adding: [
          .file(
            ContentInfo.fileName,
            plist(version: "1.2.3", product: "com.example.sample", extra: "<key>Folder</key><string>Ch1</string>"))
        ]),
    ])

  private let expectedProduct: String?
  /// The folder that holds a `ContentInfo.plist` one level down (a project folder archived
  /// whole), if any.
  private var nestedIn: String?

  package init(context: RuleContext) { expectedProduct = context.options.productIdentifier }

  package func inspect(_ inspected: InspectedEntry, into findings: inout [Finding]) {
    let entry = inspected.entry
    guard nestedIn == nil, !entry.isWrapperMember, entry.kind == .file else { return }
    // Only a path whose bytes end in the name can have it as its last component (no other
    // characters are canonically equivalent to its ASCII), so most entries stop here.
    let name = ContentInfo.fileName.utf8
    guard entry.path.utf8.count > name.count, entry.path.utf8.suffix(name.count).elementsEqual(name) else { return }
    let parts = entry.components
    if parts.count == 2, parts[1] == ContentInfo.fileName { nestedIn = String(parts[0]) }
  }

  package static func skipReason(_ context: RuleContext) -> String? { context.hostedContentOnly }

  static func plist(version: String, product: String, extra: String = "") -> String {
    """
    <?xml version="1.0" encoding="UTF-8"?>
    <plist version="1.0"><dict><key>ContentVersion</key><string>\(version)</string>\
    <key>IAPProductIdentifier</key><string>\(product)</string>\(extra)</dict></plist>
    """
  }

  package func finish(_ summary: InspectionSummary, into findings: inout [Finding]) {
    guard !summary.integrityFailed else { return }
    guard let bytes = summary.contentInfoBytes else {
      if let folder = nestedIn {
        findings.append(
          finding(
            nil, "ContentInfo.plist is missing at the package root; there is one in '\(folder)/', one level down",
            hint: "package what is inside '\(folder)', not the folder itself: pkgtool build \(folder)"))
      } else {
        findings.append(
          finding(
            nil, "ContentInfo.plist is missing at the package root",
            hint: "add one with ContentVersion and IAPProductIdentifier (pkgtool init makes one)"))
      }
      return
    }
    do {
      let info = try ContentInfo(decoding: bytes)
      if let expectedProduct, expectedProduct != info.productIdentifier {
        findings.append(
          finding(
            ContentInfo.fileName,
            "the product identifier is '\(info.productIdentifier)', expected '\(expectedProduct)'",
            hint: "build the package for the right product, or fix --product-id"))
      }
    } catch let error as ContentInfoError {
      for problem in error.problems {
        findings.append(
          finding(ContentInfo.fileName, problem, hint: "see `pkgtool init` for a valid ContentInfo.plist"))
      }
    } catch {
      findings.append(finding(ContentInfo.fileName, "\(error)"))
    }
  }
}
