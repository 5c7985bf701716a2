import AppleArchive
import Foundation
import HostedContent
import TestSupport
import Testing

/// docs/format.md's `.aar` limits table is the one place the limits are written down: this reads
/// it and compares every row with what the code applies (``AppleArchiveSource/codecLimits(_:)``
/// under the default ``ReaderLimits``) and with the codec's own defaults.
@Suite struct AppleArchiveLimitsTableTests {
  /// One row: what pkgtool applies, the option that changes it, the codec's default.
  struct Row: Equatable, CustomStringConvertible {
    var applied: UInt64?
    var option: String?
    var codec: UInt64?
    var description: String {
      let applied = applied.map(String.init) ?? "—"
      return "applied \(applied), option \(option ?? "—"), codec \(codec.map(String.init) ?? "—")"
    }
  }

  /// The rows the code says the table must have.
  static var expected: [String: Row] {
    let reader = ReaderLimits()
    let applied = AppleArchiveSource.codecLimits(reader)
    let codec = AppleArchiveLimits()
    return [
      "header size": Row(applied: UInt64(applied.maxHeaderSize), codec: UInt64(codec.maxHeaderSize)),
      "one path or link target": Row(applied: UInt64(applied.maxPathBytes), codec: UInt64(codec.maxPathBytes)),
      "all paths and link targets": Row(applied: reader.maxTotalPathBytes, option: "--max-path-bytes"),
      "folder depth": Row(applied: UInt64(reader.maxDepth)),
      "headers, XAT and ACL blobs in all": Row(applied: reader.maxTOCBytes, option: "--max-toc-size"),
      "entries": Row(applied: UInt64(applied.maxEntries), option: "--max-entries", codec: UInt64(codec.maxEntries)),
      "block size a framing declares": Row(applied: applied.maxBlockSize, codec: codec.maxBlockSize),
      "expansion ratio, per block": Row(applied: applied.maxRatio, option: "--max-ratio", codec: codec.maxRatio),
      "decoded in all (headers and blobs)": Row(applied: applied.maxDecodedTotal, codec: codec.maxDecodedTotal),
    ]
  }

  /// "16 KiB", "4,096 bytes", "2,000,000" as a number; "—" as nil.
  static func number(_ cell: String) throws -> UInt64? {
    if cell == "—" { return nil }
    let parts = cell.split(separator: " ")
    let digits = try #require(UInt64(parts[0].replacingOccurrences(of: ",", with: "")), "not a number: \(cell)")
    let unit = parts.count > 1 ? String(parts[1]) : ""
    let scale: UInt64 = try #require(["": 1, "bytes": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30][unit])
    return digits * scale
  }

  /// The table's rows, by limit; fails when the table is not found.
  static func documentedRows() throws -> [String: Row] {
    let text = String(decoding: try readFile(repositoryRoot + "/docs/format.md"), as: UTF8.self)
    let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    let start = try #require(
      lines.firstIndex { $0.hasPrefix("| limit | pkgtool applies | option | codec default |") },
      "docs/format.md lost its .aar limits table")
    var rows: [String: Row] = [:]
    for line in lines[(start + 2)...] {
      guard line.hasPrefix("|") else { break }
      let cells = line.split(separator: "|").map {
        $0.trimmingCharacters(in: .whitespaces).replacingOccurrences(of: "`", with: "")
      }
      try #require(cells.count == 4, "a row of four cells: \(line)")
      #expect(rows[cells[0]] == nil, "\(cells[0]) is in the table twice")
      rows[cells[0]] = Row(
        applied: try number(cells[1]), option: cells[2] == "—" ? nil : cells[2], codec: try number(cells[3]))
    }
    return rows
  }

  @Test func everyRowMatchesTheCode() throws {
    let documented = try Self.documentedRows()
    let expected = Self.expected
    #expect(Set(documented.keys) == Set(expected.keys), "the table's rows and the code's limits differ")
    for (name, row) in expected {
      let shown = documented[name].map(String.init) ?? "missing"
      #expect(documented[name] == row, "docs/format.md, '\(name)': \(shown); the code: \(row)")
    }
  }
}
