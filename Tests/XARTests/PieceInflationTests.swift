import Foundation
import TestSupport
import Testing
import XAR

/// A large file's zlib stream inflated in segments on several threads (``PieceInflation``): for
/// streams of every shape Python's zlib writes (independent pieces, pieces sharing history,
/// stored blocks holding the cut marker, one plain stream, a piece too large for a worker) and
/// damaged ones, the bytes and the error are the same for 1, 2 and 4 threads, the bytes are the
/// file's, and the reader fails exactly where Python's zlib does.
@Suite struct PieceInflationTests {
  /// Text with runs of noise, deterministic.
  static func text(_ count: Int, seed: UInt64) -> [UInt8] {
    var state = seed &* 0x9E37_79B9_7F4A_7C15 &+ 1
    func next() -> UInt64 {
      state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
      return state >> 29
    }
    let words = ["harbour", "lighthouse", "keeper", "chapter", "level", "score", "the", "of", "night", "ship"]
    var out: [UInt8] = []
    out.reserveCapacity(count + 16)
    while out.count < count {
      if next() % 300 == 0 {
        for _ in 0..<(next() % 200) { out.append(UInt8(truncatingIfNeeded: next())) }
      } else {
        out += Array(words[Int(next() % UInt64(words.count))].utf8) + [next() % 12 == 0 ? 0x0A : 0x20]
      }
    }
    return Array(out.prefix(count))
  }

  /// The zlib stream Python writes for `input` in the shape named, and Python's verdict on it:
  /// "ok" when it inflates whole to `input` with nothing left over, else why not.
  static func stream(_ shape: String, of input: String, in dir: TemporaryDirectory) throws -> (
    bytes: [UInt8], verdict: String
  ) {
    let script = """
      import sys, zlib
      shape, data = sys.argv[1], open(sys.argv[2], 'rb').read()
      def flushed(mode, every, level=6):
          c = zlib.compressobj(level)
          out = b''
          for i in range(0, len(data), every):
              out += c.compress(data[i:i + every]) + c.flush(mode)
          return out + c.flush()
      if shape == 'full-flush': s = flushed(zlib.Z_FULL_FLUSH, 300_000)
      elif shape == 'sync-flush': s = flushed(zlib.Z_SYNC_FLUSH, 300_000)
      elif shape == 'stored-markers': s = flushed(zlib.Z_FULL_FLUSH, 50_000, level=0)
      elif shape == 'one-stream': s = zlib.compress(data, 6)
      elif shape == 'over-cap': s = flushed(zlib.Z_FULL_FLUSH, 6_000_000, level=1)
      elif shape == 'tiny-blocks': s = flushed(zlib.Z_BLOCK, 4)
      else:
          s = flushed(zlib.Z_FULL_FLUSH, 300_000)
          if shape == 'bad-adler': s = s[:-1] + bytes([s[-1] ^ 1])
          elif shape == 'truncated': s = s[:-3]
          elif shape == 'trailing': s = s + b'garbage!'
          elif shape == 'cut-short': s = s[:len(s) // 2]
          elif shape == 'bad-start-cut': s = s[:2] + bytes([0x07]) + s[3:]
          elif shape == 'flipped':
              b = bytearray(s); b[len(b) * 2 // 3] ^= 0x10; s = bytes(b)
          elif shape == 'ends-early':
              s = zlib.compress(data[:len(data) // 2], 6) + zlib.compress(data[len(data) // 2:], 6)
      open(sys.argv[3], 'wb').write(s)
      d = zlib.decompressobj()
      try:
          out = d.decompress(s) + d.flush()
          print('ok' if d.eof and not d.unused_data and out == data else
                'ends early' if d.eof else 'truncated' if not d.eof else 'wrong bytes')
      except zlib.error as e:
          print('error: ' + str(e))
      """
    let out = dir.appending("\(shape).z")
    let result = try runProcess("/usr/bin/env", ["python3", "-c", script, shape, input, out])
    #expect(result.status == 0, "\(result.stderr)")
    return (try readFile(out), result.stdout.trimmingCharacters(in: .whitespacesAndNewlines))
  }

  /// The bytes and the error (its description) of reading the file at `path`, whose one entry
  /// holds `stream`, on `threads` threads in reads of `step` bytes.
  static func read(_ path: String, threads: Int, step: Int) throws -> (bytes: [UInt8], error: String?) {
    var limits = XARReader.Limits()
    limits.inflateThreads = threads
    limits.acceptsTruncation = true
    let reader = try XARReader(path: path, limits: limits)
    let data = reader.dataReader(for: reader.entries[0])
    var out: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: step)
    do {
      while true {
        let n = try buffer.withUnsafeMutableBytes { try data.read(into: $0) }
        if n == 0 { return (out, nil) }
        out += buffer[..<n]
      }
    } catch {
      return (out, "\(error)")
    }
  }

  static let shapes = [
    "full-flush", "sync-flush", "stored-markers", "one-stream", "over-cap", "bad-adler", "truncated", "trailing",
    "cut-short", "flipped", "ends-early", "tiny-blocks", "bad-start-cut",
  ]

  @Test(arguments: shapes) func everyThreadCountReadsAsOneInflaterDoes(shape: String) throws {
    let dir = try TemporaryDirectory()
    // Over the output cap: one piece of 6 MB (zeros and text) that a worker may not hold.
    let plain =
      shape == "over-cap"
      ? [UInt8](repeating: 0, count: 6_000_000) + Self.text(7_000_000, seed: 3)
      : shape == "stored-markers"
        ? Array(repeating: [0x00, 0x00, 0xFF, 0xFF, 0x41] as [UInt8], count: 600_000).flatMap { $0 }
        : shape == "tiny-blocks" ? Self.text(1_400_000, seed: 5) : Self.text(12_000_000, seed: 7)
    try writeFile(dir.appending("plain"), plain)
    let (stream, verdict) = try Self.stream(shape, of: dir.appending("plain"), in: dir)
    #expect(stream.count >= 1 << 20, "long enough to be inflated in segments: \(stream.count)")
    let xar = CraftedXAR(
      toc: CraftedXAR.document(
        "<file id=\"1\"><name>big.txt</name><type>file</type>"
          + CraftedXAR.dataElement(stored: stream, plain: plain, offset: 20, encoding: "application/x-gzip")
          + "</file>"),
      heap: stream)
    let path = dir.appending("x.xar")
    try xar.write(to: path)
    if shape == "bad-start-cut" {
      // The file ends 1.5 MB into the data, whose first block is invalid: the reader in order
      // fails on the block, and so must every thread count, whatever it read ahead.
      let bytes = try readFile(path)
      try writeFile(path, Array(bytes.prefix(bytes.count - stream.count + 1_500_000)))
    }

    let one = try Self.read(path, threads: 1, step: 64 << 10)
    for (threads, step) in [(2, 64 << 10), (4, 256 << 10), (2, 1000)] {
      let other = try Self.read(path, threads: threads, step: step)
      #expect(other.error == one.error, "\(threads) threads, reads of \(step)")
      if step >= 64 << 10 {
        #expect(other.bytes == one.bytes, "\(threads) threads: the same bytes before the same end")
      } else {
        #expect(other.bytes == plain || other.error != nil)
      }
    }
    if verdict == "ok" {
      #expect(one.error == nil, "\(shape): \(one.error ?? "")")
      #expect(one.bytes == plain, "\(shape)")
    } else {
      #expect(one.error != nil, "\(shape): Python says \(verdict); pkgtool read it whole")
      #expect(plain.starts(with: one.bytes) || shape == "flipped", "what went out before the failure is the file's")
    }
    switch shape {
    case "bad-adler": #expect(one.error?.contains("incorrect data check") == true, "\(one.error ?? "")")
    case "bad-start-cut": #expect(one.error?.contains("invalid block type") == true, "\(one.error ?? "")")
    case "truncated", "cut-short": #expect(one.error?.contains("truncated") == true, "\(one.error ?? "")")
    case "trailing", "ends-early":
      #expect(one.error?.contains("compressed stream ends after") == true, "\(one.error ?? "")")
    default: break
    }
  }
}
