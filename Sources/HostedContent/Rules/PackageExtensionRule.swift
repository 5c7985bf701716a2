/// `package-extension`: a package file's name ends in `.pkg`.
public final class PackageExtensionRule: Rule {
  public static let description = RuleDescription(
    id: "package-extension", name: "Package extension",
    summary: "A package file whose name does not end in .pkg.",
    rationale: "App Store Connect and Xcode only accept hosted content as .pkg files.",
    triggering: [RuleExample.package("named .zip").with { $0.packageFileName = "content.zip"; $0.appliesToFolders = false }],
    nonTriggering: [RuleExample.package("named .pkg"), RuleExample.package("upper case .PKG").with { $0.packageFileName = "CONTENT.PKG" }])

  private let fileName: String?

  public init(context: RuleContext) { fileName = context.packageFileName }

  public func finish(_ summary: InspectionSummary, into findings: inout [Finding]) {
    guard let fileName, !fileName.lowercased().hasSuffix(".pkg") else { return }
    findings.append(finding(nil, "the package file '\(fileName)' does not end in .pkg", hint: "rename it to end in .pkg"))
  }
}
