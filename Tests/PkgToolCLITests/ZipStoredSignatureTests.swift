import Foundation
import TestSupport
import Testing

/// libarchive writes a stored zip entry with its CRC and sizes in a data descriptor after the
/// data, so a streaming reader finds where stored data ends by looking for a zip signature, and
/// `validate` refuses stored data that holds one. `build --format zip` must never write such an
/// entry: a file whose bytes hold a signature (a nested zip, noise that happens to) is deflated,
/// whether it is gathered whole or read ahead because it is larger. Checked by the real binary's
/// own `validate`, Python's `zipfile` (each entry's method) and bsdtar reading from a pipe.
@Suite struct ZipStoredSignatureTests {
  /// Noise without a single `P` (0x50), so that it holds no zip signature but the ones planted.
  static func noise(_ count: Int, seed: UInt64) -> [UInt8] {
    var bytes = DeflateDecisionTests.bytes(count, seed: seed, random: true)
    for i in bytes.indices where bytes[i] == 0x50 { bytes[i] = 0x51 }
    return bytes
  }

  static func plant(_ signature: [UInt8], at offset: Int, in bytes: inout [UInt8]) {
    bytes.replaceSubrange(offset..<(offset + signature.count), with: signature)
  }

  /// Each entry's compression method, read by Python's zipfile: 0 stored, 8 deflated.
  static func methods(_ zip: String) throws -> [String: Int] {
    let script = """
      import json, sys, zipfile
      print(json.dumps({i.filename: i.compress_type for i in zipfile.ZipFile(sys.argv[1]).infolist()}))
      """
    let result = try runProcess("/usr/bin/env", ["python3", "-c", script, zip])
    #expect(result.status == 0, "\(result.stderr)")
    return try JSONDecoder().decode([String: Int].self, from: Data(result.stdout.utf8))
  }

  struct Summary: Decodable {
    var deflatedForSignatureFiles: Int
  }

  @Test(arguments: ["default", "none"])
  func storedDataNeverHoldsAZipSignature(compression: String) throws {
    let dir = try TemporaryDirectory()
    #expect(try pkgtool(["init", "Book", "--product-id", "com.example.book"], in: dir.path).status == 0)
    // A zip made by bsdtar: already compressed by its magic bytes, full of signatures.
    let inner = dir.appending("inner")
    try writeFile(inner + "/a.txt", "hello\n")
    try writeFile(inner + "/b.bin", Self.noise(100_000, seed: 9))
    let nested = try runProcess(
      "/usr/bin/env", ["bsdtar", "--format", "zip", "-cf", "Book/Contents/nested.zip", "-C", inner, "."], in: dir.path)
    #expect(nested.status == 0, "\(nested.stderr)")
    var files: [String: [UInt8]] = [:]
    // Gathered whole (1 MiB): a data descriptor's signature in the middle.
    files["whole.dat"] = Self.noise(1 << 20, seed: 1)
    Self.plant([0x50, 0x4B, 0x07, 0x08], at: 500_000, in: &files["whole.dat"]!)
    // Larger than what is gathered (4 MiB): a central directory's signature past it.
    files["large.dat"] = Self.noise(6 << 20, seed: 2)
    Self.plant([0x50, 0x4B, 0x01, 0x02], at: (5 << 20) + 100, in: &files["large.dat"]!)
    // An end record's signature split across the 1 MiB chunks the file is read ahead in.
    files["split.dat"] = Self.noise(6 << 20, seed: 3)
    Self.plant([0x50, 0x4B, 0x05, 0x06], at: (2 << 20) - 2, in: &files["split.dat"]!)
    // Noise with no signature, whole and large: stored.
    files["clean.dat"] = Self.noise(1 << 20, seed: 4)
    files["cleanlarge.dat"] = Self.noise(6 << 20, seed: 5)
    // Nothing to deflate: stored, and counted as empty, not as deflated.
    files["empty.dat"] = []
    for (name, bytes) in files { try writeFile(dir.appending("Book/Contents/" + name), bytes) }

    let built = try pkgtool(
      ["build", "Book", "-o", "x.zip", "--compression", compression, "--json"], in: dir.path)
    #expect(built.status == 0, "\(built.stderr)")
    let summary = try JSONDecoder().decode(Summary.self, from: Data(built.stdout.utf8))
    #expect(summary.deflatedForSignatureFiles == 4)
    let text = try pkgtool(["build", "Book", "-o", "y.zip", "--compression", compression], in: dir.path)
    #expect(
      text.stdout.contains(
        compression == "none" ? "4 deflated as their bytes hold a zip signature" : "4 hold a zip signature"),
      "\(text.stdout)")

    let validated = try pkgtool(["validate", "x.zip"], in: dir.path)
    #expect(validated.status == 0, "\(validated.stdout)\(validated.stderr)")
    let methods = try Self.methods(dir.appending("x.zip"))
    for name in ["nested.zip", "whole.dat", "large.dat", "split.dat"] {
      #expect(methods["Contents/" + name] == 8, "\(name): \(methods)")
    }
    if compression != "none" {
      #expect(text.stdout.contains("(5 deflated, 0 stored as already compressed"), "\(text.stdout)")
      #expect(text.stdout.contains(", 1 empty"), "\(text.stdout)")
    }
    for name in ["clean.dat", "cleanlarge.dat", "empty.dat"] {
      #expect(methods["Contents/" + name] == 0, "\(name): \(methods)")
    }
    // A streaming reader gets every file whole.
    let out = dir.appending("out")
    try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: true)
    let streamed = try runProcess("/bin/sh", ["-c", #"cat "$0" | bsdtar -xf - -C "$1""#, dir.appending("x.zip"), out])
    #expect(streamed.status == 0, "\(streamed.stderr)")
    for (name, bytes) in files {
      #expect(try readFile(out + "/Contents/" + name) == bytes, "\(name)")
    }
    #expect(try readFile(out + "/Contents/nested.zip") == readFile(dir.appending("Book/Contents/nested.zip")))
  }
}

/// `--compression` reaches a zip's deflate: `fast` is level 1, `best` level 9 (it was zlib's
/// default 6 whatever was asked). Checked against Python's zlib at the same levels, on text.
@Suite struct ZipDeflateLevelTests {
  @Test func theLevelAskedForIsTheLevelUsed() throws {
    let dir = try TemporaryDirectory()
    #expect(try pkgtool(["init", "Book", "--product-id", "com.example.book"], in: dir.path).status == 0)
    let text = DeflateDecisionTests.bytes(3 << 20, seed: 7, random: false)
    try writeFile(dir.appending("Book/Contents/notes.txt"), text)
    let script = """
      import sys, zipfile, zlib
      data = open(sys.argv[1], 'rb').read()
      size = zipfile.ZipFile(sys.argv[2]).getinfo('Contents/notes.txt').compress_size
      o = zlib.compressobj(int(sys.argv[3]), zlib.DEFLATED, -15)
      print(size, len(o.compress(data) + o.flush()))
      """
    for (compression, level) in [("fast", 1), ("default", 5), ("best", 9)] {
      let built = try pkgtool(
        ["build", "Book", "-o", compression + ".zip", "--compression", compression], in: dir.path)
      #expect(built.status == 0, "\(built.stderr)")
      let sizes = try runProcess(
        "/usr/bin/env",
        [
          "python3", "-c", script, dir.appending("Book/Contents/notes.txt"), dir.appending(compression + ".zip"),
          String(level),
        ])
      let pair = sizes.stdout.split(separator: " ").compactMap {
        Int($0.trimmingCharacters(in: .whitespacesAndNewlines))
      }
      #expect(
        pair.count == 2 && pair[0] == pair[1],
        "\(compression): zip and zlib level \(level): \(sizes.stdout)\(sizes.stderr)")
    }
  }
}
