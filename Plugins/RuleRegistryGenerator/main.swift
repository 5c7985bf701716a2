// Writes RegisteredRules.swift for the RuleRegistry plugin:
//   RuleRegistryGenerator OUTPUT RULE-FILE...
// Each file must declare exactly one type that adopts `Rule` (`final class NameRule: Rule`).
import Foundation

let arguments = CommandLine.arguments.dropFirst()
guard let output = arguments.first else {
  FileHandle.standardError.write(Data("usage: RuleRegistryGenerator OUTPUT RULE-FILE...\n".utf8))
  exit(2)
}
let declaration = try NSRegularExpression(
  pattern:
    #"^\s*(?:(?:public|package|internal)\s+)?(?:final\s+)?(?:class|struct|enum)\s+(\w+)\s*:\s*(?:[\w.]+\s*,\s*)*Rule\b"#,
  options: [.anchorsMatchLines])
var types: [String] = []
for path in arguments.dropFirst() {
  let text = try String(contentsOfFile: path, encoding: .utf8)
  let range = NSRange(text.startIndex..., in: text)
  let names = declaration.matches(in: text, range: range).compactMap {
    Range($0.range(at: 1), in: text).map { String(text[$0]) }
  }
  guard names.count == 1 else {
    let file = (path as NSString).lastPathComponent
    FileHandle.standardError.write(
      Data("error: \(file) must declare exactly one type that adopts Rule; found \(names.count)\n".utf8))
    exit(1)
  }
  types.append(names[0])
}
var source = """
  // Generated at build time by the RuleRegistry plugin from the files in Rules/. Do not edit.

  extension RuleCatalog {
    /// Every rule type declared in Rules/, one per file, in file-name order.
    static var registered: [any Rule.Type] {
      [

  """
for type in types { source += "      \(type).self,\n" }
source += "    ]\n  }\n}\n"
let data = Data(source.utf8)
if (try? Data(contentsOf: URL(fileURLWithPath: output))) != data {
  try data.write(to: URL(fileURLWithPath: output), options: .atomic)
}
