/// LZFSE, Apple's compression format, written for this project (no C library): a decoder for
/// every block kind a stream may hold, and an encoder. Used by Apple Archive's `pbze` framing.
package enum LZFSE {
  /// Why a stream was not decoded.
  package struct DecodeError: Error, CustomStringConvertible, Equatable {
    /// What was wrong, for people (no offsets a user cannot act on).
    package var description: String
    package init(_ description: String) { self.description = description }
  }

  /// Decodes one whole LZFSE stream (its blocks up to the end-of-stream marker). Throws when
  /// the stream is damaged, when it ends early, when bytes follow its end marker, or when it
  /// would decode to more than `limit` bytes (before decoding past it).
  package static func decode(_ input: [UInt8], limit: Int) throws(DecodeError) -> [UInt8] {
    throw DecodeError("LZFSE decoding is not written yet")
  }

  /// Encodes `input` as one LZFSE stream. The same input always gives the same bytes.
  package static func encode(_ input: [UInt8]) -> [UInt8] {
    fatalError("LZFSE encoding is not written yet")
  }
}
