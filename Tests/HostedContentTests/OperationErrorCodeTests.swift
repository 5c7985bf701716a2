import Foundation
import HostedContent
import TestSupport
import Testing

/// A library user matches on ``OperationError/code``, never on the text: each failure here is a
/// real one (real files, a real refused connection) and must carry its kind.
@Suite struct OperationErrorCodeTests {
  func code(_ body: () throws -> Void) -> OperationError.Code? {
    do {
      try body()
      return nil
    } catch let error as OperationError {
      return error.code
    } catch {
      Issue.record("not an OperationError: \(error)")
      return nil
    }
  }

  @Test func eachFailureCarriesItsKind() throws {
    let dir = try TemporaryDirectory()
    let version = try #require(ContentVersion("1.0"))
    // An argument that cannot be used.
    #expect(
      code { try ProjectTemplate.create(at: dir.appending("A"), productIdentifier: "not valid!", version: version) }
        == .invalidArgument)
    // An output whose folder is missing; then one that exists and is not empty.
    #expect(
      code {
        try ProjectTemplate.create(at: dir.appending("no/such/A"), productIdentifier: "com.example.a", version: version)
      }
        == .outputUnwritable)
    try ProjectTemplate.create(at: dir.appending("A"), productIdentifier: "com.example.a", version: version)
    #expect(
      code { try ProjectTemplate.create(at: dir.appending("A"), productIdentifier: "com.example.a", version: version) }
        == .outputExists)
    // Keys: a missing file, and a public key where the secret one is needed.
    #expect(code { _ = try CatalogSigningKey(contentsOf: dir.appending("missing.key")) } == .inputUnreadable)
    let key = CatalogSigningKey()
    try key.write(to: dir.appending("k.key"))
    #expect(code { _ = try CatalogSigningKey(contentsOf: dir.appending("k.key.pub")) } == .unusableKey)
    // A package that is not there.
    #expect(
      code { _ = try Validation.run(path: dir.appending("missing.pkg"), options: ValidationOptions()) }
        == .inputUnreadable)
    // Every code has a stable name.
    #expect(Set(OperationError.Code.allCases.map(\.rawValue)).count == OperationError.Code.allCases.count)
  }
}
