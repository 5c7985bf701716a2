import TextCoding

/// Why a XAR file could not be read or written. Every case says what is wrong and where.
package enum XARError: Error, Equatable, CustomStringConvertible, Sendable {
  // Header
  case truncatedHeader(available: Int)
  case notXAR
  case unsupportedVersion(UInt16)
  case badHeaderSize(UInt16)
  case unsupportedChecksum(String)
  // TOC
  case tocTooLarge(compressed: UInt64, uncompressed: UInt64, limit: UInt64)
  case truncatedTOC(declared: UInt64, available: UInt64)
  case tocNotDecodable(String)
  case tocLengthMismatch(declared: UInt64, actual: UInt64)
  case heapStartMismatch(declaredTOCLength: UInt64, streamEnd: UInt64)
  case malformedTOC(line: Int, message: String)
  case forbiddenMarkup(line: Int, what: String)
  case tocChecksumMissing
  case tocChecksumOutOfHeap(offset: UInt64, size: UInt64, heapSize: UInt64)
  case tocChecksumMismatch(expected: String, actual: String)
  case tocChecksumAlgorithmMismatch(header: String, toc: String)
  // Entries
  case missingName(line: Int)
  case emptyName(line: Int)
  case invalidName(line: Int, name: String, reason: String)
  case duplicateElement(line: Int, element: String, path: String)
  case invalidValue(line: Int, element: String, value: String)
  case tooManyEntries(limit: Int)
  case tooDeep(line: Int, limit: Int)
  case pathTooLong(line: Int, limit: Int)
  case unresolvedHardLink(path: String, id: String)
  case dataOutOfHeap(path: String, offset: UInt64, length: UInt64, heapSize: UInt64)
  /// Bytes after the last one the TOC references: another reader may read them as an archive of
  /// its own. `looksLike` says what they resemble (a zip, a XAR, zeros).
  case bytesAfterHeap(count: UInt64, offset: UInt64, looksLike: String)
  /// A signature's or an extended attribute's heap bytes hold another archive's records.
  case hiddenArchive(region: String, offset: UInt64, looksLike: String)
  /// The file ends before the data its TOC describes: a download cut off. `unrecoverable` says
  /// why nothing before the cut can be read; nil when the TOC and its checksum lie wholly before
  /// the cut, so the entries whose data does too can be read (`unpack --keep-going`).
  case truncatedArchive(fileSize: UInt64, describedSize: UInt64, unrecoverable: String?)
  case expansionTooLarge(path: String, size: UInt64, length: UInt64, limit: UInt64)
  /// An entry whose elements say two things at once (a `file` with a `<link>`, `<data>` on a
  /// folder, a symlink or a hard link): other readers settle it differently.
  case contradictoryEntry(line: Int, name: String, reason: String)
  /// A field of a `<file>` (mode, owner, time, link, name, type or data) comes after its first
  /// child `<file>`. A reader that takes a folder at its first child (pkgtool as it streams) and
  /// one that reads the whole TOC would see two entries; no writer known puts fields there.
  case fieldAfterChildren(path: String)
  /// Two entries' data share heap bytes.
  case overlappingData(path: String, other: String)
  /// The paths of all entries add up to more than the limit.
  case tooManyPathBytes(limit: UInt64)
  // Data
  case unsupportedEncoding(path: String, style: String)
  case corruptData(path: String, reason: String)
  case dataLongerThanDeclared(path: String, declared: UInt64)
  case dataSizeMismatch(path: String, declared: UInt64, actual: UInt64)
  case storedLengthMismatch(path: String, declared: UInt64, consumed: UInt64)
  case archivedChecksumMismatch(path: String, expected: String, actual: String)
  case extractedChecksumMismatch(path: String, expected: String, actual: String)
  case truncatedHeap(path: String)
  // Writing
  case invalidPath(String, reason: String)
  case duplicatePath(String)
  case missingParent(path: String, parent: String)
  case hardLinkTargetNotAFile(path: String, target: String)
  case writerFinished

  package var description: String {
    switch self {
    case .truncatedHeader(let n):
      return
        "the file is truncated inside its XAR header: it has \(n) bytes, a header needs at least 28; nothing can be recovered"
    case .notXAR: return "not a XAR archive: the file does not start with 'xar!'"
    case .unsupportedVersion(let v): return "unsupported XAR version \(v) (only 1 exists)"
    case .badHeaderSize(let s): return "invalid XAR header size \(s)"
    case .unsupportedChecksum(let name): return "unsupported TOC checksum algorithm \(name)"
    case .tocTooLarge(let c, let u, let limit):
      return "TOC too large: \(c) bytes compressed, \(u) uncompressed; the limit is \(limit) bytes"
    case .truncatedTOC(let declared, let available):
      return
        "the file is truncated inside its table of contents: the header declares \(declared) bytes of it, the file holds \(available); nothing can be recovered"
    case .tocNotDecodable(let reason): return "the TOC is not a valid zlib stream: \(reason)"
    case .tocLengthMismatch(let declared, let actual):
      return "the TOC inflates to \(actual) bytes, the header declares \(declared)"
    case .heapStartMismatch(let declared, let end):
      return
        "the heap does not start where the header says: the TOC stream ends at byte \(end) of \(declared)"
    case .malformedTOC(let line, let message): return "malformed TOC, line \(line): \(message)"
    case .forbiddenMarkup(let line, let what):
      return "TOC line \(line): \(what) is not allowed in a XAR TOC"
    case .tocChecksumMissing: return "the TOC has no <checksum> but the header names an algorithm"
    case .tocChecksumOutOfHeap(let o, let s, let h):
      return "the TOC checksum (offset \(o), size \(s)) lies outside the heap (\(h) bytes)"
    case .tocChecksumMismatch(let e, let a):
      return "TOC checksum mismatch: stored \(e), computed \(a)"
    case .tocChecksumAlgorithmMismatch(let h, let t):
      return "the header names checksum \(h) but the TOC says \(t)"
    case .missingName(let line): return "TOC line \(line): a <file> has no <name>"
    case .emptyName(let line): return "TOC line \(line): a <file> has an empty <name>"
    case .invalidName(let line, let name, let reason):
      return "TOC line \(line): invalid name '\(name.debugEscaped)': \(reason)"
    case .duplicateElement(let line, let element, let path):
      return "TOC line \(line): more than one <\(element)> in '\(path.debugEscaped)'"
    case .invalidValue(let line, let element, let value):
      return "TOC line \(line): invalid <\(element)> value '\(value.debugEscaped)'"
    case .tooManyEntries(let limit): return "the TOC has more than \(limit) entries"
    case .tooDeep(let line, let limit):
      return "TOC line \(line): folders nested deeper than \(limit) levels"
    case .pathTooLong(let line, let limit):
      return "TOC line \(line): a path longer than \(limit) bytes"
    case .unresolvedHardLink(let path, let id):
      return "'\(path.debugEscaped)' is a hard link to id \(id), which is not a file in the TOC"
    case .dataOutOfHeap(let path, let o, let l, let h):
      return
        "'\(path.debugEscaped)': data at offset \(o) with length \(l) lies outside the heap (\(h) bytes)"
    case .hiddenArchive(let region, let offset, let looksLike):
      return
        "the heap bytes of a \(region == "(signature)" ? "signature" : "extended attribute") at heap offset \(offset) hold \(looksLike): another reader (unzip, a zip library) may read an archive there instead of the package"
    case .bytesAfterHeap(let count, let offset, let looksLike):
      return
        "\(count) byte\(count == 1 ? "" : "s") after the last one the table of contents references (from byte \(offset)): \(looksLike); another reader (unzip, a zip library) may read them instead of the package"
    case .truncatedArchive(let size, let described, let unrecoverable):
      return
        "the file is truncated: it ends at byte \(size), its table of contents describes \(described) bytes"
        + (unrecoverable.map { "; \($0), so nothing can be recovered" } ?? "")
    case .expansionTooLarge(let path, let size, let length, let limit):
      return
        "'\(path.debugEscaped)': \(length) stored bytes claim to decode to \(size), more than \(limit) times as many"
    case .contradictoryEntry(let line, let name, let reason):
      return "TOC line \(line): the entry '\(name.debugEscaped)' \(reason)"
    case .fieldAfterChildren(let path):
      return
        "'\(path.debugEscaped)': a field of its <file> comes after its first child <file>; a reader that takes the folder at its first child and one that reads the whole TOC would see two different entries (a <file>'s fields come before its children)"
    case .overlappingData(let path, let other):
      return
        "the data of '\(path.debugEscaped)' overlaps the data of '\(other.debugEscaped)' in the heap; each entry must have bytes of its own"
    case .tooManyPathBytes(let limit):
      return "the entries' paths add up to more than \(limit) bytes (--max-path-bytes)"
    case .unsupportedEncoding(let path, let style):
      return "'\(path.debugEscaped)': unsupported encoding '\(style)'"
    case .corruptData(let path, let reason):
      return "'\(path.debugEscaped)': corrupt data: \(reason)"
    case .dataLongerThanDeclared(let path, let declared):
      return "'\(path.debugEscaped)': data decodes to more than its declared \(declared) bytes"
    case .dataSizeMismatch(let path, let declared, let actual):
      return "'\(path.debugEscaped)': data decodes to \(actual) bytes, the TOC declares \(declared)"
    case .storedLengthMismatch(let path, let declared, let consumed):
      return
        "'\(path.debugEscaped)': the compressed stream ends after \(consumed) of its declared \(declared) bytes"
    case .archivedChecksumMismatch(let path, let e, let a):
      return "'\(path.debugEscaped)': archived checksum mismatch: TOC says \(e), data gives \(a)"
    case .extractedChecksumMismatch(let path, let e, let a):
      return "'\(path.debugEscaped)': extracted checksum mismatch: TOC says \(e), data gives \(a)"
    case .truncatedHeap(let path):
      return "'\(path.debugEscaped)': the file ends before this entry's data"
    case .invalidPath(let path, let reason):
      return "cannot add '\(path.debugEscaped)': \(reason)"
    case .duplicatePath(let path): return "cannot add '\(path.debugEscaped)': already added"
    case .missingParent(let path, let parent):
      return "cannot add '\(path.debugEscaped)': its folder '\(parent.debugEscaped)' was not added first"
    case .hardLinkTargetNotAFile(let path, let target):
      return "cannot add hard link '\(path.debugEscaped)': '\(target.debugEscaped)' is not a file added before"
    case .writerFinished: return "the archive is already finished"
    }
  }
}
