import ArgumentParser
import HostedContent
import SystemIO

struct ExportCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "export",
    abstract: "Turn hosted content into another form.",
    discussion: """
      Examples:
        pkgtool export background-assets com.example.book-1.1.pkg -o BookPack
      """,
    subcommands: [BackgroundAssetsExportCommand.self])
}
