import Foundation
import HostedContent

/// The version of every command's `--json` object (docs/json-schema.md): raised when a field
/// changes meaning or goes away; new fields do not raise it.
let jsonSchemaVersion = JSONReporter.schemaVersion

/// Pretty JSON with sorted keys, `schemaVersion` and a final newline, for `--json` output. The
/// value must encode as an object.
func jsonText<T: Encodable>(_ value: T) -> String {
  JSONText.versioned(value)
}
