import Foundation
import HostedContent
import SystemIO
import TestSupport
import Testing
import XAR

/// The hashes pkgtool computes (the package digest, on the caller's thread or one of its own,
/// and every XAR checksum algorithm fed in uneven pieces) give what Python's hashlib gives for
/// the same files: empty, one byte, either side of a block (64 bytes), and across the 1 MiB
/// read chunk and the 2 MiB mapped window.
@Suite struct DigestTests {
  static let sizes = [0, 1, 63, 64, 65, 1 << 20, (1 << 20) + 1, (2 << 20) - 1, (2 << 20) + 1, (5 << 20) + 17]

  /// Each file's digests by hashlib, keyed by algorithm name then file path.
  static func hashlib(_ paths: [String]) throws -> [String: [String: String]] {
    let script = """
      import hashlib, json, sys
      out = {}
      for name in ("sha1", "md5", "sha256", "sha512"):
          out[name] = {p: hashlib.new(name, open(p, "rb").read()).hexdigest() for p in sys.argv[1:]}
      print(json.dumps(out))
      """
    let result = try runProcess("/usr/bin/env", ["python3", "-c", script] + paths)
    #expect(result.status == 0, "\(result.stderr)")
    return try JSONDecoder().decode([String: [String: String]].self, from: Data(result.stdout.utf8))
  }

  /// Random bytes of each size in `dir`, one file each.
  static func files(in dir: TemporaryDirectory) throws -> [String] {
    let random = try #require(FileHandle(forReadingAtPath: "/dev/urandom"))
    defer { try? random.close() }
    return try sizes.map { size in
      let path = dir.appending("\(size).dat")
      try writeFile(path, size == 0 ? [] : [UInt8](try #require(try random.read(upToCount: size))))
      return path
    }
  }

  @Test func packageDigestMatchesHashlib() throws {
    let dir = try TemporaryDirectory()
    let paths = try Self.files(in: dir)
    let expected = try Self.hashlib(paths)["sha256"]!
    for path in paths {
      let file = try FileDescriptor.open(regularFile: path)
      #expect(try PackageDigest.sha256(of: file) == expected[path], "\(path)")
      let running = PackageDigest.start(of: file)
      #expect(try running.value() == expected[path], "\(path) (own thread)")
      #expect(try running.value() == expected[path], "\(path) (asked twice)")
    }
  }

  @Test(arguments: [XARChecksumAlgorithm.sha1, .md5, .sha256, .sha512])
  func xarHasherInUnevenPiecesMatchesHashlib(algorithm: XARChecksumAlgorithm) throws {
    let dir = try TemporaryDirectory()
    let paths = try Self.files(in: dir)
    let expected = try Self.hashlib(paths)[algorithm.styleName]!
    // Pieces that end inside, on and past a 64-byte block, and large ones.
    let pieces = [1, 7, 63, 64, 65, 4095, 65_536, 1 << 20]
    for path in paths {
      let bytes = try readFile(path)
      var hasher = XARHasher(algorithm)
      var offset = 0
      var turn = 0
      while offset < bytes.count {
        let end = min(bytes.count, offset + pieces[turn % pieces.count])
        bytes[offset..<end].withUnsafeBytes { hasher.update($0) }
        offset = end
        turn += 1
      }
      #expect(hasher.finalize().hex == expected[path], "\(path)")
    }
  }

  /// `info` reports the package's SHA-256 (hashed beside the pass) and, with the list of files,
  /// each file's; without the list, none is computed, and the package digest is the same.
  @Test func infoDigestsMatchHashlib() throws {
    let dir = try TemporaryDirectory()
    let content = dir.appending("project/Contents")
    try FileManager.default.createDirectory(atPath: content, withIntermediateDirectories: true)
    var sources: [String: String] = [:]
    for size in [0, 65, (2 << 20) + 1] {
      let path = content + "/\(size).dat"
      try writeFile(path, (0..<size).map { UInt8(truncatingIfNeeded: $0 &* 131 &+ $0 >> 9) })
      sources["Contents/\(size).dat"] = path
    }
    try writeFile(
      dir.appending("project/ContentInfo.plist"),
      ContentInfo(productIdentifier: "com.example.digest", contentVersion: ContentVersion("1.0")!).encoded())
    var options = Build.Options()
    options.output = dir.appending("p.pkg")
    let built = try Build.run(directory: dir.appending("project"), options: options)
    let hashes = try Self.hashlib([dir.appending("p.pkg")] + sources.values.sorted())["sha256"]!
    #expect(built.sha256 == hashes[dir.appending("p.pkg")])

    let listed = try PackageInfo.run(path: dir.appending("p.pkg"), includeFiles: true)
    #expect(listed.sha256 == hashes[dir.appending("p.pkg")])
    let rows = Dictionary(uniqueKeysWithValues: (listed.files ?? []).map { ($0.path, $0.sha256) })
    for (entry, source) in sources { #expect(rows[entry] == hashes[source], "\(entry)") }

    let plain = try PackageInfo.run(path: dir.appending("p.pkg"), includeFiles: false)
    #expect(plain.files == nil)
    #expect(plain.sha256 == hashes[dir.appending("p.pkg")])
  }
}
