import TextCoding

/// Why an Apple Archive could not be read or written. ``reason`` says what is wrong; ``entry`` and
/// ``path`` say where, when the fault is inside an entry.
package struct AppleArchiveError: Error, Equatable, CustomStringConvertible, Sendable {
  /// What is wrong, with the numbers that show it.
  package enum Reason: Equatable, Sendable {
    // The container
    /// The input holds no bytes at all.
    case empty
    /// The first bytes are neither an entry header nor a `pbz*` framing nor AEA.
    case notAppleArchive(found: [UInt8])
    /// An Apple Encrypted Archive (`AEA1`): signed or encrypted, not an archive this codec reads.
    case encrypted
    /// `pbz` followed by an algorithm letter this codec does not read (`4` LZ4, `b` LZBITMAP, …).
    case unsupportedCompression(letter: UInt8)
    /// The `pbz*` framing ends inside its 12-byte start.
    case truncatedFraming(available: Int)
    /// The framing declares a block size of 0.
    case zeroBlockSize
    /// The framing declares a block size over ``AppleArchiveLimits/maxBlockSize``.
    case blockSizeTooLarge(size: UInt64, limit: UInt64)
    /// Bytes after the last block that do not make a 16-byte block header.
    case trailingBytes(count: Int, afterBlock: Int)
    /// A block whose data ends before its declared compressed size.
    case truncatedBlock(block: Int, declared: UInt64, available: UInt64)
    /// A block that declares 0 bytes of data, or 0 compressed bytes for data.
    case emptyBlock(block: Int, rawSize: UInt64, compressedSize: UInt64)
    /// A block's compressed size is over its raw size (a stored block has them equal).
    case compressedLargerThanRaw(block: Int, rawSize: UInt64, compressedSize: UInt64)
    /// A block's raw size is over the framing's block size.
    case rawLargerThanBlockSize(block: Int, rawSize: UInt64, blockSize: UInt64)
    /// A block shorter than the block size that is followed by another block.
    case shortBlockNotLast(block: Int, rawSize: UInt64, blockSize: UInt64)
    /// A block whose raw size over its compressed size is over ``AppleArchiveLimits/maxRatio``.
    case ratioTooHigh(block: Int, rawSize: UInt64, compressedSize: UInt64, limit: UInt64)
    /// Decoding the next block (or reading the next raw bytes) would pass the decoded total budget.
    case budgetExceeded(limit: UInt64)
    /// A `pbzz` block that does not start with a zlib (RFC 1950) header: raw DEFLATE is not read.
    case notZlibStream(block: Int, found: [UInt8])
    /// The block's compressed data is damaged (the decoder's own words in `message`).
    case corruptBlock(block: Int, algorithm: String, message: String)
    /// The block decodes to another size than its header declares (`actual` nil: more than declared).
    case blockSizeMismatch(block: Int, declared: UInt64, actual: UInt64?)
    /// Bytes inside a compressed block after the end of its stream.
    case junkAfterBlockStream(block: Int, count: Int)
    // Headers
    /// The archive ends inside an entry header.
    case truncatedHeader(needed: Int, available: Int)
    /// An entry does not start with `AA01` or `YAA1`.
    case badMagic(found: [UInt8])
    /// The header size is under 6 (the magic and the size themselves).
    case headerSizeTooSmall(size: Int)
    /// The header size is over ``AppleArchiveLimits/maxHeaderSize``.
    case headerTooLarge(size: Int, limit: Int)
    /// A field that does not fit in what is left of the header.
    case fieldPastHeader(field: String, offset: Int, needed: Int, headerSize: Int)
    /// 1 to 3 bytes at the end of a header that cannot be a field.
    case junkInHeader(offset: Int, count: Int)
    /// A key this codec does not know.
    case unknownKey(field: String)
    /// A known key with a subtype it never has.
    case wrongSubtype(field: String, expected: String)
    /// The same key twice in one header.
    case duplicateKey(key: String)
    /// A header without a field every entry needs (`TYP`, `PAT`) or its kind needs (`LNK`).
    case missingField(key: String)
    /// A `TYP` value that is not one of Apple's entry types.
    case unknownEntryType(value: UInt64)
    /// A hard-link (`HLC`), clone (`CLC`) or identical-data (`SLC`) cluster field: the entry's
    /// data is another entry's. A reader that honours it makes the names share one file (or take
    /// their bytes from the first entry of the cluster, when later ones carry no `DAT`); one that
    /// ignores it makes separate files, empty where `DAT` is left out. The readers disagree, so
    /// it is refused.
    case linkedData(key: String, cluster: UInt64)
    /// A field an entry of this kind never carries (`DAT` on a directory, `LNK` on a file).
    case fieldNotAllowed(key: String, kind: String)
    /// A path this codec refuses (see ``PathProblem``).
    case invalidPath(PathProblem)
    /// A symbolic link target that is empty or holds a NUL byte.
    case invalidLinkTarget(reason: String)
    /// A time whose nanoseconds are 10^9 or more.
    case invalidTime(key: String, nanoseconds: UInt32)
    /// `SIZ` and the `DAT` blob disagree.
    case sizeMismatch(siz: UInt64, dat: UInt64)
    /// The entry's blobs add up to more than 2^64 - 1 bytes.
    case blobSizesOverflow
    /// The archive ends inside a blob.
    case truncatedBlob(key: String, declared: UInt64, available: UInt64)
    /// More entries than ``AppleArchiveLimits/maxEntries``.
    case tooManyEntries(limit: Int)
    /// The data read does not have the hash its header declares (`CKS`, `SH1`, `SH2`, `SH3`, `SH5`).
    case hashMismatch(key: String, declared: String, actual: String)
    // Writing
    /// A file's data was not the size given when it was begun.
    case dataSizeMismatch(declared: UInt64, written: UInt64)
    /// A file's data does not have the SHA-256 given when it was begun.
    case declaredDigestMismatch(declared: String, actual: String)
    /// A call out of order: data with no file begun, an entry while a file is open, anything after
    /// `finish()` or after an error.
    case writerMisuse(String)
  }

  /// How a path breaks the codec's rules.
  package enum PathProblem: Equatable, Sendable {
    /// Empty, on an entry other than the root directory.
    case empty
    /// A NUL byte.
    case nulByte
    /// Starts with `/`.
    case absolute
    /// A `..` component.
    case dotDot
    /// An empty component (`a//b`, `a/`).
    case emptyComponent
    /// A `.` component.
    case dotComponent
    /// A byte under 0x20, or 0x7F.
    case controlCharacter(UInt8)
    /// Over ``AppleArchiveLimits/maxPathBytes``.
    case tooLong(length: Int, limit: Int)
  }

  /// What is wrong.
  package var reason: Reason
  /// The 1-based number of the entry the fault is in; nil for a fault in the container.
  package var entry: Int?
  /// The entry's path, when it was read before the fault.
  package var path: [UInt8]?

  /// An error for `reason`, in entry number `entry` (1-based) at `path` when known.
  package init(_ reason: Reason, entry: Int? = nil, path: [UInt8]? = nil) {
    self.reason = reason
    self.entry = entry
    self.path = path
  }

  /// "Apple Archive entry N ('path'): what is wrong", or "Apple Archive: …" for the container.
  package var description: String {
    var place = "Apple Archive"
    if let entry {
      place += " entry \(entry)"
      if let path { place += " ('\(AppleArchiveError.printable(path))')" }
    }
    return place + ": " + AppleArchiveError.text(reason)
  }

  /// A path for a message: UTF-8 where it is, with control bytes and invalid bytes escaped.
  package static func printable(_ bytes: [UInt8]) -> String {
    var out = ""
    var utf8 = bytes.makeIterator()
    var decoder = UTF8()
    loop: while true {
      switch decoder.decode(&utf8) {
      case .scalarValue(let scalar):
        if scalar.value < 0x20 || scalar.value == 0x7F {
          out += "\\x" + hex([UInt8(scalar.value)])
        } else {
          out.unicodeScalars.append(scalar)
        }
      case .error: out += "\\u{FFFD}"
      case .emptyInput: break loop
      }
    }
    return out
  }

  /// Lower-case hexadecimal.
  package static func hex(_ bytes: [UInt8]) -> String { hexString(bytes) }

  private static func shown(_ bytes: [UInt8]) -> String {
    let text = bytes.allSatisfy { $0 >= 0x20 && $0 < 0x7F } ? " ('\(String(decoding: bytes, as: UTF8.self))')" : ""
    return "0x" + hex(bytes) + text
  }

  private static func algorithmName(_ letter: UInt8) -> String {
    switch letter {
    case UInt8(ascii: "4"): return "LZ4-compressed Apple Archive (pbz4)"
    case UInt8(ascii: "b"): return "LZBITMAP-compressed Apple Archive (pbzb)"
    default:
      return "Apple Archive compressed with unknown algorithm '\(printable([letter]))' (pbz\(printable([letter])))"
    }
  }

  private static func text(_ reason: Reason) -> String {
    switch reason {
    case .empty: return "the file is empty"
    case .notAppleArchive(let found):
      return "not an Apple Archive: it starts with \(shown(found)), not 'AA01', 'YAA1' or 'pbz' and an algorithm letter"
    case .encrypted:
      return
        "this is an Apple Encrypted Archive (AEA1, e.g. a signed shortcut), not a plain Apple Archive; it is not read (unwrap it with Apple's aea tool first)"
    case .unsupportedCompression(let letter):
      return "\(algorithmName(letter)) is not read; recompress it with LZFSE, zlib or LZMA"
    case .truncatedFraming(let available):
      return "the file ends inside its compression framing: it has \(available) bytes, the framing needs 12"
    case .zeroBlockSize: return "the compression framing declares a block size of 0"
    case .blockSizeTooLarge(let size, let limit):
      return "the compression framing declares a block size of \(size) bytes; the limit is \(limit)"
    case .trailingBytes(let count, let block):
      return "\(count) bytes after block \(block) are not a block (a block header is 16 bytes)"
    case .truncatedBlock(let block, let declared, let available):
      return "block \(block) is truncated: it declares \(declared) compressed bytes, the file holds \(available)"
    case .emptyBlock(let block, let raw, let compressed):
      return
        "block \(block) declares \(raw) bytes of data in \(compressed) compressed bytes; a block holds at least one byte"
    case .compressedLargerThanRaw(let block, let raw, let compressed):
      return
        "block \(block) declares \(compressed) compressed bytes for \(raw) bytes of data (more than stored would take)"
    case .rawLargerThanBlockSize(let block, let raw, let blockSize):
      return "block \(block) declares \(raw) bytes of data, over the block size of \(blockSize)"
    case .shortBlockNotLast(let block, let raw, let blockSize):
      return "block \(block) holds \(raw) bytes, less than the block size of \(blockSize), but another block follows it"
    case .ratioTooHigh(let block, let raw, let compressed, let limit):
      return
        "block \(block) would expand \(compressed) bytes to \(raw) (over \(limit) times): refused as a decompression bomb"
    case .budgetExceeded(let limit):
      return "the archive decodes to more than \(limit) bytes, the limit: refused as a decompression bomb"
    case .notZlibStream(let block, let found):
      return
        "block \(block) of the pbzz stream does not start with a zlib header (found \(shown(found))); raw DEFLATE is not read"
    case .corruptBlock(let block, let algorithm, let message):
      return "block \(block) is not valid \(algorithm) data: \(message)"
    case .blockSizeMismatch(let block, let declared, let actual):
      if let actual { return "block \(block) decodes to \(actual) bytes, its header declares \(declared)" }
      return "block \(block) decodes to more than the \(declared) bytes its header declares"
    case .junkAfterBlockStream(let block, let count):
      return "block \(block) has \(count) bytes after the end of its compressed stream"
    case .truncatedHeader(let needed, let available):
      return "the archive ends inside an entry header: \(needed) bytes are needed, \(available) are left"
    case .badMagic(let found): return "found \(shown(found)) where an entry header ('AA01' or 'YAA1') starts"
    case .headerSizeTooSmall(let size):
      return "header size \(size) is too small: it counts its own 6 bytes of magic and size"
    case .headerTooLarge(let size, let limit): return "header size \(size) is over the limit of \(limit)"
    case .fieldPastHeader(let field, let offset, let needed, let headerSize):
      return
        "header size \(headerSize) is too small for its fields: \(field) at byte \(offset) needs \(needed) bytes, \(headerSize - offset) are left"
    case .junkInHeader(let offset, let count):
      return "\(count) bytes at byte \(offset) of the header are not a field (a field takes at least 4)"
    case .unknownKey(let field): return "unknown field \(printable(Array(field.utf8)))"
    case .wrongSubtype(let field, let expected):
      return "field \(printable(Array(field.utf8))) has the wrong subtype; expected \(expected)"
    case .duplicateKey(let key): return "the field \(key) appears twice in one header"
    case .missingField(let key): return "the header has no \(key) field"
    case .unknownEntryType(let value):
      let shownValue = value < 0x80 ? "'\(printable([UInt8(value)]))'" : "\(value)"
      return "unknown entry type \(shownValue)"
    case .linkedData(let key, let cluster):
      let what = ["HLC": "hard link", "CLC": "clone", "SLC": "identical-data"][key] ?? key
      return
        "the \(key) field puts the entry in \(what) cluster \(cluster), sharing its data with other entries; links and shared data are refused (readers that honour \(key) and readers that ignore it unpack different files)"
    case .fieldNotAllowed(let key, let kind): return "a \(kind) entry has a \(key) field (only \(allowedOn(key)) do)"
    case .invalidPath(let problem): return "invalid path: " + pathText(problem)
    case .invalidLinkTarget(let reason): return "invalid symbolic link target: \(reason)"
    case .invalidTime(let key, let ns): return "the \(key) time has \(ns) nanoseconds (at most 999999999)"
    case .sizeMismatch(let siz, let dat): return "SIZ declares \(siz) bytes but the DAT blob holds \(dat)"
    case .blobSizesOverflow: return "the entry's blob sizes add up to more than 2^64 - 1 bytes"
    case .truncatedBlob(let key, let declared, let available):
      return "the archive ends inside the \(key) blob: it declares \(declared) bytes, \(available) are left"
    case .tooManyEntries(let limit): return "more than \(limit) entries, the limit"
    case .hashMismatch(let key, let declared, let actual):
      return "the data does not match its \(key) hash: the header declares \(declared), the data has \(actual)"
    case .dataSizeMismatch(let declared, let written):
      return "the file was begun with \(declared) bytes of data but \(written) were written"
    case .declaredDigestMismatch(let declared, let actual):
      return "the file was begun with SHA-256 \(declared) but its data has \(actual)"
    case .writerMisuse(let what): return what
    }
  }

  private static func allowedOn(_ key: String) -> String {
    switch key {
    case "LNK": return "symbolic links"
    case "DEV": return "devices"
    default: return "regular files"
    }
  }

  private static func pathText(_ problem: PathProblem) -> String {
    switch problem {
    case .empty: return "it is empty (only the root directory may have an empty path)"
    case .nulByte: return "it holds a NUL byte"
    case .absolute: return "it starts with '/'"
    case .dotDot: return "it has a '..' component"
    case .emptyComponent: return "it has an empty component ('//' or a trailing '/')"
    case .dotComponent: return "it has a '.' component"
    case .controlCharacter(let byte): return "it holds the control character 0x\(hex([byte]))"
    case .tooLong(let length, let limit): return "it is \(length) bytes long; the limit is \(limit)"
    }
  }
}
