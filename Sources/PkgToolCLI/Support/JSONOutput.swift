import Foundation
import HostedContent

/// The version of every command's `--json` object (docs/json-schema.md): raised when a field
/// changes meaning or goes away; new fields do not raise it.
let jsonSchemaVersion = JSONReporter.schemaVersion

/// An object's keys plus `schemaVersion`, at the same level.
struct Versioned<T: Encodable>: Encodable {
  var value: T
  private enum Key: String, CodingKey { case schemaVersion }
  func encode(to encoder: Encoder) throws {
    try value.encode(to: encoder)
    var container = encoder.container(keyedBy: Key.self)
    try container.encode(jsonSchemaVersion, forKey: .schemaVersion)
  }
}

/// Pretty JSON with sorted keys, `schemaVersion` and a final newline, for `--json` output. The
/// value must encode as an object.
func jsonText<T: Encodable>(_ value: T) -> String {
  JSONText.string(Versioned(value: value)) + "\n"
}

/// Findings as text lines (compiler style), for commands other than validate.
func findingLines(_ result: InspectionResult, displayPath: String, strict: Bool) -> String {
  TextReporter.render(ValidationReport(result: result, displayPath: displayPath, strict: strict))
}
