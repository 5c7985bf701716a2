import Foundation

/// The project's one JSON encoder: indented, keys sorted, slashes as they are, so every JSON
/// pkgtool writes (reports, `--json`, catalogs, manifests, install records) is stable and
/// diffable.
package enum JSONText {
  private static func encoder() -> JSONEncoder {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
    return encoder
  }

  /// The document's bytes, with a final newline.
  package static func bytes<T: Encodable>(_ value: T) throws -> [UInt8] {
    Array(try encoder().encode(value)) + [0x0A]
  }

  /// The document, without a final newline (`{}` for a value that cannot be encoded, which
  /// none of pkgtool's own types is).
  package static func string<T: Encodable>(_ value: T) -> String {
    guard let data = try? encoder().encode(value) else { return "{}" }
    return String(decoding: data, as: UTF8.self)
  }
}
