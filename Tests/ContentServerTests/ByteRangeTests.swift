import Testing

@testable import ContentServer

@Suite struct ByteRangeTests {
  @Test func ranges() {
    #expect(ByteRange(header: nil, size: 100) == .whole)
    #expect(ByteRange(header: "bytes=0-9", size: 100) == .part(0...9))
    #expect(ByteRange(header: "bytes=90-", size: 100) == .part(90...99))
    #expect(ByteRange(header: "bytes=90-1000", size: 100) == .part(90...99))
    #expect(ByteRange(header: "bytes=-10", size: 100) == .part(90...99))
    #expect(ByteRange(header: "bytes=-1000", size: 100) == .part(0...99))
    #expect(ByteRange(header: "bytes=100-", size: 100) == .unsatisfiable)
    #expect(ByteRange(header: "bytes=5000-6000", size: 100) == .unsatisfiable)
    #expect(ByteRange(header: "bytes=-0", size: 100) == .unsatisfiable)
    // Ignored: several ranges, other units, bad syntax, a reversed range.
    #expect(ByteRange(header: "bytes=0-1,5-6", size: 100) == .whole)
    #expect(ByteRange(header: "items=0-1", size: 100) == .whole)
    #expect(ByteRange(header: "bytes=a-b", size: 100) == .whole)
    #expect(ByteRange(header: "bytes=9-3", size: 100) == .whole)
    #expect(ByteRange(header: "bytes=+1-3", size: 100) == .whole)
    #expect(ByteRange(header: "bytes=99999999999999999999-", size: 100) == .whole)
  }
}
