import Foundation
import HostedContent
import XAR

/// The second round of the hostile suite: what a file *is*, what other readers see in the same
/// bytes, and names that become paths. Each case was accepted (or read another way) before the
/// fix that refuses it.
extension HostilePackage {
  static let elf: [UInt8] = [0x7F, 0x45, 0x4C, 0x46, 2, 1, 1] + Array(repeating: 0, count: 57)

  static func plistText(product: String, version: String = "1.0") -> String {
    """
    <?xml version="1.0" encoding="UTF-8"?>
    <plist version="1.0"><dict><key>ContentVersion</key><string>\(version)</string>\
    <key>IAPProductIdentifier</key><string>\(product)</string></dict></plist>
    """
  }

  /// A crafted XAR: the standard plist and `Contents/`, then `extra` inside `Contents`, with
  /// `heap` after the plist's bytes (heap offsets start at 20 + plist size).
  static func craftedContents(
    _ name: String, _ rule: String, extra: (Int) -> String, heap: [UInt8] = [],
    change: @escaping @Sendable (inout CraftedXAR) -> Void = { _ in }
  ) -> HostilePackage {
    let plistBytes: [UInt8] = { if case .file(let b) = plist.content { return b } else { return [] } }()
    let plistData = CraftedXAR.dataElement(stored: plistBytes, plain: plistBytes, offset: 20)
    let toc = CraftedXAR.document(
      "<file id=\"1\"><name>ContentInfo.plist</name><type>file</type><mode>0644</mode>\(plistData)</file>"
        + "<file id=\"2\"><name>Contents</name><type>directory</type><mode>0755</mode>\(extra(20 + plistBytes.count))</file>"
    )
    return crafted(name, rule, toc, heap: plistBytes + heap, change: change)
  }

  /// A XAR whose stored TOC puts `ustar` at offset 257 (a tar header to bsdtar's eyes), with an
  /// ELF inside the XAR view.
  static func polyglot() -> HostilePackage {
    HostilePackage("XAR that is also a tar (ustar at 257)", "package-form") { path in
      let plistBytes: [UInt8] = { if case .file(let b) = plist.content { return b } else { return [] } }()
      let files =
        "<file id=\"1\"><name>ContentInfo.plist</name><type>file</type><mode>0644</mode>"
        + CraftedXAR.dataElement(stored: plistBytes, plain: plistBytes, offset: 20) + "</file>"
        + "<file id=\"2\"><name>Contents</name><type>directory</type><mode>0755</mode>"
        + "<file id=\"3\"><name>tool.png</name><type>file</type><mode>0644</mode>"
        + CraftedXAR.dataElement(stored: elf, plain: elf, offset: 20 + plistBytes.count) + "</file></file>"
      // A stored zlib stream: XML byte i sits at 28 + 2 + 5 + i. Pad a comment so that `ustar`
      // lands at 257.
      let lead = "<?xml version=\"1.0\" encoding=\"UTF-8\"?><!--"
      let pad = String(repeating: "x", count: 257 - 35 - lead.utf8.count)
      let xml =
        lead + pad + "ustar  -->"
        + CraftedXAR.document(files).replacingOccurrences(of: "<?xml version=\"1.0\" encoding=\"UTF-8\"?>", with: "")
      var x = CraftedXAR(toc: xml, heap: plistBytes + elf)
      x.tocLevel = 0
      let bytes = x.bytes()
      precondition(Array(bytes[257..<262]) == Array("ustar".utf8))
      try Data(bytes).write(to: URL(fileURLWithPath: path))
    }
  }

  package static let edges: [HostilePackage] = {
    let elfData = { @Sendable (offset: Int) in CraftedXAR.dataElement(stored: elf, plain: elf, offset: offset) }
    var list: [HostilePackage] = [
      // Names that become folders in install.
      xar("product id '..'", "content-info", [plistFile(plistText(product: ".."))]),
      xar("product id '.'", "content-info", [plistFile(plistText(product: "."))]),
      xar("product id with a leading dot", "content-info", [plistFile(plistText(product: ".com.example"))]),
      xar("product id with an empty label", "content-info", [plistFile(plistText(product: "com..example"))]),
      // The name says the form; the bytes must agree.
      tar("tar named .pkg", "package-form", []),
      zip("zip named .pkg", "package-form", []),
      xar("XAR named .zip", "package-form", []).named("hostile.zip"),
      polyglot(),
      // Data carried by entries that are not plain files.
      craftedContents(
        "hard link with its own data (an ELF)", "archive-integrity",
        extra: { o in
          "<file id=\"3\"><name>a.txt</name><type>file</type><mode>0644</mode></file>"
            + "<file id=\"4\"><name>b.txt</name><type link=\"3\">hardlink</type><mode>0644</mode>\(elfData(o))</file>"
        }, heap: elf),
      craftedContents(
        "data on a folder", "archive-integrity",
        extra: { o in
          "<file id=\"3\"><name>d</name><type>directory</type><mode>0755</mode>\(elfData(o))</file>"
        }, heap: elf),
      craftedContents(
        "data on a symlink", "archive-integrity",
        extra: { o in
          "<file id=\"3\"><name>l</name><type>symlink</type><link type=\"file\">../ContentInfo.plist</link>\(elfData(o))</file>"
        }, heap: elf),
      craftedContents(
        "file that also carries a link", "archive-integrity",
        extra: { o in
          "<file id=\"3\"><name>f</name><type>file</type><link type=\"file\">/etc/passwd</link><mode>0644</mode></file>"
        }),
      craftedContents(
        "300 entries sharing one heap region", "archive-integrity",
        extra: { o in
          let chunk = [UInt8](repeating: 0x41, count: 4096)
          let data = CraftedXAR.dataElement(stored: chunk, plain: chunk, offset: o)
          return (0..<300).map {
            "<file id=\"\(10 + $0)\"><name>f\($0).txt</name><type>file</type><mode>0644</mode>\(data)</file>"
          }.joined()
        }, heap: [UInt8](repeating: 0x41, count: 4096)),
    ]
    list += zipEdges + zipNameEdges + flatAndLinkEdges + [cpioBomb(gzip: false), cpioBomb(gzip: true)]
    list += [lateField("<mode>755</mode>"), lateField("<mtime>2024-01-01T00:00:00Z</mtime>", adding: true)]
    return list
  }()
}

/// Edits a zip's central directory in place, to make the two views of a zip disagree.
package struct ZipPatch {
  package var bytes: [UInt8]

  package init(_ bytes: [UInt8]) { self.bytes = bytes }

  private func u16(_ i: Int) -> Int { Int(bytes[i]) | Int(bytes[i + 1]) << 8 }
  private func u32(_ i: Int) -> Int { u16(i) | u16(i + 2) << 16 }
  private mutating func put16(_ i: Int, _ v: Int) {
    bytes[i] = UInt8(v & 0xFF)
    bytes[i + 1] = UInt8(v >> 8 & 0xFF)
  }
  private mutating func put32(_ i: Int, _ v: Int) {
    put16(i, v & 0xFFFF)
    put16(i + 2, v >> 16)
  }

  var eocd: Int { (0...(bytes.count - 22)).reversed().first { u32($0) == 0x0605_4B50 }! }

  /// Offsets of the central entries, in order.
  var centralEntries: [Int] {
    var result: [Int] = []
    var p = u32(eocd + 16)
    for _ in 0..<u16(eocd + 10) {
      result.append(p)
      p += 46 + u16(p + 28) + u16(p + 30) + u16(p + 32)
    }
    return result
  }

  func centralName(_ index: Int) -> String {
    let p = centralEntries[index]
    return String(decoding: bytes[(p + 46)..<(p + 46 + u16(p + 28))], as: UTF8.self)
  }

  /// The index of the central entry named `name`.
  package func index(of name: String) -> Int { centralEntries.indices.first { centralName($0) == name }! }

  /// Gives central entry `index` another name of the same length.
  package mutating func renameCentral(_ index: Int, to name: String) {
    let p = centralEntries[index]
    precondition(name.utf8.count == u16(p + 28))
    bytes.replaceSubrange((p + 46)..<(p + 46 + name.utf8.count), with: Array(name.utf8))
  }

  package mutating func setCentralMethod(_ index: Int, _ method: Int) { put16(centralEntries[index] + 10, method) }
  package mutating func setCentralSize(_ index: Int, _ size: Int) { put32(centralEntries[index] + 24, size) }

  /// Removes central entry `index`: its local header and data stay where they were.
  package mutating func dropCentral(_ index: Int) {
    let entries = centralEntries
    let start = entries[index]
    let end = index + 1 < entries.count ? entries[index + 1] : eocd
    let removed = end - start
    let e = eocd
    put16(e + 8, u16(e + 8) - 1)
    put16(e + 10, u16(e + 10) - 1)
    put32(e + 12, u32(e + 12) - removed)
    bytes.removeSubrange(start..<end)
  }
}

extension HostilePackage {
  /// A zip of the standard package plus `nodes`, with `patch` applied to its central directory.
  static func patchedZip(
    _ name: String, _ rule: String, _ nodes: [Node], patch: @escaping @Sendable (inout ZipPatch) -> Void
  ) -> HostilePackage {
    HostilePackage(name, rule) { path in
      try ExamplePackages.writeZip(base + nodes, to: path)
      var zip = ZipPatch(try readFile(path))
      patch(&zip)
      try Data(zip.bytes).write(to: URL(fileURLWithPath: path))
    }.named("hostile.zip")
  }

  static let zipEdges: [HostilePackage] = [
    patchedZip("zip central name traverses", "archive-integrity", [.file("Contents/innocent.txt", "x")]) {
      $0.renameCentral($0.index(of: "Contents/innocent.txt"), to: "../../../../escap.txt")
    },
    patchedZip(
      "zip central method differs", "archive-integrity", [.file("Contents/a.txt", String(repeating: "a", count: 500))]
    ) {
      $0.setCentralMethod($0.index(of: "Contents/a.txt"), 0)
    },
    patchedZip("zip central size differs", "archive-integrity", [.file("Contents/a.txt", "abc")]) {
      $0.setCentralSize($0.index(of: "Contents/a.txt"), 2)
    },
    patchedZip(
      "zip entry hidden from the central directory", "archive-integrity",
      [.file("Contents/hidden.sh", "#!/bin/sh\nrm -rf ~\n")]
    ) {
      $0.dropCentral($0.index(of: "Contents/hidden.sh"))
    },
  ]
}

extension HostilePackage {
  /// A flat package: `Distribution`, `content.pkg/PackageInfo`, `content.pkg/Payload` (a gzip'd
  /// cpio of the standard content plus `prepare`'s changes, in `cpioFormat`), and the outer
  /// members `outer` (XML of `<file>` elements, given the heap offset where `outerHeap` starts).
  static func flat(
    _ name: String, _ rule: String, cpioFormat: String = "odc",
    prepare: @escaping @Sendable (String) throws -> Void = { _ in },
    outer: @escaping @Sendable (Int) -> String = { _ in "" }, outerHeap: [UInt8] = [],
    payloadName: String = "<name>Payload</name>"
  ) -> HostilePackage {
    HostilePackage(name, rule) { path in
      let scratch = try TemporaryDirectory()
      let source = scratch.appending("src")
      try ExamplePackages.writeFolder(base, at: source)
      try prepare(source)
      let payloadPath = scratch.appending("Payload")
      try bsdtar(["-c", "--format", cpioFormat, "-z", "-f", payloadPath, "-C", source, "."])
      let payload = try readFile(payloadPath)
      let distribution = Array("<?xml version=\"1.0\"?><installer-gui-script minSpecVersion=\"1\"/>".utf8)
      let info = Array("<pkg-info/>".utf8)
      var heap: [UInt8] = []
      func data(_ bytes: [UInt8]) -> String {
        defer { heap += bytes }
        return CraftedXAR.dataElement(stored: bytes, plain: bytes, offset: 20 + heap.count)
      }
      var toc = "<file id=\"1\"><name>Distribution</name><type>file</type><mode>0644</mode>\(data(distribution))</file>"
      toc += "<file id=\"2\"><name>content.pkg</name><type>directory</type><mode>0755</mode>"
      toc += "<file id=\"3\"><name>PackageInfo</name><type>file</type><mode>0644</mode>\(data(info))</file>"
      toc += "<file id=\"4\">\(payloadName)<type>file</type><mode>0644</mode>\(data(payload))</file></file>"
      toc += outer(20 + heap.count)
      heap += outerHeap
      try CraftedXAR(toc: CraftedXAR.document(toc), heap: heap).write(to: path)
    }
  }

  static let flatAndLinkEdges: [HostilePackage] = {
    let elfData = { @Sendable (offset: Int) in CraftedXAR.dataElement(stored: elf, plain: elf, offset: offset) }
    return [
      // Data on hard links, which extractors write over the linked file.
      HostilePackage("pax hard link carrying an ELF", "special-file") { path in
        // Written byte by byte: Python's tarfile will not put data behind a hard link.
        let script = """
          import sys
          elf = bytes([0x7F, 0x45, 0x4C, 0x46, 2, 1, 1] + [0] * 57)
          def header(name, typ, size, link=b""):
              h = bytearray(512)
              h[0:len(name)] = name
              h[100:108] = b"0000644\\0"; h[108:116] = b"0000000\\0"; h[116:124] = b"0000000\\0"
              h[124:136] = b"%011o\\0" % size; h[136:148] = b"%011o\\0" % 946684800
              h[148:156] = b" " * 8; h[156:157] = typ; h[157:157+len(link)] = link
              h[257:263] = b"ustar\\0"; h[263:265] = b"00"
              h[148:156] = b"%06o\\0 " % sum(h)
              return bytes(h)
          def pad(b): return b + bytes((-len(b)) % 512)
          def pax(name, records):
              body = b""
              for k, v in records:
                  rec = b" %s=%s\\n" % (k, v)
                  n = len(rec) + 1
                  while len(str(n).encode()) + len(rec) != n: n += 1
                  body += str(n).encode() + rec
              return header(b"PaxHeader/" + name, b"x", len(body)) + pad(body)
          out = b""
          def add(name, typ, data=b"", link=b""):
              global out
              out += pax(name, [(b"mtime", b"946684800")]) + header(name, typ, len(data), link) + pad(data)
          plist = sys.stdin.buffer.read()
          add(b"ContentInfo.plist", b"0", plist)
          add(b"Contents", b"5")
          add(b"Contents/a.txt", b"0", b"")
          add(b"Contents/b.txt", b"1", elf, b"Contents/a.txt")
          out += bytes(1024)
          open(sys.argv[1], "wb").write(out)
          """
        let plistBytes: [UInt8] = { if case .file(let b) = plist.content { return b } else { return [] } }()
        let result = try runProcess(
          "/usr/bin/env", ["python3", "-c", script, path], stdin: String(decoding: plistBytes, as: UTF8.self))
        guard result.status == 0 else { throw TestFailure("python: \(result.stderr)") }
      },
      flat("newc cpio hard-link set whose data rides on the last link", "special-file", cpioFormat: "newc") { src in
        try writeFile(src + "/Contents/a.txt", elf)
        guard link(src + "/Contents/a.txt", src + "/Contents/b.txt") == 0 else { throw TestFailure("link") }
      },
      // Members of a flat package outside its payload.
      flat(
        "flat package with a setuid ELF in Resources", "no-executable",
        outer: { o in
          "<file id=\"20\"><name>Resources</name><type>directory</type><mode>0755</mode><file id=\"21\"><name>helper</name><type>file</type><mode>4755</mode>\(elfData(o))</file></file>"
        }, outerHeap: elf),
      flat(
        "flat package with Scripts", "layout",
        outer: { o in
          let script = Array("#!/bin/sh\necho hi\n".utf8)
          return
            "<file id=\"20\"><name>other.pkg</name><type>directory</type><mode>0755</mode><file id=\"21\"><name>Scripts</name><type>file</type><mode>0644</mode>\(CraftedXAR.dataElement(stored: script, plain: script, offset: o))</file></file>"
        }, outerHeap: Array("#!/bin/sh\necho hi\n".utf8)),
      flat(
        "flat package with ../escape -> /etc/passwd outside the payload", "path-safety",
        outer: { _ in
          "<file id=\"20\"><name>..</name><type>directory</type><mode>0755</mode><file id=\"21\"><name>escape</name><type>symlink</type><link type=\"file\">/etc/passwd</link></file></file>"
        }),
      flat(
        "flat package with a device outside the payload", "special-file",
        outer: { _ in
          "<file id=\"20\"><name>Resources</name><type>directory</type><mode>0755</mode><file id=\"21\"><name>null</name><type>character special</type><mode>0644</mode></file></file>"
        }),
      flat(
        "flat package with a size lie outside the payload", "archive-integrity",
        outer: { o in
          let bytes = Array("short".utf8)
          return
            "<file id=\"20\"><name>Resources</name><type>directory</type><mode>0755</mode><file id=\"21\"><name>en.lproj</name><type>file</type><mode>0644</mode>"
            + CraftedXAR.dataElement(stored: bytes, plain: bytes, offset: o).replacingOccurrences(
              of: "<size>5</size>", with: "<size>50</size>"
            ).replacingOccurrences(of: "<length>5</length>", with: "<length>5</length>") + "</file></file>"
        }, outerHeap: Array("short".utf8)),
      // Symlink targets as the device's file system reads them.
      crafted(
        "symlink target with a NUL", "no-external-symlink",
        CraftedXAR.document(
          "<file id=\"1\"><name>ContentInfo.plist</name><type>file</type><mode>0644</mode>\(plistDataElement)</file>"
            + "<file id=\"2\"><name>Contents</name><type>directory</type><mode>0755</mode>"
            + "<file id=\"3\"><name>l1</name><type>symlink</type><link type=\"file\" enctype=\"base64\">\(Data("..\u{0}/d".utf8).base64EncodedString())</link></file></file>"
        ),
        heap: plistBytes),
      xar(
        "escape through case-folded links (L/.. on APFS)", "no-external-symlink",
        [
          .directory("Contents/a"), .directory("Contents/a/b"), .directory("Contents/a/b/c"),
          .symlink("Contents/l", "."), .symlink("Contents/a/l", "."), .symlink("Contents/a/b/l", "."),
          .symlink("Contents/a/b/c/l", "."),
          .symlink("Contents/a/b/c/x", "L/../L/../L/../L/../../etc/passwd"),
        ]),
      xar(
        "file under a symlinked folder spelled in other case", "path-safety",
        [
          .directory("Contents/real"), .symlink("Contents/link", "real"), .file("Contents/LINK/x.txt", "x"),
        ]),
    ]
  }()

  static var plistBytes: [UInt8] { if case .file(let b) = plist.content { return b } else { return [] } }
  static var plistDataElement: String { CraftedXAR.dataElement(stored: plistBytes, plain: plistBytes, offset: 20) }
}

extension HostilePackage {
  /// A zip written by a Python script (`zipfile` as `z`, the standard plist as `plist`).
  static func pythonZip(_ name: String, _ rule: String, _ body: String) -> HostilePackage {
    HostilePackage(name, rule) { path in
      let script = """
        import sys, zipfile, struct, zlib
        plist = sys.stdin.buffer.read()
        with zipfile.ZipFile(sys.argv[1], "w", zipfile.ZIP_DEFLATED) as z:
            z.writestr("ContentInfo.plist", plist)
            z.writestr("Contents/", b"")
        \(body.split(separator: "\n").map { "    " + $0 }.joined(separator: "\n"))
        """
      let result = try runProcess(
        "/usr/bin/env", ["python3", "-c", script, path], stdin: String(decoding: plistBytes, as: UTF8.self))
      guard result.status == 0 else { throw TestFailure("python: \(result.stderr)") }
    }.named("hostile.zip")
  }

  static let zipNameEdges: [HostilePackage] = [
    pythonZip(
      "zip Unicode path field naming another file", "archive-integrity",
      """
      info = zipfile.ZipInfo("Contents/a.txt")
      other = b"../../../evil.txt"
      info.extra = struct.pack("<HHB", 0x7075, 5 + len(other), 1) + struct.pack("<I", zlib.crc32(b"Contents/a.txt")) + other
      z.writestr(info, b"x")
      """),
    pythonZip(
      "zip with a second end record in its comment", "archive-integrity",
      """
      z.writestr("Contents/a.txt", b"x")
      z.comment = b"PK\\x05\\x06" + bytes(16) + b"\\x00\\x00"
      """),
    pythonZip(
      "zip name with backslashes", "path-safety",
      """
      z.writestr("Contents/..\\\\..\\\\evil.txt", b"x")
      """),
  ]
}

extension HostilePackage {
  /// A flat package whose Payload is a newc cpio with a symlink header declaring a 3 GB target
  /// (libarchive would allocate that much before reading a byte of it), gzip'd or not.
  package static func cpioBomb(gzip: Bool) -> HostilePackage {
    HostilePackage(
      "flat package whose cpio declares a 3 GB symlink target\(gzip ? " (gzip)" : "")", "archive-integrity"
    ) { path in
      let name = "Contents/l"
      func hex(_ v: UInt64) -> String {
        let s = String(v, radix: 16)
        return String(repeating: "0", count: 8 - s.count) + s
      }
      var header = "070701" + hex(1) + hex(0o120777) + hex(0) + hex(0) + hex(1) + hex(0) + hex(0xC000_0000)
      header += hex(0) + hex(0) + hex(0) + hex(0) + hex(UInt64(name.utf8.count + 1)) + hex(0)
      var cpio = Array(header.utf8) + Array(name.utf8) + [0]
      while cpio.count % 4 != 0 { cpio.append(0) }
      cpio += Array(repeating: 0x41, count: 64)
      let payload = gzip ? try runGzip(cpio) : cpio
      var toc = "<file id=\"1\"><name>Distribution</name><type>file</type><mode>0644</mode></file>"
      toc += "<file id=\"2\"><name>content.pkg</name><type>directory</type><mode>0755</mode>"
      toc +=
        "<file id=\"3\"><name>Payload</name><type>file</type><mode>0644</mode>\(CraftedXAR.dataElement(stored: payload, plain: payload, offset: 20))</file></file>"
      try CraftedXAR(toc: CraftedXAR.document(toc), heap: payload).write(to: path)
    }
  }

  static func runGzip(_ bytes: [UInt8]) throws -> [UInt8] {
    let dir = try TemporaryDirectory()
    try Data(bytes).write(to: URL(fileURLWithPath: dir.appending("p")))
    let result = try runProcess("/usr/bin/env", ["gzip", "-n", dir.appending("p")])
    guard result.status == 0 else { throw TestFailure("gzip: \(result.stderr)") }
    return try readFile(dir.appending("p.gz"))
  }

  /// A valid package whose `Contents` folder gets a field after its children (moved there, or
  /// added): read as the TOC streams, the folder is taken at its first child without it, so the
  /// two readings differ; both readers refuse it (`fieldAfterChildren`).
  static func lateField(_ field: String, adding: Bool = false) -> HostilePackage {
    HostilePackage("a folder's \(field.prefix { $0 != ">" })> after its children", "archive-integrity") { path in
      var nodes = base
      for i in 0..<20 { nodes.append(.file("Contents/d\(i % 3)/f\(i).txt", "file \(i)\n")) }
      let bytes = ExamplePackages.xarBytes(nodes, compress: true)
      try Data(bytes).write(to: URL(fileURLWithPath: path))
      var xml = String(decoding: try XARReader(path: path).tocXML, as: UTF8.self)
      guard let contents = xml.range(of: "<name>Contents</name>") else { throw XARError.notXAR }
      if !adding {
        guard let moved = xml.range(of: field, range: contents.upperBound..<xml.endIndex) else { throw XARError.notXAR }
        xml.removeSubrange(moved)
      }
      guard let end = xml.range(of: "</toc>"),
        let lastClose = xml.range(of: "</file>", options: .backwards, range: xml.startIndex..<end.lowerBound)
      else { throw XARError.notXAR }
      xml.insert(contentsOf: field, at: lastClose.lowerBound)
      let headerSize = Int(bytes[4]) << 8 | Int(bytes[5])
      let tocLength = bytes[8..<16].reduce(0) { $0 << 8 | Int($1) }
      try CraftedXAR(toc: xml, heap: Array(bytes[(headerSize + tocLength + 20)...])).write(to: path)
    }
  }
}
