import AppleArchive
import Crypto
import Foundation
import SystemIO
import Testing

/// SHA-256 for tests.
enum SHA256Digest {
  static func of(_ bytes: [UInt8]) -> [UInt8] { Array(SHA256.hash(data: bytes)) }
}

/// An archive's listing as scripts/aar_oracle.py prints it: type, path and link in hex, mode,
/// data size and SHA-256.
struct OracleListing: Equatable, CustomStringConvertible {
  var container: String
  var entries: [[String: String]]

  var description: String { "\(container) \(entries)" }

  /// What our reader lists.
  static func ours(_ path: String) throws -> OracleListing {
    let reader = try AppleArchiveReader(file: try FileDescriptor.open(reading: path))
    let container =
      switch reader.compression {
      case .none: "raw"
      case .zlib: "pbzz"
      case .lzma: "pbzx"
      case .lzfse: "pbze"
      }
    let entries = try readEverything(reader).map { entry, data -> [String: String] in
      [
        "type": String(UnicodeScalar(entry.kind.rawValue)),
        "path": AppleArchiveError.hex(entry.path),
        "link": entry.linkTarget.map(AppleArchiveError.hex) ?? "null",
        "mode": entry.mode.map { String($0) } ?? "null",
        "size": data.map { String($0.count) } ?? "null",
        "sha256": data.map { AppleArchiveError.hex(SHA256Digest.of($0)) } ?? "null",
      ]
    }
    return OracleListing(container: container, entries: entries)
  }

  /// What scripts/aar_oracle.py lists.
  static func oracle(_ path: String) throws -> OracleListing {
    let result = try run("/usr/bin/env", ["python3", repositoryRoot + "/scripts/aar_oracle.py", path])
    guard result.status == 0 else {
      Issue.record("aar_oracle.py failed: \(result.stderr)")
      return OracleListing(container: "failed", entries: [])
    }
    let json = try JSONSerialization.jsonObject(with: result.stdout) as! [String: Any]
    let entries = (json["entries"] as! [[String: Any]]).map { entry in
      entry.mapValues { value -> String in
        if value is NSNull { return "null" }
        return "\(value)"
      }
    }
    return OracleListing(container: json["container"] as! String, entries: entries)
  }
}
