import ArgumentParser
import HostedContent
import SystemIO

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// The root command: configuration only.
package struct PkgToolCommand: ParsableCommand {
  package static let configuration = CommandConfiguration(
    commandName: "pkgtool",
    abstract: "Build, validate, inspect and unpack In-App Purchase hosted-content packages.",
    discussion: """
      A package is a .pkg file (a XAR archive) whose root holds ContentInfo.plist \
      (ContentVersion, IAPProductIdentifier) and a Contents/ folder.

      Typical use:
        pkgtool init MyBook --product-id com.example.book
        pkgtool build MyBook                      # -> com.example.book-1.0.pkg
        pkgtool validate com.example.book-1.0.pkg
        pkgtool unpack com.example.book-1.0.pkg -o unpacked

      Exit codes (every command):
        0   success
        1   the input broke a rule (the report says which)
        2   the command could not do its work (missing file, I/O error, bad
            arguments, an output that already exists)
        129, 130, 143
            interrupted by SIGHUP, SIGINT (Ctrl-C) or SIGTERM: every temporary
            the command made is removed; one line on stderr says what was left
      """,
    version: PkgTool.version,
    subcommands: [
      InitCommand.self, BuildCommand.self, ValidateCommand.self, UnpackCommand.self, InstallCommand.self,
      BumpCommand.self, InfoCommand.self, CatCommand.self, DiffCommand.self, RulesCommand.self, KeygenCommand.self,
      PublishCommand.self, CatalogCommand.self, RootCommand.self, ExportCommand.self, DownloadManifestCommand.self,
      MigrateCommand.self, ServeLauncherCommand.self, StoreKitTestLauncherCommand.self,
    ])

  package init() {}
}

/// Runs pkgtool with the process's arguments and exits with 0, 1 or 2.
package enum PkgToolMain {
  package static func main(_ arguments: [String]? = nil) -> Never {
    signal(SIGPIPE, SIG_IGN)
    let given = arguments ?? Array(CommandLine.arguments.dropFirst())
    // `serve` is a program of its own (the server's packages stay out of this one).
    if given.first == ServeLauncherCommand.name {
      ServeLauncherCommand.replaceProcess(arguments: Array(given.dropFirst()))
    }
    if given.count >= 2, given[0] == "help", given[1] == ServeLauncherCommand.name {
      ServeLauncherCommand.replaceProcess(arguments: ["--help"])
    }
    // So is `storekit-test`, which needs X.509: the same program, told which command.
    let storeKitTest = StoreKitTestLauncherCommand.name
    if given.first == storeKitTest {
      ServeLauncherCommand.replaceProcess(arguments: given, command: storeKitTest)
    }
    if given.count >= 2, given[0] == "help", given[1] == storeKitTest {
      ServeLauncherCommand.replaceProcess(
        arguments: [storeKitTest] + given.dropFirst(2) + ["--help"], command: storeKitTest)
    }
    // A mistyped command, at any level: argument-parser would say only "unexpected argument".
    if let unknown = Suggestions.unknownCommand(given, root: PkgToolCommand.self) {
      Terminal.standardError("pkgtool: error: \(unknown.message)\n")
      Terminal.standardError(unknown.usage + "\n")
      exit(2)
    }
    run(PkgToolCommand.self, given, usage: "Run 'pkgtool --help' or 'pkgtool <command> --help' for usage.")
  }

  /// Parses `arguments` as `Root`'s, runs the command and exits as every pkgtool command does:
  /// 0 success, 1 as the command says, 2 with one line `pkgtool: error: …` on stderr (the line
  /// `usage` follows an argument error). Ctrl-C removes what the run registered.
  package static func run<Root: ParsableCommand>(_ root: Root.Type, _ arguments: [String], usage: String) -> Never {
    var command = parse(root, arguments, usage: usage)
    do {
      try command.run()
      end(root, nil, usage: usage)
    } catch {
      end(root, error, usage: usage)
    }
  }

  /// As ``run(_:_:usage:)``, for a command whose work is asynchronous (`serve`).
  package static func run<Root: AsyncParsableCommand>(_ root: Root.Type, _ arguments: [String], usage: String) async
    -> Never
  {
    let parsed = parse(root, arguments, usage: usage)
    do {
      if var command = parsed as? AsyncParsableCommand {
        try await command.run()
      } else {
        var command = parsed
        try command.run()
      }
      end(root, nil, usage: usage)
    } catch {
      end(root, error, usage: usage)
    }
  }

  /// The command `arguments` name, with the interruption handlers installed; exits on an
  /// argument error, `--help` or `--version`.
  private static func parse<Root: ParsableCommand>(_ root: Root.Type, _ arguments: [String], usage: String)
    -> ParsableCommand
  {
    // A closed pipe ends a write with EPIPE, which every command turns into a quiet end.
    signal(SIGPIPE, SIG_IGN)
    let command: ParsableCommand
    do {
      command = try Root.parseAsRoot(arguments)
    } catch {
      exitForParseError(error, root, arguments, usage: usage)
    }
    InterruptHandling.install()
    return command
  }

  /// Ends the process after a command returned (`error` nil) or threw.
  private static func end<Root: ParsableCommand>(_ root: Root.Type, _ error: Error?, usage: String) -> Never {
    switch error {
    case nil: Interruption.endUnlessInterrupted(0)
    case let code as ExitCode: Interruption.endUnlessInterrupted(code.rawValue)
    case let error as OperationError: fail(error.description)
    case let error as SystemError: fail(error.description)
    case let error?: exitForParseError(error, root, [], usage: usage)
    }
  }

  /// One line on stderr: `pkgtool: error: …`; exit 2.
  package static func fail(_ message: String) -> Never {
    if Interruption.isInterrupted { Interruption.endUnlessInterrupted(2) }
    Terminal.standardError("pkgtool: error: \(message)\n")
    // Ends past every `defer`: the temporaries this run registered go first.
    Interruption.removeRegistered()
    Interruption.endUnlessInterrupted(2)
  }

  /// Help and version go to stdout with exit 0; argument errors are one line on stderr and exit 2.
  private static func exitForParseError<Root: ParsableCommand>(
    _ error: Error, _ root: Root.Type, _ arguments: [String], usage: String
  ) -> Never {
    let code = Root.exitCode(for: error)
    if code == .success {
      Root.exit(withError: error)  // --help, --version: stdout, exit 0
    }
    var message = Root.message(for: error)
    if message.hasPrefix("Error: ") { message.removeFirst(7) }
    if let first = message.first { message = first.lowercased() + message.dropFirst() }
    message = Suggestions.revised(message, arguments)
    Terminal.standardError("pkgtool: error: \(message)\n")
    Terminal.standardError(usage + "\n")
    exit(2)
  }
}
