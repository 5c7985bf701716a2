import CZlib
import TestSupport
import Testing
import Zlib

/// ``ZlibInflater`` reads a plain zlib stream's wrapper itself (the body inflated raw, the
/// Adler-32 computed by libdeflate and compared here). Over every stream below, damaged in the
/// ways a package can damage it, and fed in pieces of every size, it must give what zlib alone
/// gives for the same bytes: the same output, the same end, the same bytes used, the same error.
@Suite struct ZlibInflaterTests {
  /// What inflating a stream came to.
  struct Outcome: Equatable, CustomStringConvertible {
    var output: [UInt8]
    var finished: Bool
    /// Input bytes used, when the stream ended.
    var used: Int?
    var error: String?
    var description: String {
      "\(output.count) bytes, finished \(finished), used \(used.map(String.init) ?? "-"), error \(error ?? "none")"
    }
  }

  /// zlib alone, reading its own wrapper (windowBits 15 + 32, as the inflater is made), fed
  /// `piece` bytes at a time into an output room of `room` bytes: what the inflater did before
  /// it read the wrapper itself. A call that fails delivers nothing, as a throwing step does.
  static func reference(_ stream: [UInt8], piece: Int = 1 << 30, room: Int = 1 << 16, gzip: Bool = true) -> Outcome {
    var z = z_stream()
    #expect(pkgtool_inflateInit2(&z, gzip ? 15 + 32 : 15) == Z_OK)
    defer { inflateEnd(&z) }
    var output: [UInt8] = []
    var out = [UInt8](repeating: 0, count: room)
    var input = stream
    var position = 0
    return input.withUnsafeMutableBufferPointer { input in
      while true {
        let given = min(piece, input.count - position)
        z.next_in = input.baseAddress.map { $0 + position }
        z.avail_in = uInt(given)
        let (status, made) = out.withUnsafeMutableBufferPointer { out -> (Int32, Int) in
          z.next_out = out.baseAddress
          z.avail_out = uInt(out.count)
          let status = CZlib.inflate(&z, Z_NO_FLUSH)
          return (status, out.count - Int(z.avail_out))
        }
        let took = given - Int(z.avail_in)
        switch status {
        case Z_STREAM_END:
          output += out[..<made]
          return Outcome(output: output, finished: true, used: position + took, error: nil)
        case Z_OK, Z_BUF_ERROR:
          output += out[..<made]
          position += took
          if took == 0 && made == 0 { return Outcome(output: output, finished: false, used: nil, error: nil) }
        default:
          let message = z.msg.map { String(cString: $0) } ?? "zlib error \(status)"
          return Outcome(output: output, finished: false, used: nil, error: message)
        }
      }
    }
  }

  /// The inflater, fed `piece` bytes at a time into an output room of `room` bytes, as the XAR
  /// data reader feeds it (``ZlibInflater/inflateStep(_:into:)``).
  static func stepped(_ stream: [UInt8], piece: Int, room: Int, gzip: Bool = true) -> Outcome {
    let inflater = ZlibInflater(acceptsGzip: gzip)
    var output: [UInt8] = []
    var out = [UInt8](repeating: 0, count: room)
    var position = 0
    do {
      while !inflater.finished {
        let end = min(stream.count, position + piece)
        let (took, made) = try stream[position..<end].withUnsafeBytes { input in
          try out.withUnsafeMutableBytes { try inflater.inflateStep(input, into: $0) }
        }
        output += out[..<made]
        position += took
        if took == 0 && made == 0 { break }  // all given, nothing more comes
      }
    } catch {
      return Outcome(output: output, finished: false, used: nil, error: "\(error)")
    }
    return Outcome(output: output, finished: inflater.finished, used: inflater.finished ? position : nil, error: nil)
  }

  /// The inflater through ``ZlibInflater/inflate(_:sink:)``, `piece` bytes at a time.
  static func sunk(_ stream: [UInt8], piece: Int) -> Outcome {
    let inflater = ZlibInflater()
    var output: [UInt8] = []
    var position = 0
    do {
      while position < stream.count && !inflater.finished {
        let end = min(stream.count, position + piece)
        let took = try stream[position..<end].withUnsafeBytes { input in
          try inflater.inflate(input) { output += $0 }
        }
        if took == 0 { break }
        position += took
      }
    } catch {
      return Outcome(output: output, finished: false, used: nil, error: "\(error)")
    }
    return Outcome(output: output, finished: inflater.finished, used: inflater.finished ? position : nil, error: nil)
  }

  static func zlib(_ bytes: [UInt8], level: Int32) -> [UInt8] { ZlibDeflater(level: level).compressWhole(bytes) }

  /// A two-byte zlib header with its check bits set right.
  static func header(_ first: UInt8, flags: UInt8) -> [UInt8] {
    var second = flags & 0xE0
    second += UInt8(31 - (UInt16(first) << 8 | UInt16(second)) % 31) % 31
    return [first, second]
  }

  /// Streams to judge: whole, damaged at the end, in the header and in the body.
  static func streams() -> [(String, [UInt8])] {
    var generator = SeededGenerator(seed: 31)
    let text = Array((0..<1_000).map { "line \($0) of the chapter\n" }.joined().utf8.prefix(20_000))
    let noise = (0..<70_000).map { _ in UInt8.random(in: 0...255, using: &generator) }
    var cases: [(String, [UInt8])] = []
    for (label, plain, level) in [
      ("empty", [UInt8](), Int32(6)), ("short", Array("hello, hello, hello".utf8), 6), ("text", text, 6),
      ("noise stored", noise, 0), ("noise", noise, 6),
    ] {
      let stream = zlib(plain, level: level)
      cases.append((label, stream))
      for k in 1...4 {
        var damaged = stream
        damaged[stream.count - k] ^= 0x01
        cases.append(("\(label), trailer byte -\(k) changed", damaged))
        cases.append(("\(label), cut by \(k)", Array(stream.dropLast(k))))
      }
      cases.append(("\(label), cut by 5", Array(stream.dropLast(5))))
      cases.append(("\(label), one byte after", stream + [0]))
      cases.append(("\(label), five bytes after", stream + [1, 2, 3, 4, 5]))
      let body = Array(stream.dropFirst(2))
      cases.append(("\(label), a 256-byte window", header(0x08, flags: 0) + body))
      cases.append(("\(label), window too large", header(0x88, flags: 0) + body))
      cases.append(("\(label), method 7", header(0x77, flags: 0) + body))
      cases.append(("\(label), preset dictionary", header(0x78, flags: 0x20) + [0, 0, 0, 1] + body))
      cases.append(("\(label), check bits wrong", [stream[0], stream[1] ^ 0x01] + body))
      cases.append(("\(label), no header", Array(body.dropLast(4))))
      cases.append(("\(label), gzip", gzip(plain)))
      for _ in 0..<6 where stream.count > 6 {
        var damaged = stream
        let at = Int.random(in: 2..<(stream.count - 4), using: &generator)
        damaged[at] ^= UInt8.random(in: 1...255, using: &generator)
        cases.append(("\(label), body byte \(at) changed", damaged))
      }
    }
    return cases
  }

  /// `bytes` in a gzip member (zlib's own gzip writer: windowBits 15 + 16).
  static func gzip(_ bytes: [UInt8]) -> [UInt8] {
    var z = z_stream()
    #expect(pkgtool_deflateInit2(&z, 6, 15 + 16) == Z_OK)
    defer { deflateEnd(&z) }
    var input = bytes
    var out = [UInt8](repeating: 0, count: Int(deflateBound(&z, uLong(bytes.count))) + 32)
    let count = input.count
    let made = input.withUnsafeMutableBufferPointer { input in
      out.withUnsafeMutableBufferPointer { output -> Int in
        z.next_in = input.baseAddress
        z.avail_in = uInt(count)
        z.next_out = output.baseAddress
        z.avail_out = uInt(output.count)
        #expect(CZlib.deflate(&z, Z_FINISH) == Z_STREAM_END)
        return output.count - Int(z.avail_out)
      }
    }
    return Array(out[..<made])
  }

  @Test func everyStreamInEveryPieceSizeIsReadAsZlibReadsIt() {
    let cases = Self.streams()
    #expect(cases.count > 100)
    var ended = 0
    var refused = 0
    for (label, stream) in cases {
      let whole = Self.reference(stream)
      if whole.finished { ended += 1 }
      if whole.error != nil { refused += 1 }
      // Small pieces and rooms for the smaller streams (the wrapper is judged at both ends of a
      // stream, whatever its size; a debug build takes seconds over the large ones byte by byte).
      let small = stream.count <= 24_000
      for piece in small ? [1, 2, 3, 5, 4096, stream.count + 1] : [4096, 65_521, stream.count + 1] {
        for room in piece <= 5 || !small ? [1 << 16] : [1, 7, 1 << 16] {
          let expected = Self.reference(stream, piece: piece, room: room)
          let got = Self.stepped(stream, piece: piece, room: room)
          #expect(got == expected, "\(label), pieces of \(piece), room \(room): \(got), zlib: \(expected)")
        }
        // (Output in its own room of 256 KiB, to the end of each piece.)
        let expected = Self.reference(stream, piece: piece, room: 256 << 10)
        let sunk = Self.sunk(stream, piece: piece)
        #expect(
          sunk.finished == expected.finished && sunk.used == expected.used && sunk.error == expected.error
            && (sunk.error != nil || sunk.output == expected.output),
          "\(label), inflate(sink), pieces of \(piece): \(sunk), zlib: \(expected)")
      }
    }
    // The cases hold whole streams and refused ones: the check can tell them apart.
    #expect(ended > 20 && refused > 20, "ended \(ended), refused \(refused)")
  }

  @Test func aZlibOnlyInflaterReadsTheSameAsZlibWithoutGzip() {
    for (label, stream) in Self.streams() {
      let expected = Self.reference(stream, piece: 3, gzip: false)
      let got = Self.stepped(stream, piece: 3, room: 1 << 16, gzip: false)
      #expect(got == expected, "\(label): \(got), zlib: \(expected)")
    }
  }

  /// A damaged check is zlib's own verdict, word for word.
  @Test func aWrongCheckIsIncorrectDataCheck() {
    var stream = Self.zlib(Array("some text, some text".utf8), level: 6)
    stream[stream.count - 1] ^= 0xFF
    #expect(Self.stepped(stream, piece: 1 << 16, room: 1 << 16).error == "incorrect data check")
    #expect(Self.reference(stream).error == "incorrect data check")
  }
}
