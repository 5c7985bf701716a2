import Foundation
import HostedContent
import Testing

@testable import TestSupport

/// A property list costs what its bytes are worth: shared references are not a way to ask for
/// exponential work or memory.
@Suite struct PropertyListCostTests {
  @Test func sharedReferencesThatExpandExponentiallyAreRefusedQuickly() throws {
    let bomb = PayloadBytes.sharedReferencePlist()
    #expect(bomb.count == 277)
    let clock = ContinuousClock()
    let took = clock.measure {
      #expect(throws: ContentInfoError.self) { try ContentInfo(decoding: bomb) }
    }
    #expect(took < .seconds(1), "took \(took)")
    // Still refused when the expansion is only a few times the size (2^12 = 4096 nodes).
    #expect(throws: (any Error).self) { try PropertyList.decode(PayloadBytes.sharedReferencePlist(levels: 12)) }
  }

  @Test func sharingAsWritersShareIsRead() throws {
    // Apple's writer keeps one copy of equal strings: a key used by 200 dictionaries.
    let dict = PropertyList.dictionary([("name", .string("level")), ("version", .string("1.0"))])
    let list = PropertyList.dictionary([
      ("ContentVersion", .string("1.0")), ("IAPProductIdentifier", .string("com.example.x")),
      ("Levels", .array(Array(repeating: dict, count: 200))),
    ])
    let plain = list.encoded(as: .binary)
    #expect(try PropertyList.decode(plain).0 == list)
    let shared = PayloadBytes.sharedKeysPlist(dictionaries: 200)
    let (decoded, _) = try PropertyList.decode(shared)
    guard case .array(let levels) = decoded["Levels"] else {
      Issue.record("no Levels")
      return
    }
    #expect(levels.count == 200)
  }
}
