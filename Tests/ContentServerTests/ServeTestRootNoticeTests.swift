import Foundation
import TestSupport
import Testing

extension ServeEndToEndTests {
  /// A gate for Production or Sandbox whose root is not Apple Root CA - G3 says so at start, in
  /// one notice line: its transactions are not from the App Store. Xcode and LocalTesting say
  /// their own line instead.
  @Test func aTestRootIsNamedAtStart() throws {
    let notice =
      "notice pkgtool.serve: [ServeCLI] --root-certificate 'root.pem' is not Apple Root CA - G3: a test root; transactions are not from the App Store; do not use for sales"
    for environment in ["Production", "Sandbox"] {
      let server = try Server(in: folder, ["--environment", environment])
      #expect(server.stop() == 0)
      #expect(server.log.components(separatedBy: notice).count == 2, "\(environment): \(server.log)")
    }
    let local = try Server(in: folder, ["--environment", "Xcode"])
    #expect(local.stop() == 0)
    #expect(!local.log.contains("is not Apple Root CA - G3"), "\(local.log)")
    #expect(local.log.contains("--environment Xcode: local testing"), "\(local.log)")
  }
}
