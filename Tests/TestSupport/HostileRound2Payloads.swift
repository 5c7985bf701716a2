import Foundation
import HostedContent
import XAR

extension HostilePackage {
  /// Flat-package payloads (cpio, tar, pax; gzip, bzip2, xz) and plists that cost more than their bytes.
  static let round2Payloads: [HostilePackage] = [
    payload("newc cpio with 7 NUL bytes between two entries (libarchive skips them)") {
      let e = PayloadBytes.self
      return try e.gzip(
        e.newc(e.plistEntry) + e.newc("Contents", mode: 0o40755) + [UInt8](repeating: 0, count: 7)
          + e.newc("Contents/a.txt", data: Array("a".utf8)) + e.newcTrailer)
    },
    payload("newc cpio with a stray byte before an entry libarchive finds by searching") {
      let e = PayloadBytes.self
      return try e.gzip(
        e.newc(e.plistEntry) + e.newc("Contents", mode: 0o40755) + Array("J".utf8)
          + e.newc("Contents/a.txt", data: Array("a".utf8)) + e.newcTrailer)
    },
    payload("newc cpio whose search after garbage lands on a 3 GB symlink target") {
      let e = PayloadBytes.self
      return try e.gzip(
        e.newc(e.plistEntry) + Array("J".utf8) + e.newcHeader("Contents/l", mode: 0o120777, size: 0xC000_0000)
          + Array(repeating: 0x41, count: 64))
    },
    payload("odc cpio with a byte between two entries") {
      let e = PayloadBytes.self
      return try e.gzip(
        e.odc(e.plistEntry) + e.odc("Contents", mode: 0o40755) + [0x0A] + e.odc("Contents/a.txt", data: Array("a".utf8))
          + e.odc("TRAILER!!!"))
    },
    payload("little-endian binary cpio whose second header has no magic") {
      let e = PayloadBytes.self
      return try e.gzip(
        e.binary(e.plistEntry, little: true) + e.binary("Contents/a.txt", data: Array("a".utf8), little: true, magic: 0)
          + e.binary("TRAILER!!!", little: true))
    },
    payload("big-endian binary cpio whose second header has no magic") {
      let e = PayloadBytes.self
      return try e.gzip(
        e.binary(e.plistEntry, little: false)
          + e.binary("Contents/a.txt", data: Array("a".utf8), little: false, magic: 0x1234)
          + e.binary("TRAILER!!!", little: false))
    },
    payload("bzip2 payload whose newc cpio holds a 100 KiB name") {
      let e = PayloadBytes.self
      return try e.compress(
        e.newc(e.plistEntry) + e.newc("Contents/" + String(repeating: "a", count: 100_000), data: []) + e.newcTrailer,
        "bzip2")
    },
    payload("xz payload whose newc cpio holds a 100 KiB name") {
      let e = PayloadBytes.self
      return try e.compress(
        e.newc(e.plistEntry) + e.newc("Contents/" + String(repeating: "a", count: 100_000), data: []) + e.newcTrailer,
        "xz")
    },
    payload("xz payload whose newc cpio declares a 3 GB symlink target") {
      let e = PayloadBytes.self
      return try e.compress(
        e.newc(e.plistEntry) + e.newcHeader("Contents/l", mode: 0o120777, size: 0xC000_0000)
          + Array(repeating: 0x41, count: 64), "xz")
    },
    payload("bzip2 payload whose odc cpio declares a 3 GB symlink target") {
      let e = PayloadBytes.self
      return try e.compress(
        e.odc(e.plistEntry) + e.odcHeader("Contents/l", mode: 0o120777, size: 0xC000_0000)
          + Array(repeating: 0x41, count: 64), "bzip2")
    },
    payload("gzip payload that is itself a gzip of a cpio (the inner stream is never watched)") {
      let e = PayloadBytes.self
      return try e.gzip(e.gzip(e.newc(e.plistEntry) + e.newc("Contents", mode: 0o40755) + e.newcTrailer))
    },
    payload("tar payload with a 1 MB GNU long name") {
      try PayloadBytes.gzip(PayloadBytes.tar(longName: 1_000_000))
    },
    payload("tar payload with a 1 MB GNU long link") {
      try PayloadBytes.gzip(PayloadBytes.tar(longLink: 1_000_000))
    },
    payload("pax payload with a 100 KiB path record (bzip2)") {
      try PayloadBytes.compress(PayloadBytes.tar(paxPath: 100_000), "bzip2")
    },
    payload("ustar payload with a hard link declaring data") {
      try PayloadBytes.gzip(PayloadBytes.tar(hardLinkSize: 64))
    },
    xar(
      "277-byte binary ContentInfo.plist whose shared arrays expand to 2^39 nodes", "content-info",
      [.file(ContentInfo.fileName, bytes: PayloadBytes.sharedReferencePlist())]),
  ]

  /// A flat package whose `content.pkg/Payload` holds `payload()`'s bytes as they are.
  static func payload(
    _ name: String, _ rule: String = "archive-integrity", _ payload: @escaping @Sendable () throws -> [UInt8]
  ) -> HostilePackage {
    HostilePackage("flat package: " + name, rule) { path in
      let bytes = try payload()
      var toc = "<file id=\"1\"><name>Distribution</name><type>file</type><mode>0644</mode></file>"
      toc += "<file id=\"2\"><name>content.pkg</name><type>directory</type><mode>0755</mode>"
      toc +=
        "<file id=\"3\"><name>Payload</name><type>file</type><mode>0644</mode>\(CraftedXAR.dataElement(stored: bytes, plain: bytes, offset: 20))</file></file>"
      try CraftedXAR(toc: CraftedXAR.document(toc), heap: bytes).write(to: path)
    }
  }
}

/// Payload archives written byte by byte, for the payload cases.
package enum PayloadBytes {
  package struct Entry: Sendable {
    var name: String
    var mode: UInt64
    var data: [UInt8]
  }

  package static var plistEntry: Entry {
    let bytes: [UInt8] = { if case .file(let b) = HostilePackage.plist.content { return b } else { return [] } }()
    return Entry(name: "ContentInfo.plist", mode: 0o100644, data: bytes)
  }

  private static func digits(_ v: UInt64, radix: Int, width: Int) -> [UInt8] {
    let s = String(v, radix: radix)
    return Array((String(repeating: "0", count: max(0, width - s.count)) + s).utf8)
  }

  package static func newcHeader(_ name: String, mode: UInt64, size: UInt64) -> [UInt8] {
    let nameBytes = Array(name.utf8) + [0]
    var h = Array("070701".utf8)
    for v in [1, mode, 0, 0, 1, 0, size, 0, 0, 0, 0, UInt64(nameBytes.count), 0] {
      h += digits(v, radix: 16, width: 8)
    }
    h += nameBytes
    while h.count % 4 != 0 { h.append(0) }
    return h
  }

  package static func newc(_ name: String, mode: UInt64 = 0o100644, data: [UInt8] = []) -> [UInt8] {
    var b = newcHeader(name, mode: mode, size: UInt64(data.count)) + data
    while b.count % 4 != 0 { b.append(0) }
    return b
  }

  package static func newc(_ e: Entry) -> [UInt8] { newc(e.name, mode: e.mode, data: e.data) }

  package static var newcTrailer: [UInt8] { newc("TRAILER!!!", mode: 0) }

  package static func odcHeader(_ name: String, mode: UInt64, size: UInt64) -> [UInt8] {
    let nameBytes = Array(name.utf8) + [0]
    var h = Array("070707".utf8)
    for (v, w) in [(0, 6), (1, 6), (mode, 6), (0, 6), (0, 6), (1, 6), (0, 6), (0, 11), (UInt64(nameBytes.count), 6)]
      as [(UInt64, Int)]
    {
      h += digits(v, radix: 8, width: w)
    }
    return h + digits(size, radix: 8, width: 11) + nameBytes
  }

  package static func odc(_ name: String, mode: UInt64 = 0o100644, data: [UInt8] = []) -> [UInt8] {
    odcHeader(name, mode: mode, size: UInt64(data.count)) + data
  }

  package static func odc(_ e: Entry) -> [UInt8] { odc(e.name, mode: e.mode, data: e.data) }

  package static func binary(
    _ name: String, mode: UInt64 = 0o100644, data: [UInt8] = [], little: Bool, magic: UInt16 = 0o070707
  ) -> [UInt8] {
    let nameBytes = Array(name.utf8) + [0]
    func word(_ v: UInt64) -> [UInt8] {
      let a = UInt8(v & 0xFF)
      let b = UInt8((v >> 8) & 0xFF)
      return little ? [a, b] : [b, a]
    }
    var h = word(UInt64(magic)) + word(0) + word(1) + word(mode) + word(0) + word(0) + word(1) + word(0)
    h += word(0) + word(0) + word(UInt64(nameBytes.count))
    h += word(UInt64(data.count) >> 16) + word(UInt64(data.count) & 0xFFFF) + nameBytes
    if h.count % 2 != 0 { h.append(0) }
    h += data
    if h.count % 2 != 0 { h.append(0) }
    return h
  }

  package static func binary(_ e: Entry, little: Bool) -> [UInt8] {
    binary(e.name, mode: e.mode, data: e.data, little: little)
  }

  /// A tar of the standard content, with one special entry.
  package static func tar(longName: Int = 0, longLink: Int = 0, paxPath: Int = 0, hardLinkSize: Int = 0) throws
    -> [UInt8]
  {
    let script = """
      import sys
      plist = sys.stdin.buffer.read()
      long_name, long_link, pax_path, hard = map(int, sys.argv[1:5])
      def header(name, typ, size, link=b"", magic=b"ustar\\x0000"):
          h = bytearray(512)
          h[0:len(name)] = name
          h[100:108] = b"0000644\\0"; h[108:116] = b"0000000\\0"; h[116:124] = b"0000000\\0"
          h[124:136] = b"%011o\\0" % size; h[136:148] = b"%011o\\0" % 946684800
          h[148:156] = b" " * 8; h[156:157] = typ; h[157:157+len(link)] = link
          h[257:265] = magic
          h[148:156] = b"%06o\\0 " % sum(h)
          return bytes(h)
      def pad(b): return b + bytes((-len(b)) % 512)
      def pax(records):
          body = b""
          for k, v in records:
              rec = b" %s=%s\\n" % (k, v)
              n = len(rec) + 1
              while len(str(n).encode()) + len(rec) != n: n += 1
              body += str(n).encode() + rec
          return header(b"PaxHeader/x", b"x", len(body)) + pad(body)
      out = header(b"ContentInfo.plist", b"0", len(plist)) + pad(plist)
      out += header(b"Contents/", b"5", 0)
      out += header(b"Contents/a.txt", b"0", 1) + pad(b"a")
      if long_name:
          name = b"Contents/" + b"n" * (long_name - 10) + b"\\0"
          out += header(b"././@LongLink", b"L", len(name), magic=b"ustar  \\0") + pad(name)
          out += header(b"Contents/short", b"0", 0, magic=b"ustar  \\0")
      if long_link:
          link = b"a" * long_link + b"\\0"
          out += header(b"././@LongLink", b"K", len(link), magic=b"ustar  \\0") + pad(link)
          out += header(b"Contents/l", b"2", 0, b"a.txt", magic=b"ustar  \\0")
      if pax_path:
          out += pax([(b"path", b"Contents/" + b"p" * pax_path)]) + header(b"Contents/p", b"0", 0)
      if hard:
          out += header(b"Contents/h", b"1", hard, b"Contents/a.txt") + pad(b"#!/bin/sh\\n" + b"x" * (hard - 10))
      out += bytes(1024)
      sys.stdout.buffer.write(out)
      """
    let dir = try TemporaryDirectory()
    let plist: [UInt8] = plistEntry.data
    let result = try runProcess(
      "/bin/sh",
      [
        "-c", "python3 -c \"$0\" \"$@\" > \(dir.appending("t"))", script, "\(longName)", "\(longLink)", "\(paxPath)",
        "\(hardLinkSize)",
      ],
      stdin: String(decoding: plist, as: UTF8.self))
    guard result.status == 0 else { throw TestFailure("python: \(result.stderr)") }
    return try readFile(dir.appending("t"))
  }

  /// A `bplist00` ContentInfo.plist (valid keys) whose `Fan` is `levels` arrays, each holding the
  /// next twice: 2^levels nodes when read as a tree. 277 bytes with the default.
  package static func sharedReferencePlist(levels: Int = 39) -> [UInt8] {
    func ascii(_ s: String) -> [UInt8] {
      let b = Array(s.utf8)
      return (b.count < 15 ? [0x50 | UInt8(b.count)] : [0x5F, 0x10, UInt8(b.count)]) + b
    }
    var objects: [[UInt8]] = [
      [0xD3, 1, 2, 3, 4, 5, 6], ascii("ContentVersion"), ascii("IAPProductIdentifier"), ascii("Fan"),
      ascii("1.0"), ascii("com.example.bomb"),
    ]
    for level in 0..<levels { objects.append([0xA2, UInt8(7 + level), UInt8(7 + level)]) }
    objects.append(ascii("x"))
    var out = Array("bplist00".utf8)
    var offsets: [Int] = []
    for object in objects {
      offsets.append(out.count)
      out += object
    }
    let table = out.count
    let offsetSize = table < 256 ? 1 : 2
    for o in offsets { out += offsetSize == 1 ? [UInt8(o)] : [UInt8(o >> 8), UInt8(o & 0xFF)] }
    func be(_ v: Int) -> [UInt8] { (0..<8).reversed().map { UInt8((v >> (8 * $0)) & 0xFF) } }
    out += [0, 0, 0, 0, 0, 0, UInt8(offsetSize), 1] + be(objects.count) + be(0) + be(table)
    return out
  }

  /// A `bplist00` whose `Levels` are `dictionaries` dictionaries that all refer to the same key
  /// and value objects, as Apple's writer shares equal strings.
  package static func sharedKeysPlist(dictionaries: Int) -> [UInt8] {
    func ascii(_ s: String) -> [UInt8] {
      let b = Array(s.utf8)
      return (b.count < 15 ? [0x50 | UInt8(b.count)] : [0x5F, 0x10, UInt8(b.count)]) + b
    }
    func be(_ v: Int, _ n: Int) -> [UInt8] { (0..<n).reversed().map { UInt8((v >> (8 * $0)) & 0xFF) } }
    // 0 root, 1-3 keys, 4-5 values, 6 "name", 7 "level", 8 the Levels array, 9... dictionaries.
    let refSize = 2
    var objects: [[UInt8]] = [
      [0xD3] + [1, 2, 3, 4, 5, 8].flatMap { be($0, refSize) }, ascii("ContentVersion"),
      ascii("IAPProductIdentifier"), ascii("Levels"), ascii("1.0"), ascii("com.example.x"), ascii("name"),
      ascii("level"),
    ]
    objects.append([0xAF, 0x11] + be(dictionaries, 2) + (0..<dictionaries).flatMap { be(9 + $0, refSize) })
    for _ in 0..<dictionaries { objects.append([0xD1] + be(6, refSize) + be(7, refSize)) }
    var out = Array("bplist00".utf8)
    var offsets: [Int] = []
    for object in objects {
      offsets.append(out.count)
      out += object
    }
    let table = out.count
    for o in offsets { out += be(o, 4) }
    out += [0, 0, 0, 0, 0, 0, 4, UInt8(refSize)] + be(objects.count, 8) + be(0, 8) + be(table, 8)
    return out
  }

  package static func gzip(_ bytes: [UInt8]) throws -> [UInt8] { try compress(bytes, "gzip") }

  /// `bytes` through `gzip`, `bzip2` or `xz`.
  package static func compress(_ bytes: [UInt8], _ tool: String) throws -> [UInt8] {
    let dir = try TemporaryDirectory()
    try writeFile(dir.appending("p"), bytes)
    let result = try runProcess("/bin/sh", ["-c", "\(tool) -c < \(dir.appending("p")) > \(dir.appending("c"))"])
    guard result.status == 0 else { throw TestFailure("\(tool): \(result.stderr)") }
    return try readFile(dir.appending("c"))
  }
}
