import Foundation
import PackagePlugin

/// Registers every rule of HostedContent: each `*Rule.swift` file in `Rules/` (but the
/// protocol's own `Rule.swift`) is read at build time and the types that adopt `Rule` are listed
/// in a generated `RegisteredRules.swift`. Adding a rule is adding its file.
@main
struct RuleRegistry: BuildToolPlugin {
  func createBuildCommands(context: PluginContext, target: Target) throws -> [Command] {
    guard let module = target as? SourceModuleTarget else { return [] }
    let ruleFiles = module.sourceFiles(withSuffix: "Rule.swift").map(\.url)
      .filter { $0.deletingLastPathComponent().lastPathComponent == "Rules" && $0.lastPathComponent != "Rule.swift" }
      .sorted { $0.lastPathComponent < $1.lastPathComponent }
    let output = context.pluginWorkDirectoryURL.appendingPathComponent("RegisteredRules.swift")
    return [
      .buildCommand(
        displayName: "Registering \(ruleFiles.count) rules of \(target.name)",
        executable: try context.tool(named: "RuleRegistryGenerator").url,
        arguments: [output.path] + ruleFiles.map(\.path),
        inputFiles: ruleFiles,
        outputFiles: [output])
    ]
  }
}
