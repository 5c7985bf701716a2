import Foundation
import LZFSE
import TestSupport

/// The independent implementation: PyPI's `lzfse` (Apple's C reference code), run as a real
/// `python3` subprocess on files in a temporary folder. `scripts/bootstrap.sh` installs it.
enum Reference {
  /// Compresses `data` with Apple's encoder.
  static func compress(_ data: [UInt8]) throws -> [UInt8] {
    try run("compress", data)
  }

  /// Decompresses `data` with Apple's decoder; throws when it refuses. Apple's API returns 0
  /// bytes both for an error and for an empty output, and the wrapper reports both as an error.
  static func decompress(_ data: [UInt8]) throws -> [UInt8] {
    try run("decompress", data)
  }

  private static func run(_ function: String, _ data: [UInt8]) throws -> [UInt8] {
    let folder = try TemporaryDirectory("lzfse-ref")
    try writeFile(folder.appending("in"), data)
    let script = """
      import lzfse, sys
      data = open(sys.argv[1], 'rb').read()
      open(sys.argv[2], 'wb').write(lzfse.\(function)(data))
      """
    let result = try runProcess(
      "/usr/bin/env", ["python3", "-c", script, folder.appending("in"), folder.appending("out")])
    guard result.status == 0 else { throw TestFailure("reference \(function) failed: \(result.stderr)") }
    return try readFile(folder.appending("out"))
  }

  /// Decompresses each stream with Apple's decoder in one subprocess: the output, or nil when
  /// the reference refused the stream (or decoded it to nothing, which its API cannot tell apart).
  static func verdicts(_ streams: [[UInt8]]) throws -> [[UInt8]?] {
    let folder = try TemporaryDirectory("lzfse-ref")
    for (i, stream) in streams.enumerated() { try writeFile(folder.appending("case-\(i)"), stream) }
    let script = """
      import lzfse, sys, os
      folder, count = sys.argv[1], int(sys.argv[2])
      for i in range(count):
          data = open(os.path.join(folder, 'case-%d' % i), 'rb').read()
          try:
              out = lzfse.decompress(data)
          except Exception:
              continue
          open(os.path.join(folder, 'out-%d' % i), 'wb').write(out)
      """
    let result = try runProcess("/usr/bin/env", ["python3", "-c", script, folder.path, String(streams.count)])
    guard result.status == 0 else { throw TestFailure("reference decoding failed: \(result.stderr)") }
    return try (0..<streams.count).map { i in
      let path = folder.appending("out-\(i)")
      return FileManager.default.fileExists(atPath: path) ? try readFile(path) : nil
    }
  }
}

/// A small deterministic PRNG (SplitMix64), so every test input is the same on every run.
struct SeededGenerator: RandomNumberGenerator {
  var state: UInt64
  init(seed: UInt64) { state = seed }
  mutating func next() -> UInt64 {
    state &+= 0x9E37_79B9_7F4A_7C15
    var z = state
    z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
    z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
    return z ^ (z >> 31)
  }
}

/// Test data, all generated from seeds.
enum Samples {
  /// Random bytes (incompressible).
  static func random(_ count: Int, seed: UInt64) -> [UInt8] {
    var generator = SeededGenerator(seed: seed)
    var bytes = [UInt8](repeating: 0, count: count)
    bytes.withUnsafeMutableBytes { raw in
      var i = 0
      while i + 8 <= count {
        raw.storeBytes(of: generator.next(), toByteOffset: i, as: UInt64.self)
        i += 8
      }
      while i < count {
        raw[i] = UInt8(truncatingIfNeeded: generator.next())
        i += 1
      }
    }
    return bytes
  }

  /// English-like text: words from a fixed made-up vocabulary, common ones more often.
  static func text(_ count: Int, seed: UInt64) -> [UInt8] {
    var generator = SeededGenerator(seed: seed)
    let syllables = [
      "ka", "lo", "mi", "ne", "the", "and", "ri", "su", "to", "ve", "qua", "ze", "pro", "ing", "er", "on",
    ]
    var vocabulary: [[UInt8]] = []
    for _ in 0..<600 {
      var word = ""
      for _ in 0...(generator.next() % 3) { word += syllables[Int(generator.next() % UInt64(syllables.count))] }
      vocabulary.append(Array(word.utf8))
    }
    var out: [UInt8] = []
    out.reserveCapacity(count + 32)
    while out.count < count {
      // Skewed choice: the square of a uniform number favours the first words.
      let u = Double(generator.next() % 10_000) / 10_000
      out += vocabulary[Int(u * u * Double(vocabulary.count))]
      out.append(generator.next() % 12 == 0 ? UInt8(ascii: "\n") : UInt8(ascii: " "))
    }
    return Array(out.prefix(count))
  }

  /// Runs of zeros, text and random bytes, in pieces of 1 to 64 KiB.
  static func mixed(_ count: Int, seed: UInt64) -> [UInt8] {
    var generator = SeededGenerator(seed: seed)
    let textPool = text(1 << 20, seed: seed &+ 1)
    let randomPool = random(1 << 20, seed: seed &+ 2)
    var out: [UInt8] = []
    out.reserveCapacity(count)
    while out.count < count {
      let length = min(count - out.count, 1 + Int(generator.next() % 65_536))
      let offset = Int(generator.next() % UInt64((1 << 20) - length))
      switch generator.next() % 3 {
      case 0: out.append(contentsOf: repeatElement(0, count: length))
      case 1: out.append(contentsOf: textPool[offset..<(offset + length)])
      default: out.append(contentsOf: randomPool[offset..<(offset + length)])
      }
    }
    return out
  }
}

/// The block kinds of a stream, in order ("bvx2", "bvxn", ...), read from its block headers.
func blockKinds(_ stream: [UInt8]) -> [String] { blocks(stream).map(\.kind) }

/// The blocks of a stream: each one's kind and its bytes (header included).
func blocks(_ stream: [UInt8]) -> [(kind: String, bytes: ArraySlice<UInt8>)] {
  var kinds: [(kind: String, bytes: ArraySlice<UInt8>)] = []
  var position = 0
  func u32(_ at: Int) -> Int {
    Int(stream[at]) | Int(stream[at + 1]) << 8 | Int(stream[at + 2]) << 16 | Int(stream[at + 3]) << 24
  }
  while position + 4 <= stream.count {
    let kind = String(decoding: stream[position..<(position + 4)], as: UTF8.self)
    let start = position
    switch kind {
    case "bvx-": position += 8 + u32(position + 4)
    case "bvxn": position += 12 + u32(position + 8)
    case "bvx1": position += 772 + u32(position + 20) + u32(position + 24)
    case "bvx2":
      let v0 = UInt64(u32(position + 8)) | UInt64(u32(position + 12)) << 32
      let v1 = UInt64(u32(position + 16)) | UInt64(u32(position + 20)) << 32
      position += u32(position + 24) + Int((v0 >> 20) & 0xfffff) + Int((v1 >> 40) & 0xfffff)
    default:
      kinds.append((kind, stream[start..<min(stream.count, start + 4)]))
      return kinds
    }
    kinds.append((kind, stream[start..<min(stream.count, position)]))
  }
  return kinds
}
