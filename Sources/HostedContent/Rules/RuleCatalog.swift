/// Every rule pkgtool knows: the types in Rules/, one per file, registered at build time (the
/// RuleRegistry plugin writes `registered`), in catalog order.
public enum RuleCatalog {
  /// Every rule, by category, then by id within a category.
  public static var all: [any Rule.Type] {
    registered.sorted { ($0.description.category, $0.description.id) < ($1.description.category, $1.description.id) }
  }

  /// The descriptions, in catalog order.
  public static var descriptions: [RuleDescription] { all.map { $0.description } }

  /// The rule with `id`, if any.
  public static func rule(withID id: String) -> (any Rule.Type)? { all.first { $0.description.id == id } }
}
