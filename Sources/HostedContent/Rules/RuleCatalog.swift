/// Every rule pkgtool knows, in catalog order.
public enum RuleCatalog {
  public static var all: [any Rule.Type] {
    [
    ArchiveIntegrityRule.self,
    PackageFormRule.self,
    LayoutRule.self,
    ContentInfoRule.self,
    PathSafetyRule.self,
    DuplicatePathRule.self,
    NoExecutableRule.self,
    NoExternalSymlinkRule.self,
    SpecialFileRule.self,
    SizeLimitRule.self,
    ContentVersionIncreaseRule.self,
    JunkFileRule.self,
    AssetPackManifestRule.self,
    AssetPackFilesRule.self,
    ]
  }

  /// The descriptions, in catalog order.
  public static var descriptions: [RuleDescription] { all.map { $0.description } }

  /// The rule with `id`, if any.
  public static func rule(withID id: String) -> (any Rule.Type)? { all.first { $0.description.id == id } }
}
