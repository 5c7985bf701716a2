import Testing

@testable import XAR

/// The TOC parser finds an element from its name's bytes by length and machine words: every
/// known name, and every name one byte away from one (changed, cut or lengthened), must be
/// classified as a plain comparison of strings would.
@Suite struct TOCElementTests {
  static func reference(_ bytes: [UInt8]) -> TOCElement {
    TOCElement.allCases.first { $0 != .other && Array($0.name.utf8) == bytes } ?? .other
  }

  static func classify(_ bytes: [UInt8]) -> TOCElement {
    bytes.withUnsafeBytes { TOCElement($0) }
  }

  @Test func everyNameAndEveryNameOneByteAway() {
    var checked = 0
    for element in TOCElement.allCases where element != .other {
      let name = Array(element.name.utf8)
      #expect(TOCElementTests.classify(name) == element, "\(element.name)")
      var variants: [[UInt8]] = [Array(name.dropLast()), Array(name.dropFirst()), name + [0x73], [0x78] + name]
      for i in name.indices {
        for replacement: UInt8 in [0, 0x2D, 0x41, name[i] ^ 0x20, name[i] &+ 1, 0xFF] where replacement != name[i] {
          var changed = name
          changed[i] = replacement
          variants.append(changed)
        }
      }
      for variant in variants {
        #expect(TOCElementTests.classify(variant) == TOCElementTests.reference(variant), "\(variant)")
        checked += 1
      }
    }
    #expect(checked > 500)
    #expect(TOCElementTests.classify([]) == .other)
    #expect(TOCElementTests.classify(Array("extracted-checksums".utf8)) == .other)
  }

  @Test func fileFieldsAreTheirElements() {
    for element in TOCElement.allCases {
      if let field = FileField(element) {
        #expect(field.element == element.name)
      } else {
        #expect(![.mode, .uid, .gid, .user, .group, .mtime, .link, .name, .type, .data].contains(element))
      }
    }
  }
}
