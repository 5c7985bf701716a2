import ArgumentParser

/// `pkgtool storekit-test`: StoreKit test data (a certificate chain with the App Store's shape,
/// signed transactions and notifications), made by the server program `pkgtool-serve`, which
/// links X.509; this core links none. `PkgToolMain` hands every `pkgtool storekit-test …` to that
/// program before parsing; this command is what `pkgtool --help`, the manual and the
/// completions list.
struct StoreKitTestLauncherCommand: ParsableCommand {
  static let name = "storekit-test"

  static let configuration = CommandConfiguration(
    commandName: name,
    abstract: "Make StoreKit test data to try serve without the App Store: a chain, transactions, notifications.",
    discussion: """
      Runs 'pkgtool-serve storekit-test', the server program installed beside pkgtool. \
      'pkgtool storekit-test --help' lists its commands; docs/serve.md, 'Try it on \
      localhost', runs the whole flow.

      Examples:
        pkgtool storekit-test chain -o chain
        pkgtool storekit-test transaction --chain chain \\
            --bundle-id com.example.app --product com.example.book \\
            -o transaction.jws
      """)

  @Argument(
    parsing: .captureForPassthrough, help: "Its command and options ('pkgtool storekit-test --help' lists them).")
  var options: [String] = []

  func run() throws {
    ServeLauncherCommand.replaceProcess(arguments: [Self.name] + options, command: Self.name)
  }
}
