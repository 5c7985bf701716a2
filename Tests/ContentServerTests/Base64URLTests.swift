import Foundation
import Testing
import TextCoding

/// The JWS parts' codec (unpadded base64url), against Foundation's base64 as the reference.
@Suite struct Base64URLTests {
  @Test func decodesWhatFoundationEncodes() {
    var generator = SystemRandomNumberGenerator()
    for length in 0..<300 {
      let bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
      let url = Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-")
        .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
      #expect(Base64.decodeURL(Array(url.utf8)) == bytes, "length \(length)")
    }
  }

  @Test func refusesWhatIsNotStrictBase64URL() {
    for text in ["AAA=", "AA+A", "AA/A", "AA A", "AAAAA", "A", "AA\nA", "AAé"] {
      #expect(Base64.decodeURL(Array(text.utf8)) == nil, "\(text)")
    }
  }
}
