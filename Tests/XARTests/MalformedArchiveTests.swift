import CZlib
import Foundation
import TestSupport
import Testing
import XAR
import Zlib

/// Each malformed structure the reader must refuse, crafted byte by byte.
@Suite struct MalformedArchiveTests {
  let plain = Array("hello, world".utf8)

  func open(_ crafted: CraftedXAR, limits: XARReader.Limits = XARReader.Limits()) throws -> XARReader {
    let dir = try TemporaryDirectory()
    let path = dir.appending("x.xar")
    try crafted.write(to: path)
    return try XARReader(path: path, limits: limits)
  }

  func openBytes(_ bytes: [UInt8]) throws -> XARReader {
    let dir = try TemporaryDirectory()
    let path = dir.appending("x.xar")
    try Data(bytes).write(to: URL(fileURLWithPath: path))
    return try XARReader(path: path)
  }

  func file(_ name: String, _ extra: String = "") -> String {
    "<file id=\"1\"><name>\(name)</name><type>file</type>\(extra)</file>"
  }

  func validFile() -> CraftedXAR {
    CraftedXAR(
      toc: CraftedXAR.document(file("a.txt", CraftedXAR.dataElement(stored: plain, plain: plain, offset: 20))),
      heap: plain)
  }

  @Test func theBaselineIsValid() throws {
    let reader = try open(validFile())
    #expect(reader.entries.map(\.path) == ["a.txt"])
    #expect(try reader.readData(of: reader.entries[0]) == plain)
  }

  // MARK: Header

  @Test func badMagic() {
    var x = validFile()
    x.magic = Array("rax!".utf8)
    #expect(throws: XARError.notXAR) { try open(x) }
  }

  @Test func truncatedHeader() {
    #expect(throws: XARError.truncatedHeader(available: 10)) { try openBytes(Array(validFile().bytes().prefix(10))) }
  }

  @Test func wrongVersion() {
    var x = validFile()
    x.version = 2
    #expect(throws: XARError.unsupportedVersion(2)) { try open(x) }
  }

  @Test func headerSizeTooSmall() {
    var x = validFile()
    x.headerSize = 12
    #expect(throws: XARError.badHeaderSize(12)) { try open(x) }
  }

  @Test func unknownChecksumAlgorithm() {
    var x = validFile()
    x.checksumCode = 9
    #expect(throws: XARError.unsupportedChecksum("code 9")) { try open(x) }
  }

  // MARK: TOC

  @Test func tocLargerThanLimitIsRefusedBeforeInflating() {
    var x = validFile()
    x.declaredTOCUncompressed = 1 << 40
    #expect(
      throws: XARError.tocTooLarge(
        compressed: UInt64(x.bytes().count - 28 - 20 - plain.count), uncompressed: 1 << 40, limit: 256 << 20)
    ) {
      try open(x)
    }
  }

  @Test func tocLongerThanFile() {
    var x = validFile()
    x.declaredTOCLength = 100_000
    #expect(throws: XARError.self) { try open(x) }
    do { _ = try open(x) } catch let error as XARError {
      guard case .truncatedTOC = error else {
        Issue.record("got \(error)")
        return
      }
    } catch { Issue.record("\(error)") }
  }

  @Test func tocInflatesToMoreThanDeclared() {
    var x = validFile()
    x.declaredTOCUncompressed = 50
    do {
      _ = try open(x)
      Issue.record("accepted")
    } catch let error as XARError {
      guard case .tocLengthMismatch(declared: 50, _) = error else {
        Issue.record("got \(error)")
        return
      }
    } catch { Issue.record("\(error)") }
  }

  @Test func heapDoesNotStartWhereHeaderSays() {
    var x = validFile()
    x.tocTrailer = [0, 0, 0, 0]
    #expect(throws: XARError.self) { try open(x) }
    do { _ = try open(x) } catch let error as XARError {
      guard case .heapStartMismatch = error else {
        Issue.record("got \(error)")
        return
      }
    } catch { Issue.record("\(error)") }
  }

  @Test func tocIsNotZlib() {
    var bytes = validFile().bytes()
    for i in 28..<40 { bytes[i] = 0xAB }
    #expect(throws: XARError.self) { try openBytes(bytes) }
    do { _ = try openBytes(bytes) } catch let error as XARError {
      guard case .tocNotDecodable = error else {
        Issue.record("got \(error)")
        return
      }
    } catch { Issue.record("\(error)") }
  }

  @Test func tocChecksumMismatch() {
    var x = validFile()
    x.corruptTOCChecksum = true
    #expect(throws: XARError.self) { try open(x) }
    do { _ = try open(x) } catch let error as XARError {
      guard case .tocChecksumMismatch = error else {
        Issue.record("got \(error)")
        return
      }
    } catch { Issue.record("\(error)") }
  }

  @Test func tocChecksumOutsideHeap() throws {
    let x = CraftedXAR(
      toc: validFile().toc.replacingOccurrences(
        of: "<offset>0</offset><size>20</size>", with: "<offset>999</offset><size>20</size>"), heap: plain)
    // The file ends before the checksum its TOC places: a cut nothing can be recovered from,
    // even when a cut-off file is accepted.
    let size = try Self.size(of: x)
    let heapStart = size - UInt64(20 + plain.count)
    let expected = XARError.truncatedArchive(
      fileSize: size, describedSize: heapStart + 1019,
      unrecoverable: "the checksum of its table of contents lies past the cut")
    #expect(throws: expected) { try open(x) }
    var limits = XARReader.Limits()
    limits.acceptsTruncation = true
    #expect(throws: expected) { try open(x, limits: limits) }
  }

  static func size(of crafted: CraftedXAR) throws -> UInt64 {
    let dir = try TemporaryDirectory()
    try crafted.write(to: dir.appending("x.xar"))
    return UInt64(try FileManager.default.attributesOfItem(atPath: dir.appending("x.xar"))[.size] as! Int)
  }

  @Test func doctypeAndEntitiesAreRefused() {
    let bomb = """
      <?xml version="1.0"?>
      <!DOCTYPE xar [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;">]>
      <xar><toc><file id="1"><name>&b;</name></file></toc></xar>
      """
    do {
      _ = try open(CraftedXAR(toc: bomb))
      Issue.record("accepted")
    } catch let error as XARError {
      guard case .forbiddenMarkup(_, "a DOCTYPE") = error else {
        Issue.record("got \(error)")
        return
      }
    } catch { Issue.record("\(error)") }
    let external = """
      <?xml version="1.0"?>
      <xar><toc><file id="1"><name>&ext;</name></file></toc></xar>
      """
    #expect(throws: XARError.self) { try open(CraftedXAR(toc: external)) }
  }

  @Test func notWellFormed() {
    #expect(throws: XARError.self) { try open(CraftedXAR(toc: "<xar><toc><file></toc></xar>")) }
    do { _ = try open(CraftedXAR(toc: "<xar>\n<toc>\n<file>\n</toc></xar>")) } catch let error as XARError {
      guard case .malformedTOC(let line, _) = error else {
        Issue.record("got \(error)")
        return
      }
      #expect(line >= 3, "the message carries the line")
    } catch { Issue.record("\(error)") }
  }

  // MARK: Names

  @Test func emptyName() {
    #expect(throws: XARError.emptyName(line: 5)) { try open(CraftedXAR(toc: CraftedXAR.document(file("")))) }
  }

  @Test func missingName() {
    let toc = CraftedXAR.document("<file id=\"1\"><type>directory</type></file>")
    #expect(throws: XARError.missingName(line: 5)) { try open(CraftedXAR(toc: toc)) }
  }

  @Test func nameWithSlash() {
    #expect(throws: XARError.invalidName(line: 5, name: "a/b", reason: "a name cannot hold '/'")) {
      try open(CraftedXAR(toc: CraftedXAR.document(file("a/b"))))
    }
  }

  @Test func nameWithNULThroughBase64() {
    // "a\0b" in base64: a NUL can only arrive through an encoded name.
    let toc = CraftedXAR.document("<file id=\"1\"><name enctype=\"base64\">YQBi</name></file>")
    #expect(throws: XARError.invalidName(line: 5, name: "a\u{0}b", reason: "a name cannot hold NUL")) {
      try open(CraftedXAR(toc: toc))
    }
  }

  @Test func twoNames() {
    let toc = CraftedXAR.document("<file id=\"1\"><name>a</name><name>b</name></file>")
    #expect(throws: XARError.duplicateElement(line: 5, element: "name", path: "a")) { try open(CraftedXAR(toc: toc)) }
  }

  @Test func repeatedAttributes() {
    let toc = CraftedXAR.document("<file id=\"1\" id=\"2\"><name>a</name></file>")
    do {
      _ = try open(CraftedXAR(toc: toc))
      Issue.record("accepted")
    } catch let error as XARError {
      guard case .malformedTOC(let line, let message) = error else {
        Issue.record("got \(error)")
        return
      }
      #expect(line == 5)
      #expect(message.contains("redefined"))
    } catch { Issue.record("\(error)") }
  }

  @Test func repeatedDataFields() {
    let data = "<data><offset>20</offset><offset>20</offset><length>1</length><size>1</size></data>"
    #expect(throws: XARError.duplicateElement(line: 5, element: "offset", path: "a")) {
      try open(CraftedXAR(toc: CraftedXAR.document(file("a", data)), heap: [1]))
    }
  }

  @Test func duplicateIDs() {
    let toc = CraftedXAR.document(file("a") + file("b"))
    #expect(throws: XARError.invalidValue(line: 5, element: "file id", value: "1")) { try open(CraftedXAR(toc: toc)) }
  }

  @Test func hardLinkToNothing() {
    let toc = CraftedXAR.document("<file id=\"1\"><name>a</name><type link=\"7\">hardlink</type></file>")
    #expect(throws: XARError.unresolvedHardLink(path: "a", id: "7")) { try open(CraftedXAR(toc: toc)) }
  }

  @Test func deepNestingIsBounded() {
    var limits = XARReader.Limits()
    limits.maxDepth = 10
    var files = ""
    for i in 0..<20 { files += "<file id=\"\(i)\"><name>d</name><type>directory</type>" }
    files += String(repeating: "</file>", count: 20)
    let dir = try! TemporaryDirectory()
    try! CraftedXAR(toc: CraftedXAR.document(files)).write(to: dir.appending("x"))
    #expect(throws: XARError.tooDeep(line: 5, limit: 10)) { try XARReader(path: dir.appending("x"), limits: limits) }
  }

  // MARK: Data

  @Test func dataOutsideHeap() throws {
    let toc = CraftedXAR.document(file("a", CraftedXAR.dataElement(stored: plain, plain: plain, offset: 30)))
    // The data ends 10 bytes past the end of the file: the file was cut.
    let crafted = CraftedXAR(toc: toc, heap: plain)
    let size = try Self.size(of: crafted)
    #expect(throws: XARError.truncatedArchive(fileSize: size, describedSize: size + 10, unrecoverable: nil)) {
      try open(crafted)
    }
    // Accepted for --keep-going: the cut is known, and reading the entry past it throws.
    var limits = XARReader.Limits()
    limits.acceptsTruncation = true
    let reader = try open(crafted, limits: limits)
    #expect(reader.truncation == XARTruncation(fileSize: size, describedSize: size + 10))
    #expect(throws: XARError.truncatedHeap(path: "a")) { try reader.readData(of: reader.entries[0]) }
    let huge = CraftedXAR.document(
      file("a", CraftedXAR.dataElement(stored: plain, plain: plain, offset: 20, length: Int.max)))
    #expect(throws: XARError.self) { try open(CraftedXAR(toc: huge, heap: plain)) }
  }

  @Test func storedLengthDiffersFromSizeWithoutEncoding() {
    let toc = CraftedXAR.document(file("a", CraftedXAR.dataElement(stored: plain, plain: plain, offset: 20, size: 5)))
    #expect(throws: XARError.self) { try open(CraftedXAR(toc: toc, heap: plain)) }
  }

  /// Reads an entry to the end and returns the error, if any.
  func drain(_ reader: XARReader, _ entry: XAREntry) -> (bytes: Int, error: XARError?) {
    let data = reader.dataReader(for: entry)
    var buffer = [UInt8](repeating: 0, count: 4096)
    var total = 0
    do {
      while true {
        let n = try buffer.withUnsafeMutableBytes { try data.read(into: $0) }
        if n == 0 { return (total, nil) }
        total += n
      }
    } catch let error as XARError {
      return (total, error)
    } catch {
      return (total, .corruptData(path: "?", reason: "\(error)"))
    }
  }

  @Test func decompressionBombStopsAtDeclaredSize() throws {
    let big = [UInt8](repeating: 0, count: 10_000_000)
    let stored = ZlibDeflater.compress(big, level: 9)
    let toc = CraftedXAR.document(
      file(
        "bomb",
        CraftedXAR.dataElement(
          stored: stored, plain: Array(big.prefix(100)), offset: 20, encoding: "application/x-gzip", size: 100)))
    let reader = try open(CraftedXAR(toc: toc, heap: stored))
    let (bytes, error) = drain(reader, reader.entries[0])
    #expect(bytes <= 100)
    #expect(error == .dataLongerThanDeclared(path: "bomb", declared: 100))
  }

  @Test func dataShorterThanDeclared() throws {
    let stored = ZlibDeflater.compress(plain, level: 6)
    let toc = CraftedXAR.document(
      file(
        "a", CraftedXAR.dataElement(stored: stored, plain: plain, offset: 20, encoding: "application/x-gzip", size: 500)
      ))
    let reader = try open(CraftedXAR(toc: toc, heap: stored))
    #expect(
      drain(reader, reader.entries[0]).error == .dataSizeMismatch(path: "a", declared: 500, actual: UInt64(plain.count))
    )
  }

  @Test func extractedChecksumMismatch() throws {
    let toc = CraftedXAR.document(
      file(
        "a",
        CraftedXAR.dataElement(stored: plain, plain: plain, offset: 20, extracted: String(repeating: "0", count: 40))))
    let reader = try open(CraftedXAR(toc: toc, heap: plain))
    let (bytes, error) = drain(reader, reader.entries[0])
    #expect(bytes == plain.count, "data is handed over, then refused at the end")
    guard case .extractedChecksumMismatch(path: "a", _, _) = error else {
      Issue.record("got \(String(describing: error))")
      return
    }
  }

  @Test func archivedChecksumMismatch() throws {
    let toc = CraftedXAR.document(
      file(
        "a",
        CraftedXAR.dataElement(stored: plain, plain: plain, offset: 20, archived: String(repeating: "1", count: 40))))
    let reader = try open(CraftedXAR(toc: toc, heap: plain))
    guard case .archivedChecksumMismatch(path: "a", _, _) = drain(reader, reader.entries[0]).error else {
      Issue.record("no archived checksum error")
      return
    }
  }

  @Test func corruptCompressedData() throws {
    var stored = ZlibDeflater.compress(Array(repeating: 7, count: 10_000), level: 6)
    stored[5] ^= 0xFF
    stored[6] ^= 0xFF
    let toc = CraftedXAR.document(
      file(
        "a",
        CraftedXAR.dataElement(
          stored: stored, plain: Array(repeating: 7, count: 10_000), offset: 20, encoding: "application/x-gzip")))
    let reader = try open(CraftedXAR(toc: toc, heap: stored))
    #expect(drain(reader, reader.entries[0]).error != nil)
  }

  @Test func trailingGarbageAfterCompressedStream() throws {
    let stored = ZlibDeflater.compress(plain, level: 6) + [1, 2, 3]
    let toc = CraftedXAR.document(
      file("a", CraftedXAR.dataElement(stored: stored, plain: plain, offset: 20, encoding: "application/x-gzip")))
    let reader = try open(CraftedXAR(toc: toc, heap: stored))
    guard case .storedLengthMismatch = drain(reader, reader.entries[0]).error else {
      Issue.record("accepted")
      return
    }
  }

  @Test func unknownEncoding() throws {
    let toc = CraftedXAR.document(
      file(
        "a", CraftedXAR.dataElement(stored: plain, plain: plain, offset: 20, encoding: "application/x-rot13", size: 12))
    )
    let reader = try open(CraftedXAR(toc: toc, heap: plain))
    #expect(drain(reader, reader.entries[0]).error == .unsupportedEncoding(path: "a", style: "application/x-rot13"))
  }

  @Test func bzip2LabelOnPlainBytes() throws {
    let toc = CraftedXAR.document(
      file("a", CraftedXAR.dataElement(stored: plain, plain: plain, offset: 20, encoding: "application/x-bzip2")))
    let reader = try open(CraftedXAR(toc: toc, heap: plain))
    #expect(drain(reader, reader.entries[0]).error != nil, "raw bytes are not passed through as bzip2")
  }

  /// Random corruption of a real archive: the reader must answer (value or error), never crash
  /// or loop. Deterministic seeds; a crash fails the whole run.
  @Test func randomCorruptionNeverCrashes() throws {
    let dir = try TemporaryDirectory()
    var spec = TreeSpec.random(seed: 7, entries: 25)
    spec.nodes = spec.nodes.filter { if case .file(let b) = $0.node { return b.count < 100_000 } else { return true } }
    let archive = dir.appending("t.xar")
    try writeArchive(spec, to: archive)
    let original = try readFile(archive)
    var rng = SeededGenerator(seed: 1234)
    var refused = 0
    for round in 0..<400 {
      var bytes = original
      let flips = Int.random(in: 1...4, using: &rng)
      for _ in 0..<flips {
        let region = round % 3 == 0 ? min(bytes.count, 400) : bytes.count
        bytes[Int.random(in: 0..<region, using: &rng)] = UInt8.random(in: 0...255, using: &rng)
      }
      if round % 5 == 0 { bytes = Array(bytes.prefix(Int.random(in: 0..<bytes.count, using: &rng))) }
      let path = dir.appending("c\(round).xar")
      try Data(bytes).write(to: URL(fileURLWithPath: path))
      do {
        let reader = try XARReader(path: path)
        for entry in reader.entries where entry.kind == .file {
          if drain(reader, entry).error != nil { refused += 1 }
        }
      } catch is XARError {
        refused += 1
      }
      try FileManager.default.removeItem(atPath: path)
    }
    #expect(refused > 300)
  }

  // MARK: Bytes after the heap

  /// What `cat book.pkg X > book.pkg` leaves: bytes after the last one the TOC references, which
  /// another reader (unzip, CPython's zipfile, a second XAR reader) may read instead. Each kind
  /// is refused with the count, where they start, and what they look like.
  @Test func bytesAfterTheLastReferencedOneAreRefused() throws {
    let valid = validFile().bytes()
    // A stored zip of one file with a `#!` script: local header, data, central directory, end.
    let script = Array("#!/bin/sh\necho pwned\n".utf8)
    let crcValue = UInt32(script.withUnsafeBufferPointer { crc32(0, $0.baseAddress, uInt($0.count)) })
    func le16(_ v: Int) -> [UInt8] { [UInt8(v & 0xFF), UInt8(v >> 8 & 0xFF)] }
    func le32(_ v: UInt32) -> [UInt8] { (0..<4).map { UInt8(v >> (8 * $0) & 0xFF) } }
    let name = Array("run.sh".utf8)
    let local =
      [0x50, 0x4B, 0x03, 0x04] + le16(20) + le16(0) + le16(0) + le16(0) + le16(0) + le32(crcValue)
      + le32(UInt32(script.count)) + le32(UInt32(script.count)) + le16(name.count) + le16(0) + name + script
    let central =
      [0x50, 0x4B, 0x01, 0x02] + le16(20) + le16(20) + le16(0) + le16(0) + le16(0) + le16(0)
      + le32(crcValue) + le32(UInt32(script.count)) + le32(UInt32(script.count)) + le16(name.count) + le16(0)
      + le16(0) + le16(0) + le16(0) + le32(0o100755 << 16) + le32(0) + name
    let end =
      [0x50, 0x4B, 0x05, 0x06] + le16(0) + le16(0) + le16(1) + le16(1) + le32(UInt32(central.count))
      + le32(UInt32(local.count)) + le16(0)
    let zip: [UInt8] = local + central + end
    let cases: [(String, [UInt8], String)] = [
      ("a zip", zip, "a zip archive"),
      ("a second XAR", valid, "another XAR archive"),
      ("zero padding", [UInt8](repeating: 0, count: 4096), "zeros (padding)"),
      ("one byte", [0x0A], "other bytes (starting 0a)"),
    ]
    for (what, appended, looksLike) in cases {
      do {
        _ = try openBytes(valid + appended)
        Issue.record("\(what): accepted")
      } catch let error as XARError {
        #expect(
          error == .bytesAfterHeap(count: UInt64(appended.count), offset: UInt64(valid.count), looksLike: looksLike),
          "\(what): \(error)")
        #expect(error.description.contains("\(appended.count) byte"), "\(error.description)")
      }
    }
    // A zip whose local header is not first (prepended junk) is still found by its end record.
    #expect(
      throws: XARError.bytesAfterHeap(
        count: UInt64(zip.count + 3), offset: UInt64(valid.count),
        looksLike: "a zip archive (its end record is there)")
    ) { try openBytes(valid + [1, 2, 3] + zip) }
  }

  /// libarchive's writer (bsdtar --format xar) ends the heap with a copy of the first bytes of the
  /// compressed TOC, as many as its checksum has: accepted, and only that exact copy.
  @Test func libarchivesCopyOfTheTOCStartIsAcceptedAndNothingElse() throws {
    let valid = validFile().bytes()
    let tocStart = Array(valid[28..<48])
    _ = try openBytes(valid + tocStart)
    var other = tocStart
    other[19] ^= 1
    #expect(throws: XARError.self) { try openBytes(valid + other) }
    #expect(throws: XARError.self) { try openBytes(valid + tocStart + [0]) }
    #expect(throws: XARError.self) { try openBytes(valid + Array(tocStart.prefix(19))) }
  }

  /// A signature's and an extended attribute's bytes are heap bytes the TOC references.
  @Test func signaturesAndExtendedAttributesCountAsReferenced() throws {
    let signature = [UInt8](repeating: 0xAB, count: 32)
    let signed = CraftedXAR(
      toc: CraftedXAR.document(file("a.txt", CraftedXAR.dataElement(stored: plain, plain: plain, offset: 20)))
        .replacingOccurrences(
          of: "</checksum>",
          with: "</checksum><signature style=\"RSA\"><offset>\(20 + plain.count)</offset><size>32</size></signature>"),
      heap: plain + signature)
    #expect(try open(signed).entries.count == 1)
    let attribute = Array("hfs!".utf8)
    let withAttribute = CraftedXAR(
      toc: CraftedXAR.document(
        file(
          "a.txt",
          CraftedXAR.dataElement(stored: plain, plain: plain, offset: 20)
            + "<ea id=\"1\"><length>4</length><offset>\(20 + plain.count)</offset><size>4</size><name>user.x</name></ea>"
        )),
      heap: plain + attribute)
    #expect(try open(withAttribute).entries.count == 1)
    // A region declared over an appended archive does not make it referenced: a signature or an
    // attribute whose bytes hold a zip (or a XAR) is refused, as unzip would read the zip.
    let zipTail: [UInt8] =
      [0x50, 0x4B, 0x03, 0x04] + [UInt8](repeating: 0x41, count: 40) + [0x50, 0x4B, 0x05, 0x06]
      + [UInt8](repeating: 0, count: 18)
    let signedZip = CraftedXAR(
      toc: CraftedXAR.document(file("a.txt", CraftedXAR.dataElement(stored: plain, plain: plain, offset: 20)))
        .replacingOccurrences(
          of: "</checksum>",
          with:
            "</checksum><x-signature style=\"CMS\"><offset>\(20 + plain.count)</offset><size>\(zipTail.count)</size></x-signature>"
        ),
      heap: plain + zipTail)
    #expect(
      throws: XARError.hiddenArchive(
        region: "(signature)", offset: UInt64(20 + plain.count), looksLike: "a zip entry's local header")
    ) {
      try open(signedZip)
    }
    let attributeZip = CraftedXAR(
      toc: CraftedXAR.document(
        file(
          "a.txt",
          CraftedXAR.dataElement(stored: plain, plain: plain, offset: 20)
            + "<ea id=\"1\"><length>\(zipTail.count)</length><offset>\(20 + plain.count)</offset><name>x</name></ea>")),
      heap: plain + zipTail)
    #expect(throws: XARError.self) { try open(attributeZip) }
    // A signature over a file's data, two signatures, and one larger than 64 KiB.
    let overData = CraftedXAR(
      toc: CraftedXAR.document(file("a.txt", CraftedXAR.dataElement(stored: plain, plain: plain, offset: 20)))
        .replacingOccurrences(
          of: "</checksum>", with: "</checksum><signature style=\"RSA\"><offset>20</offset><size>4</size></signature>"),
      heap: plain)
    #expect(throws: XARError.overlappingData(path: "a.txt", other: "(signature)")) { try open(overData) }
    let twice = CraftedXAR(
      toc: CraftedXAR.document(file("a.txt", CraftedXAR.dataElement(stored: plain, plain: plain, offset: 20)))
        .replacingOccurrences(
          of: "</checksum>",
          with:
            "</checksum><signature style=\"RSA\"><offset>\(20 + plain.count)</offset><size>16</size></signature><signature style=\"RSA\"><offset>\(36 + plain.count)</offset><size>16</size></signature>"
        ),
      heap: plain + signature)
    #expect(throws: XARError.self) { try open(twice) }
    let huge = [UInt8](repeating: 0xAB, count: (64 << 10) + 1)
    let hugeSignature = CraftedXAR(
      toc: CraftedXAR.document(file("a.txt", CraftedXAR.dataElement(stored: plain, plain: plain, offset: 20)))
        .replacingOccurrences(
          of: "</checksum>",
          with:
            "</checksum><signature style=\"RSA\"><offset>\(20 + plain.count)</offset><size>\(huge.count)</size></signature>"
        ),
      heap: plain + huge)
    #expect(throws: XARError.self) { try open(hugeSignature) }

    // Without the signature in the TOC, its bytes are refused as unreferenced.
    let unsigned = CraftedXAR(
      toc: CraftedXAR.document(file("a.txt", CraftedXAR.dataElement(stored: plain, plain: plain, offset: 20))),
      heap: plain + signature)
    #expect(throws: XARError.self) { try open(unsigned) }
  }
}
