import Dispatch
import Foundation
import HostedContent
import SystemIO
import TestSupport
import Testing

/// The documents folder's trust record (`DOCS/.pkgtool/trust.json`): whom it remembers a
/// publisher by, and that installs into one folder never lose each other's raise.
@Suite struct TrustRecordTests {
  func root(_ version: Int64, rootKey: CatalogSigningKey, catalogKeys: [CatalogSigningKey]) throws -> Root {
    try Root(
      version: version, rootKeys: [rootKey.publicKey], rootThreshold: 1, catalogKeys: catalogKeys.map(\.publicKey),
      catalogThreshold: 1, lifetime: 86_400)
  }

  /// An app update that ships root 2 alone, a chain that also holds an older real root, and the
  /// shipped root alone with the newer ones withheld: each meets a name the device knows.
  @Test func everyChainFromTheShippedRootMeetsWhatTheDeviceRemembers() throws {
    let rootKey = CatalogSigningKey()
    let (c1, c2, c3) = (CatalogSigningKey(), CatalogSigningKey(), CatalogSigningKey())
    let roots = [
      try root(1, rootKey: rootKey, catalogKeys: [c1]), try root(2, rootKey: rootKey, catalogKeys: [c2]),
      try root(3, rootKey: rootKey, catalogKeys: [c3]),
    ]
    var record = TrustRecord()
    record.raise(try CatalogPublisher(chain: Array(roots[0...2])), catalogSequence: 9)
    for chain in [[roots[0]], [roots[1]], [roots[0], roots[1]], [roots[2]]] {
      let (seen, _) = record.remembered(of: try CatalogPublisher(chain: chain))
      #expect(seen == TrustRecord.Memory(rootVersion: 3, catalogSequence: 9), "\(chain.map(\.version))")
    }
    // One key remembers its catalogs, and a root that lists it later finds them.
    var keyed = TrustRecord()
    keyed.raise(CatalogPublisher(key: c1.publicKey), catalogSequence: 4)
    #expect(keyed.remembered(of: try CatalogPublisher(chain: [roots[0]])).publisher.catalogSequence == 4)
    // Another publisher's root is not this one's…
    let other = try root(1, rootKey: CatalogSigningKey(), catalogKeys: [CatalogSigningKey()])
    let (theirs, rootVersionInFolder) = record.remembered(of: try CatalogPublisher(chain: [other]))
    #expect(theirs == TrustRecord.Memory())
    // …but one key never stands for a root in a folder that was installed into under one.
    #expect(rootVersionInFolder == 3)
  }

  /// Sixteen installs of as many products and publishers at once, each raising the folder's
  /// record: every raise is kept.
  @Test func concurrentRaisesAreNeverLost() throws {
    let dir = try TemporaryDirectory()
    let publishers = (0..<16).map { _ in CatalogPublisher(key: CatalogSigningKey().publicKey) }
    let path = dir.path
    let failures = Locked<[String]>([])
    DispatchQueue.concurrentPerform(iterations: publishers.count) { index in
      do {
        let folder = InstallFolder(handle: try DirectoryHandle(path: path), path: path)
        let refusal = try folder.accept(
          publishers[index], catalogSequence: Int64(index + 1), lockTimeout: 60, check: { _ in nil })
        if let refusal { failures.withLock { $0.append(refusal) } }
      } catch {
        failures.withLock { $0.append("\(error)") }
      }
    }
    #expect(failures.withLock { $0 } == [])
    let record = try InstallFolder(handle: try DirectoryHandle(path: dir.path), path: dir.path).record()
    for (index, publisher) in publishers.enumerated() {
      #expect(record.remembered(of: publisher).publisher.catalogSequence == Int64(index + 1))
    }
  }
}
