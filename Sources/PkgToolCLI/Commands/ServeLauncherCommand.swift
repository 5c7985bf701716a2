import ArgumentParser
import SystemIO

/// `pkgtool serve`: the purchase gate, a program of its own (`pkgtool-serve`, installed beside
/// `pkgtool`), so the packaging tool links no HTTP, X.509 or server package. `PkgToolMain` hands
/// every `pkgtool serve …` to that program before parsing; this command is what `pkgtool --help`,
/// the manual and the completions list.
struct ServeLauncherCommand: ParsableCommand {
  static let name = "serve"
  static let program = "pkgtool-serve"

  static let configuration = CommandConfiguration(
    commandName: name,
    abstract: "Serve a catalog's packages to apps that prove the purchase (the App Store's hosting, self-hosted).",
    discussion: """
      Runs pkgtool-serve, the server program installed beside pkgtool (scripts/install.sh and \
      the release archive install both). 'pkgtool serve --help' lists its options; \
      docs/serve.md shows a whole setup.

      Example:
        pkgtool serve --catalog catalog.json --packages dist \\
            --listen 127.0.0.1:8080 --bundle-id com.example.app \\
            --root-certificate AppleRootCA-G3.cer --url-key url.key
      """)

  @Argument(parsing: .captureForPassthrough, help: "The server's options ('pkgtool serve --help' lists them).")
  var options: [String] = []

  func run() throws {
    Self.replaceProcess(arguments: options)
  }

  /// Runs `pkgtool-serve` with `arguments` in place of this process; exits 2 with the fix when
  /// it is not installed or cannot be run. `command` is the pkgtool command that needs it
  /// (`serve`, `storekit-test`).
  static func replaceProcess(arguments: [String], command: String = name) -> Never {
    guard let path = Executable.companion(named: program) else {
      let beside = Executable.currentPath.map { " beside '\($0)'" } ?? ""
      PkgToolMain.fail(
        "'pkgtool \(command)' needs the server program '\(program)', which is not installed\(beside) nor on PATH; "
          + "install both with scripts/install.sh, or build it with 'swift build --product \(program)'")
    }
    let failure = Executable.replaceProcess(with: path, arguments: [path] + arguments)
    PkgToolMain.fail(
      "\(failure.description); install pkgtool-serve again beside pkgtool with scripts/install.sh, or build it with 'swift build --product \(program)'"
    )
  }
}
