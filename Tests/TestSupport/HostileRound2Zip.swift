import Foundation
import HostedContent
import XAR

extension HostilePackage {
  /// A zip whose bytes a Python script builds freely: `out` (a bytearray) is written to the
  /// path; `plist` is the standard ContentInfo.plist; `zipfile`, `struct` and `zlib` are imported,
  /// and `local(name, data, flags=0, method=0, crc=None)` / `central(...)` / `end(...)` write
  /// the records by hand.
  static func rawZip(_ name: String, _ rule: String, _ body: String) -> HostilePackage {
    HostilePackage(name, rule) { path in
      let script = """
        import sys, zipfile, struct, zlib
        plist = sys.stdin.buffer.read()
        out = bytearray()
        entries = []
        def local(name, data, flags=0, method=0, crc=None, sizes=True, attrs=0o100644 << 16, system=3):
            crc = zlib.crc32(data) if crc is None else crc
            offset = len(out)
            size = len(data) if sizes else 0
            out.extend(struct.pack("<IHHHHHIIIHH", 0x04034b50, 20, flags, method, 0, 0x21, crc if sizes else 0, size, size, len(name), 0) + name + data)
            entries.append((name, flags, method, crc, len(data), offset, attrs, system))
        def descriptor(data, crc=None):
            out.extend(struct.pack("<IIII", 0x08074b50, zlib.crc32(data) if crc is None else crc, len(data), len(data)))
        def end(comment=b""):
            start = len(out)
            for (name, flags, method, crc, size, offset, attrs, system) in entries:
                out.extend(struct.pack("<IBBHHHHHIIIHHHHHII", 0x02014b50, 20, system, 20, flags, method, 0, 0x21, crc, size, size, len(name), 0, 0, 0, 0, attrs, offset) + name)
            out.extend(struct.pack("<IHHHHIIH", 0x06054b50, 0, 0, len(entries), len(entries), len(out) - start, start, len(comment)) + comment)
        local(b"ContentInfo.plist", plist)
        local(b"Contents/", b"", attrs=0o40755 << 16 | 0x10)
        \(body)
        open(sys.argv[1], "wb").write(out)
        """
      let result = try runProcess(
        "/usr/bin/env", ["python3", "-c", script, path], stdin: String(decoding: plistBytes, as: UTF8.self))
      guard result.status == 0 else { throw TestFailure("python: \(result.stderr)") }
    }.named("hostile.zip")
  }

  /// Zips that two readers (central directory, streaming, unzip) would read differently.
  package static let round2Zip: [HostilePackage] = [
    rawZip(
      "zip name flagged UTF-8 that is not UTF-8", "archive-integrity",
      """
      local(b"Contents/\\xff\\xfe.txt", b"x", flags=0x800)
      end()
      """),
    rawZip(
      "zip name in a legacy code page", "archive-integrity",
      """
      local(b"Contents/\\x8f\\xe0\\xa8\\xa2\\xa5\\xe2.txt", b"x")
      end()
      """),
    rawZip(
      "zip file with a folder's Unix mode", "archive-integrity",
      """
      local(b"Contents/run", b"#!/bin/sh\\necho hi\\n", attrs=0o40755 << 16)
      end()
      """),
    rawZip(
      "zip folder with a regular file's mode", "archive-integrity",
      """
      local(b"Contents/dir/", b"", attrs=0o100755 << 16)
      end()
      """),
    rawZip(
      "zip file with the MS-DOS folder bit", "archive-integrity",
      """
      local(b"Contents/a", b"", attrs=0x10, system=0)
      end()
      """),
    rawZip(
      "zip folder carrying data", "archive-integrity",
      """
      local(b"Contents/dir/", b"#!/bin/sh\\necho hidden\\n", attrs=0o40755 << 16)
      end()
      """),
    rawZip(
      "zip stored entry with a descriptor hiding an entry", "archive-integrity",
      """
      inner = b"#!/bin/sh\\necho hidden\\n"
      head = b"abc"
      fake = struct.pack("<IIII", 0x08074b50, zlib.crc32(head), len(head), len(head))
      hidden = struct.pack("<IHHHHHIIIHH", 0x04034b50, 20, 0, 0, 0, 0x21, zlib.crc32(inner), len(inner), len(inner), 16, 0) + b"Contents/evil.sh" + inner
      data = head + fake + hidden
      local(b"Contents/a.bin", data, flags=0x08, sizes=False)
      descriptor(data)
      end()
      """),
    rawZip(
      "zip data descriptor with another CRC", "archive-integrity",
      """
      local(b"Contents/a.txt", b"hello", flags=0x08, sizes=False)
      descriptor(b"hello", crc=0x12345678)
      end()
      """),
    rawZip(
      "zip junk between entries", "archive-integrity",
      """
      local(b"Contents/a.txt", b"hello")
      out.extend(b"-JUNK-")
      local(b"Contents/b.txt", b"world")
      end()
      """),
    rawZip(
      "zip with bytes after its end record", "archive-integrity",
      """
      local(b"Contents/a.txt", b"hello")
      end()
      out.extend(b"trailing bytes")
      """),
    rawZip(
      "zip entry compressed with implode", "archive-integrity",
      """
      local(b"Contents/a.txt", b"hello", method=6)
      end()
      """),
    // Found by the red-team pass: unzip takes the last Unicode path field of the central
    // directory; libarchive reads none of them.
    rawZip(
      "zip central entry with a second Unicode path field", "archive-integrity",
      """
      local(b"Contents/a.txt", b"x")
      def field(n): return struct.pack("<HHBI", 0x7075, 5 + len(n), 1, zlib.crc32(b"Contents/a.txt")) + n
      extra = field(b"Contents/a.txt") + field(b"../../evil.txt")
      start = len(out)
      for (name, flags, method, crc, size, offset, attrs, system) in entries:
          x = extra if name == b"Contents/a.txt" else b""
          out.extend(struct.pack("<IBBHHHHHIIIHHHHHII", 0x02014b50, 20, system, 20, flags, method, 0, 0x21, crc, size, size, len(name), len(x), 0, 0, 0, attrs, offset) + name + x)
      out.extend(struct.pack("<IHHHHIIH", 0x06054b50, 0, 0, len(entries), len(entries), len(out) - start, start, 0))
      """),
    // Found by the red-team pass: a symlink's deflated target, with its sizes in a descriptor,
    // ends early; a streaming reader takes the forged descriptor and then the hidden entry.
    rawZip(
      "zip symlink with a descriptor hiding an entry", "archive-integrity",
      """
      target = b"a.txt"
      co = zlib.compressobj(9, zlib.DEFLATED, -15)
      d = co.compress(target) + co.flush()
      fake = struct.pack("<IIII", 0x08074b50, zlib.crc32(target), len(d), len(target))
      inner = b"#!/bin/sh\\necho pwned\\n"
      hidden = struct.pack("<IHHHHHIIIHH", 0x04034b50, 20, 0, 0, 0, 0x21, zlib.crc32(inner), len(inner), len(inner), 16, 0) + b"Contents/evil.sh" + inner
      raw = d + fake + hidden
      link = b"Contents/l"
      at = len(out)
      out.extend(struct.pack("<IHHHHHIIIHH", 0x04034b50, 20, 0x08, 8, 0, 0x21, 0, 0, 0, len(link), 0) + link + raw)
      out.extend(struct.pack("<IIII", 0x08074b50, zlib.crc32(target), len(raw), len(target)))
      start = len(out)
      for (name, flags, method, crc, size, offset, attrs, system) in entries:
          out.extend(struct.pack("<IBBHHHHHIIIHHHHHII", 0x02014b50, 20, system, 20, flags, method, 0, 0x21, crc, size, size, len(name), 0, 0, 0, 0, attrs, offset) + name)
      out.extend(struct.pack("<IBBHHHHHIIIHHHHHII", 0x02014b50, 20, 3, 20, 0x08, 8, 0, 0x21, zlib.crc32(target), len(raw), len(target), len(link), 0, 0, 0, 0, 0o120777 << 16, at) + link)
      out.extend(struct.pack("<IHHHHIIH", 0x06054b50, 0, 0, len(entries) + 1, len(entries) + 1, len(out) - start, start, 0))
      """),
  ]
}
