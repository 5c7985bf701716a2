import Foundation
import HostedContent
import TestSupport
import Testing

/// "Inspect a broken download", through the real binary: a package built by `pkgtool build`,
/// cut at several offsets or damaged at its tail. `unpack --keep-going --json` must write
/// exactly the entries whose data lies before the cut (computed independently, by Python, from
/// the table of contents) and list every other one as skipped, with a reason; a plain `validate`
/// or `unpack` refuses the file and says it is truncated.
@Suite struct BrokenDownloadTests {
  /// One entry of the TOC as Python reads it: its path, and where its data ends in the file
  /// (nil without data).
  struct TOCEntry: Decodable {
    var path: String
    var end: UInt64?
  }

  struct Layout: Decodable {
    var headerSize: UInt64
    var tocLength: UInt64
    var heapStart: UInt64
    var size: UInt64
    var entries: [TOCEntry]
  }

  /// Reads the XAR's TOC with Python's zlib and ElementTree (not pkgtool's reader).
  static func layout(_ path: String) throws -> Layout {
    let script = """
      import json, struct, sys, zlib, xml.etree.ElementTree as ET
      b = open(sys.argv[1], 'rb').read()
      hs = struct.unpack('>H', b[4:6])[0]
      tl = struct.unpack('>Q', b[8:16])[0]
      heap = hs + tl
      root = ET.fromstring(zlib.decompress(b[hs:heap]))
      out = []
      def walk(node, prefix):
          for f in node.findall('file'):
              path = prefix + f.find('name').text
              d = f.find('data')
              end = heap + int(d.find('offset').text) + int(d.find('length').text) if d is not None else None
              out.append({'path': path, 'end': end})
              walk(f, path + '/')
      walk(root.find('toc'), '')
      print(json.dumps({'headerSize': hs, 'tocLength': tl, 'heapStart': heap, 'size': len(b), 'entries': out}))
      """
    let result = try runProcess("/usr/bin/env", ["python3", "-c", script, path])
    guard result.status == 0 else { throw TestFailure("python: \(result.stderr)") }
    return try JSONDecoder().decode(Layout.self, from: Data(result.stdout.utf8))
  }

  /// A content project with files of many sizes in folders, built by the binary.
  static func builtPackage(in dir: TemporaryDirectory, format: String = "xar") throws -> String {
    let project = dir.appending("project")
    #expect(try pkgtool(["init", project, "--product-id", "com.example.broken"]).status == 0)
    var generator = SystemRandomNumberGenerator()
    for i in 0..<24 {
      // Random letters: they do not compress away, so the heap is long and cuts land inside files.
      let letters = (0..<(500 + i * 700)).map { _ in
        Character(UnicodeScalar(UInt8.random(in: 97...122, using: &generator)))
      }
      try writeFile(project + "/Contents/part\(i % 3)/file\(i).txt", String(letters))
    }
    let output = dir.appending(format == "zip" ? "book.zip" : "book.pkg")
    let built = try pkgtool(["build", project, "-o", output, "--format", format, "-q"])
    #expect(built.status == 0, "\(built.stderr)")
    return output
  }

  static func cut(_ package: String, at length: UInt64, to path: String) throws {
    let bytes = try Data(contentsOf: URL(fileURLWithPath: package))
    try bytes.prefix(Int(length)).write(to: URL(fileURLWithPath: path))
  }

  struct Unpacked: Decodable {
    struct Skipped: Decodable, Hashable {
      var path: String
      var reason: String
    }
    struct FindingLine: Decodable {
      var rule: String
      var message: String
      var hint: String?
    }
    var unpacked: Bool
    var skipped: [Skipped]
    var findings: [FindingLine]
    var writtenSize: UInt64
  }

  /// Every path under `folder` (files, folders, symlinks), relative to it.
  static func walk(_ folder: String) throws -> Set<String> {
    Set(try snapshot(folder).keys)
  }

  /// Runs `unpack --keep-going --json` on `package` and checks the invariant: every entry of
  /// the TOC is written or skipped, never both, never neither; returns what was skipped.
  static func keepGoing(_ package: String, entries: [TOCEntry], in dir: TemporaryDirectory, _ label: String) throws
    -> (written: Set<String>, skipped: [Unpacked.Skipped], result: Unpacked)
  {
    let output = dir.appending("out-\(label)")
    let run = try pkgtool(["unpack", package, "-o", output, "--keep-going", "--json"])
    // The README's exit status: a package that broke a rule exits 1, even when --keep-going
    // extracted what it could.
    #expect(run.status == 1, "\(label): \(run.stderr)")
    let result = try JSONDecoder().decode(Unpacked.self, from: Data(run.stdout.utf8))
    #expect(result.unpacked, "\(label)")
    let written = try walk(output)
    let skipped = Set(result.skipped.map(\.path))
    let all = Set(entries.map(\.path))
    #expect(written.isDisjoint(with: skipped), "\(label): written and skipped: \(written.intersection(skipped))")
    #expect(
      written.union(skipped) == all, "\(label): neither written nor skipped: \(all.subtracting(written.union(skipped)))"
    )
    #expect(result.skipped.count == skipped.count, "\(label): an entry listed twice")
    #expect(result.skipped.allSatisfy { !$0.reason.isEmpty }, "\(label)")
    // The bytes it says it wrote are the bytes of the files there (it gave the package's
    // whole content size before).
    let bytes = try snapshot(output).values.filter { $0.kind == .file }.reduce(0) { $0 + $1.bytes.count }
    #expect(result.writtenSize == UInt64(bytes), "\(label)")
    return (written, result.skipped, result)
  }

  /// Cuts in the heap (at an entry boundary, inside a file, one byte short): what lies before
  /// the cut is written, verified; everything past it is listed, with the cut in its reason.
  @Test func aCutInTheHeapKeepsWhatLiesBeforeIt() throws {
    let dir = try TemporaryDirectory()
    let package = try Self.builtPackage(in: dir)
    let layout = try Self.layout(package)
    let ends = layout.entries.compactMap(\.end).sorted()
    #expect(ends.count == 25)
    let cuts: [(String, UInt64)] = [
      ("boundary", ends[ends.count / 2]),
      ("inside", (ends[ends.count / 3] + ends[ends.count / 3 + 1]) / 2),
      ("short", layout.size - 1),
      ("checksum only", layout.heapStart + 20),
    ]
    for (label, offset) in cuts {
      let path = dir.appending("cut-\(label.replacingOccurrences(of: " ", with: "-")).pkg")
      try Self.cut(package, at: offset, to: path)
      let (written, skipped, result) = try Self.keepGoing(path, entries: layout.entries, in: dir, label)
      // Computed from Python's reading of the TOC: data wholly before the cut, or none.
      let before = Set(layout.entries.filter { ($0.end ?? 0) <= offset }.map(\.path))
      #expect(written == before, "\(label): cut at \(offset)")
      #expect(Set(skipped.map(\.path)) == Set(layout.entries.map(\.path)).subtracting(before), "\(label)")
      for entry in skipped {
        #expect(
          entry.reason.contains("past the end of the file (cut at byte \(offset) of the \(layout.size)"),
          "\(label): \(entry.reason)")
      }
      let cutFinding = result.findings.first { $0.message.contains("the file is truncated") }
      #expect(cutFinding?.rule == "archive-integrity", "\(label): \(result.findings.map(\.message))")
      #expect(cutFinding?.hint?.contains("fetch it again") == true, "\(label)")
      #expect(
        cutFinding?.message.contains("it ends at byte \(offset), its table of contents describes \(layout.size) bytes")
          == true, "\(label): \(cutFinding?.message ?? "")")
      // The files written are the package's bytes: compare with the project.
      for file in written where file.hasPrefix("Contents/") && file.hasSuffix(".txt") {
        let original = try Data(contentsOf: URL(fileURLWithPath: dir.appending("project/" + file)))
        let unpacked = try Data(contentsOf: URL(fileURLWithPath: dir.appending("out-\(label)/" + file)))
        #expect(original == unpacked, "\(label): \(file)")
      }

      // Without --keep-going: refused whole, named as a cut, with the way to look inside.
      let validated = try pkgtool(["validate", path])
      #expect(validated.status == 1, "\(label)")
      #expect(
        validated.stdout.contains("the file is truncated: it ends at byte \(offset), its table of contents describes"),
        "\(label): \(validated.stdout)")
      #expect(validated.stdout.contains("fetch it again"), "\(label)")
      #expect(!validated.stdout.contains("build it again"), "\(label)")
      let refused = try pkgtool(["unpack", path, "-o", dir.appending("plain-\(label)")])
      #expect(refused.status == 1, "\(label)")
      #expect(refused.stdout.contains("unpack --keep-going"), "\(label): \(refused.stdout)")
      #expect(!FileManager.default.fileExists(atPath: dir.appending("plain-\(label)")))

      // The text output lists the same entries, one line each, with the reason.
      let text = try pkgtool(["unpack", path, "-o", dir.appending("text-\(label)"), "--keep-going"])
      #expect(text.status == 1)
      let lines = text.stdout.split(separator: "\n").filter { $0.hasPrefix("skipped: ") }
      #expect(lines.count == skipped.count, "\(label)")
      for entry in skipped { #expect(lines.contains("skipped: \(entry.path): \(entry.reason)"), "\(label)") }
      #expect(text.stdout.contains("\(skipped.count) \(skipped.count == 1 ? "entry" : "entries") skipped"), "\(label)")
    }
  }

  /// Cuts before the heap (header, TOC, the TOC's checksum): nothing can be verified, so
  /// nothing is written, and the message says so.
  @Test func aCutBeforeTheHeapHasNothingToRecover() throws {
    let dir = try TemporaryDirectory()
    let package = try Self.builtPackage(in: dir)
    let layout = try Self.layout(package)
    let cuts: [(String, UInt64, String)] = [
      ("header", 20, "truncated inside its XAR header"),
      ("toc", layout.headerSize + layout.tocLength / 2, "truncated inside its table of contents"),
      ("toc checksum", layout.heapStart + 10, "the checksum of its table of contents lies past the cut"),
    ]
    for (label, offset, words) in cuts {
      let path = dir.appending("cut-\(label.replacingOccurrences(of: " ", with: "-")).pkg")
      try Self.cut(package, at: offset, to: path)
      for arguments in [["validate", path], ["unpack", path, "-o", dir.appending("o"), "--keep-going"]] {
        let run = try pkgtool(arguments)
        #expect(run.status == 1, "\(label) \(arguments[0]): \(run.stderr)")
        #expect(run.stdout.contains(words), "\(label) \(arguments[0]): \(run.stdout)")
        #expect(run.stdout.contains("nothing can be recovered"), "\(label) \(arguments[0])")
        #expect(run.stdout.contains("fetch it again"), "\(label) \(arguments[0])")
        #expect(!run.stdout.contains("--keep-going"), "\(label) \(arguments[0]): nothing to look at")
        #expect(!FileManager.default.fileExists(atPath: dir.appending("o")))
      }
    }
  }

  /// A damaged tail (the heap bytes of the last files overwritten): each damaged file is
  /// skipped with its reason, every other one written; "0 entries skipped" never again.
  @Test func aDamagedTailListsExactlyTheFilesNotWritten() throws {
    let dir = try TemporaryDirectory()
    let package = try Self.builtPackage(in: dir)
    let layout = try Self.layout(package)
    let lastEnd = try #require(layout.entries.compactMap(\.end).max())
    let ends = layout.entries.compactMap(\.end).sorted()
    let damageFrom = ends[ends.count - 12] + 1  // inside the 11th file from the end
    var bytes = try Data(contentsOf: URL(fileURLWithPath: package))
    for i in Int(damageFrom)..<Int(lastEnd) { bytes[i] ^= 0x5A }
    let damaged = dir.appending("damaged.pkg")
    try bytes.write(to: URL(fileURLWithPath: damaged))
    let (written, skipped, _) = try Self.keepGoing(damaged, entries: layout.entries, in: dir, "tail")
    let hit = Set(layout.entries.filter { ($0.end ?? 0) > damageFrom }.map(\.path))
    #expect(hit.count == 11)
    #expect(Set(skipped.map(\.path)) == hit)
    #expect(written == Set(layout.entries.map(\.path)).subtracting(hit))
  }

  /// A zip cut before its central directory: named as such, nothing written, fetch it again.
  @Test func aCutZipIsNamedAndRefused() throws {
    let dir = try TemporaryDirectory()
    let package = try Self.builtPackage(in: dir, format: "zip")
    let size = try FileManager.default.attributesOfItem(atPath: package)[.size] as! Int
    let path = dir.appending("cut.zip")
    try Self.cut(package, at: UInt64(size / 2), to: path)
    for arguments in [
      ["validate", path], ["unpack", path, "-o", dir.appending("o")],
      ["unpack", path, "-o", dir.appending("o"), "--keep-going"],
    ] {
      let run = try pkgtool(arguments)
      #expect(run.status == 1, "\(arguments): \(run.stderr)")
      #expect(run.stdout.contains("cut.zip: error: zip: no readable central directory"), "\(arguments): \(run.stdout)")
      #expect(run.stdout.contains("the file is cut off or damaged"), "\(arguments)")
      #expect(run.stdout.contains("fetch it again"), "\(arguments)")
      #expect(!FileManager.default.fileExists(atPath: dir.appending("o")), "\(arguments)")
    }
  }
}
