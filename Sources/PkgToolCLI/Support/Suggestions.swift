import ArgumentParser
import HostedContent

/// "Did you mean" where argument-parser gives none, or the wrong one: a mistyped command at any
/// level (`pkgtool catalog renw`), and an option spelled as the value of another
/// (`--sarif` for `--reporter sarif`, which argument-parser would take for `--strict`).
enum Suggestions {
  /// Options whose values people type as options of their own, by the commands that have them.
  static let valueOptions: [(commands: [String], option: String, values: [String])] = [
    (["validate"], "--reporter", ReportFormat.allCases.map(\.rawValue).filter { $0 != "json" }),
    (["build"], "--format", Build.Format.allCases.map(\.rawValue)),
  ]

  /// The error for the first word of `arguments` that names no subcommand of the command group it
  /// follows (`renw` after `catalog`), with the closest name; nil when every command word names
  /// one (or an option comes first). `root` is the program's root command.
  static func unknownCommand(_ arguments: [String], root: ParsableCommand.Type) -> (message: String, usage: String)? {
    var node = root
    var path = [root._commandName]
    for word in arguments {
      let subcommands = node.configuration.subcommands
      guard !word.hasPrefix("-"), !subcommands.isEmpty, node.configuration.defaultSubcommand == nil else { return nil }
      if word == "help" { return nil }
      if let next = subcommands.first(where: { $0._commandName == word }) {
        node = next
        path.append(word)
        continue
      }
      let names = subcommands.map { $0._commandName }
      let close = names.filter { editDistance($0, word) <= 2 || (word.count >= 3 && $0.hasPrefix(word)) }
        .sorted { editDistance($0, word) < editDistance($1, word) }
      let suggestion =
        close.isEmpty ? "the commands are \(names.joined(separator: ", "))" : "did you mean '\(close[0])'?"
      let group = path.joined(separator: " ")
      return (
        "'\(terminalSafe(word))' is not a \(group) command; \(suggestion)",
        "Run '\(group) --help' for usage."
      )
    }
    return nil
  }

  /// `--reporter sarif` for an unknown option `--sarif` given to a command that has
  /// `--reporter`; nil when the option is no such value.
  static func optionForValue(_ unknown: String, _ arguments: [String]) -> String? {
    guard unknown.hasPrefix("--") else { return nil }
    let value = String(unknown.dropFirst(2))
    for entry in valueOptions where entry.values.contains(value) {
      if let command = arguments.first(where: { !$0.hasPrefix("-") }), entry.commands.contains(command) {
        return "\(entry.option) \(value)"
      }
    }
    return nil
  }

  /// argument-parser's message for an unknown option, its suggestion replaced when the option
  /// is a value of another (`unknown option '--sarif'; did you mean '--reporter sarif'?`).
  static func revised(_ message: String, _ arguments: [String]) -> String {
    let prefix = "unknown option '"
    guard message.hasPrefix(prefix) else { return message }
    let rest = message.dropFirst(prefix.count)
    guard let end = rest.firstIndex(of: "'") else { return message }
    let option = String(rest[..<end])
    guard let better = optionForValue(option, arguments) else { return message }
    return "unknown option '\(option)'; did you mean '\(better)'?"
  }
}
