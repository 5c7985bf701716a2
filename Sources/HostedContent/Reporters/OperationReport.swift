/// What a command other than `validate` prints about what it did, for people (``text``) and for
/// scripts (``json``): one type per operation, beside validate's reporters, so that a program
/// using the library prints what the command line prints.
public protocol OperationReport {
  /// The form `--json` encodes: an object.
  associatedtype Document: Encodable
  /// Lines for people, each ending in a newline.
  var text: String { get }
  /// What ``json`` encodes.
  var document: Document { get }
}

extension OperationReport {
  /// The `--json` document: pretty, keys sorted, `schemaVersion` beside the other keys
  /// (docs/json-schema.md), and a final newline.
  public var json: String { JSONText.versioned(document) }
}

extension JSONText {
  /// `value` (an object) as pretty JSON with sorted keys, its `schemaVersion` beside its other
  /// keys, and a final newline: every command's `--json`.
  package static func versioned<T: Encodable>(_ value: T) -> String {
    string(Versioned(value: value)) + "\n"
  }

  /// An object's keys plus `schemaVersion`, at the same level.
  private struct Versioned<T: Encodable>: Encodable {
    var value: T
    private enum Key: String, CodingKey { case schemaVersion }
    func encode(to encoder: Encoder) throws {
      try value.encode(to: encoder)
      var container = encoder.container(keyedBy: Key.self)
      try container.encode(JSONReporter.schemaVersion, forKey: .schemaVersion)
    }
  }
}

/// Findings as text lines (compiler style), as the text reporter gives them: what `build`,
/// `install`, `unpack` and `info` print of the rules' findings.
package func findingLines(_ result: InspectionResult, displayPath: String, strict: Bool) -> String {
  TextReporter.render(ValidationReport(result: result, displayPath: displayPath, strict: strict))
}
