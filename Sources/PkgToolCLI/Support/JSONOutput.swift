import Foundation

/// Pretty JSON with sorted keys and a final newline, for `--json` output.
func jsonText<T: Encodable>(_ value: T) -> String {
  let encoder = JSONEncoder()
  encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
  return (try? String(decoding: encoder.encode(value), as: UTF8.self) + "\n") ?? "{}\n"
}

/// Findings as text lines (compiler style), for commands other than validate.
import HostedContent

func findingLines(_ result: InspectionResult, displayPath: String, strict: Bool) -> String {
  TextReporter.render(ValidationReport(result: result, displayPath: displayPath, strict: strict))
}
