import AppleArchive
import Foundation
import LZFSE
import Testing

/// The repository's root, from this file's place in it.
let repositoryRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
  .deletingLastPathComponent().path

/// Apple-written archives beside the repository (CI has them; never copied into it).
let interopFolder = repositoryRoot + "/../shared/interop/aar"
/// True when the interop archives are there (CI has ../shared; a clone elsewhere may not).
let interopAvailable = FileManager.default.fileExists(atPath: interopFolder)

/// Whether `Sources/LZFSE` can decode yet: its skeleton throws "LZFSE decoding is not written
/// yet". Tests that need LZFSE run only once it can (its encoder traps until then, so it is
/// gated on the same probe).
let lzfseAvailable: Bool = {
  // An LZFSE stream of "pkgtool" four times (an uncompressed block), made by PyPI's lzfse.
  let stream: [UInt8] =
    Array("bvx-".utf8) + [28, 0, 0, 0] + Array(String(repeating: "pkgtool", count: 4).utf8) + Array("bvx$".utf8)
  do throws(LZFSE.DecodeError) {
    _ = try LZFSE.decode(stream, limit: 1 << 10)
    return true
  } catch {
    return !error.description.contains("not written yet")
  }
}()

/// Why the LZFSE tests are skipped.
let lzfseMissing: Comment = "LZFSE is not written yet (Sources/LZFSE's skeleton throws); runs once it is merged"

/// A folder under the system's temporary folder, removed when the value goes.
final class ScratchFolder {
  let path: String
  init() throws {
    path = NSTemporaryDirectory() + "/aar-test-" + UUID().uuidString
    try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
  }
  deinit { try? FileManager.default.removeItem(atPath: path) }
}

/// Runs a program; returns its exit status, standard output and standard error.
func run(_ executable: String, _ arguments: [String]) throws -> (status: Int32, stdout: Data, stderr: String) {
  let process = Process()
  process.executableURL = URL(fileURLWithPath: executable)
  process.arguments = arguments
  let out = Pipe()
  let err = Pipe()
  process.standardOutput = out
  process.standardError = err
  try process.run()
  let stdout = out.fileHandleForReading.readDataToEndOfFile()
  let stderr = err.fileHandleForReading.readDataToEndOfFile()
  process.waitUntilExit()
  return (process.terminationStatus, stdout, String(decoding: stderr, as: UTF8.self))
}

/// Every entry and its whole data (nil when the entry has no DAT), read in chunks of `chunk` bytes.
func readEverything(_ reader: AppleArchiveReader, chunk: Int = 64 << 10) throws -> [(
  entry: AppleArchiveEntry, data: [UInt8]?
)] {
  var out: [(AppleArchiveEntry, [UInt8]?)] = []
  var buffer = [UInt8](repeating: 0, count: chunk)
  while let entry = try reader.next() {
    guard entry.dataSize != nil else {
      out.append((entry, nil))
      continue
    }
    var data: [UInt8] = []
    while true {
      let n = try buffer.withUnsafeMutableBytes { try reader.readData(into: $0) }
      if n == 0 { break }
      data += buffer[..<n]
    }
    out.append((entry, data))
  }
  return out
}

/// The error `body` throws, which must be an ``AppleArchiveError``.
func archiveError(_ body: () throws -> Void) -> AppleArchiveError? {
  do {
    try body()
    return nil
  } catch let error as AppleArchiveError {
    return error
  } catch {
    Issue.record("not an AppleArchiveError: \(error)")
    return nil
  }
}

// MARK: Building archives by hand

/// Little-endian bytes of `value`.
func le(_ value: UInt64, _ count: Int) -> [UInt8] {
  (0..<count).map { UInt8(truncatingIfNeeded: value >> (8 * UInt64($0))) }
}

/// Big-endian 8 bytes of `value`.
func be64(_ value: UInt64) -> [UInt8] {
  (0..<8).reversed().map { UInt8(truncatingIfNeeded: value >> (8 * UInt64($0))) }
}

/// A field: its key and subtype, then its value.
func field(_ keyAndSubtype: String, _ value: [UInt8]) -> [UInt8] { Array(keyAndSubtype.utf8) + value }

/// A `P` field (a u16 length, then the bytes).
func stringField(_ key: String, _ bytes: [UInt8]) -> [UInt8] { field(key + "P", le(UInt64(bytes.count), 2) + bytes) }

/// A header: magic, size (the real one unless given), fields.
func header(_ fields: [[UInt8]], magic: String = "AA01", size: Int? = nil) -> [UInt8] {
  let body = fields.joined()
  let total = size ?? 6 + body.count
  return Array(magic.utf8) + le(UInt64(total), 2) + body
}

/// A directory entry.
func directoryEntry(_ path: String) -> [UInt8] {
  header([field("TYP1", [UInt8(ascii: "D")]), stringField("PAT", Array(path.utf8)), field("MOD2", le(0o755, 2))])
}

/// A file entry with its data after it, and any more fields.
func fileEntry(_ path: String, _ data: [UInt8], extra: [[UInt8]] = []) -> [UInt8] {
  header(
    [field("TYP1", [UInt8(ascii: "F")]), stringField("PAT", Array(path.utf8)), field("MOD2", le(0o644, 2))] + extra
      + [field("DATB", le(UInt64(data.count), 4))]) + data
}

/// A `pbz*` framing around `blocks` (raw size, compressed size, bytes), as given.
func framed(_ letter: String, blockSize: UInt64, _ blocks: [(raw: UInt64, compressed: UInt64, bytes: [UInt8])])
  -> [UInt8]
{
  var out = Array(("pbz" + letter).utf8) + be64(blockSize)
  for block in blocks { out += be64(block.raw) + be64(block.compressed) + block.bytes }
  return out
}
