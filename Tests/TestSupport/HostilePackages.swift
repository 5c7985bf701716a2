import Foundation
import HostedContent
import SystemIO
import XAR
import Zlib

/// Hostile and broken packages, each with the rule `validate` must report. Built from bytes
/// (crafted XAR, Python's tarfile and zipfile), never through `pkgtool build`.
package struct HostilePackage: CustomStringConvertible, Sendable {
  package var name: String
  /// The rule that must be reported.
  package var ruleID: String
  /// Writes the package at the path given.
  package var make: @Sendable (String) throws -> Void
  /// The name the package is written under (the form rule reads it).
  package var fileName = "hostile.pkg"

  package var description: String { name }

  package init(_ name: String, _ ruleID: String, make: @escaping @Sendable (String) throws -> Void) {
    self.name = name
    self.ruleID = ruleID
    self.make = make
  }

  typealias Node = RuleExample.Node
  static let base = RuleExample.baseNodes

  static func xar(_ name: String, _ rule: String, _ nodes: [Node], compress: Bool = false) -> HostilePackage {
    HostilePackage(name, rule) {
      try Data(ExamplePackages.xarBytes(base + nodes, compress: compress)).write(to: URL(fileURLWithPath: $0))
    }
  }

  static func tar(_ name: String, _ rule: String, _ nodes: [Node]) -> HostilePackage {
    HostilePackage(name, rule) { try ExamplePackages.writeTar(base + nodes, to: $0) }
  }

  static func zip(_ name: String, _ rule: String, _ nodes: [Node]) -> HostilePackage {
    HostilePackage(name, rule) { try ExamplePackages.writeZip(base + nodes, to: $0) }
  }

  static func crafted(
    _ name: String, _ rule: String, _ toc: String, heap: [UInt8] = [],
    change: @escaping @Sendable (inout CraftedXAR) -> Void = { _ in }
  ) -> HostilePackage {
    HostilePackage(name, rule) { path in
      var x = CraftedXAR(toc: toc, heap: heap)
      change(&x)
      try x.write(to: path)
    }
  }

  /// A valid package's bytes with `edit` applied.
  static func damaged(_ name: String, _ edit: @escaping @Sendable (inout [UInt8]) -> Void) -> HostilePackage {
    HostilePackage(name, "archive-integrity") { path in
      var bytes = ExamplePackages.xarBytes(
        base + [.file("Contents/data.txt", String(repeating: "payload ", count: 400))], compress: true)
      edit(&bytes)
      try Data(bytes).write(to: URL(fileURLWithPath: path))
    }
  }

  static let plist = RuleExample.baseNodes[0]
  static func plistFile(_ text: String) -> Node { .file(ContentInfo.fileName, text) }

  /// The whole suite: the first round, the edges found since, and round two (one list per
  /// class of input, each in its own file: `HostileRound2*.swift`).
  package static let all: [HostilePackage] = first + edges + round2 + round3

  /// Round two: readers that would see the same bytes differently.
  package static var round2: [HostilePackage] { round2Zip + round2Names + round2Payloads + round2Operations }

  /// Round three: a user's day (broken downloads, ignore files, standard input).
  package static var round3: [HostilePackage] { round3Recover + round3Exclude + round3Stdio }

  /// A copy written under another file name.
  func named(_ fileName: String) -> HostilePackage {
    var copy = self
    copy.fileName = fileName
    return copy
  }

  static let first: [HostilePackage] = {
    let bomb = [UInt8](repeating: 0, count: 20_000_000)
    let bombStored = ZlibDeflater.compress(bomb, level: 9)
    let plistBytes: [UInt8] = { if case .file(let b) = plist.content { return b } else { return [] } }()
    let plistData = CraftedXAR.dataElement(stored: plistBytes, plain: plistBytes, offset: 20)
    func doc(_ extra: String, heapOffset: Int = 20 + plistBytes.count) -> String {
      CraftedXAR.document(
        "<file id=\"1\"><name>ContentInfo.plist</name><type>file</type><mode>0644</mode>\(plistData)</file><file id=\"2\"><name>Contents</name><type>directory</type><mode>0755</mode>\(extra)</file>"
      )
    }
    return [
      // Paths
      xar("dot-dot traversal", "path-safety", [.file("Contents/../../escape.txt", "x")]),
      xar("dot-dot at the root", "path-safety", [.file("../escape.txt", "x")]),
      tar("absolute path", "path-safety", [.file("/tmp/pkgtool-absolute-escape.txt", "x")]),
      tar("dot-dot in tar", "path-safety", [.file("Contents/../../../tmp/pkgtool-escape.txt", "x")]),
      xar("dot component", "path-safety", [.file("Contents/./a.txt", "x")]),
      xar("control character in name", "path-safety", [.file("Contents/a\u{1B}[31mred.txt", "x")]),
      xar("over-long name", "path-safety", [.file("Contents/" + String(repeating: "x", count: 300), "x")]),
      xar(
        "over-long path", "path-safety",
        [.file("Contents/" + Array(repeating: "dddddddddd", count: 110).joined(separator: "/") + "/f", "x")]),
      xar(
        "file through a symlinked folder", "path-safety",
        [.directory("Contents/real"), .symlink("Contents/link", "real"), .file("Contents/link/x.txt", "x")]),
      tar(
        "write through a symlink to outside", "no-external-symlink",
        [.symlink("Contents/out", "../../.."), .file("Contents/out/pwned.txt", "x")]),
      // Links
      xar("symlink with an absolute target", "no-external-symlink", [.symlink("Contents/passwd", "/etc/passwd")]),
      xar("escaping relative symlink", "no-external-symlink", [.symlink("Contents/up", "../../outside")]),
      xar(
        "two-hop escaping chain", "no-external-symlink",
        [.directory("Contents/b"), .symlink("Contents/a", "b/../.."), .symlink("Contents/c", "a/x")]),
      xar("symlink loop", "no-external-symlink", [.symlink("Contents/x", "y"), .symlink("Contents/y", "x")]),
      xar("symlink to ContentInfo.plist", "no-external-symlink", [.symlink("Contents/info", "../ContentInfo.plist")]),
      zip("zip symlink to outside", "no-external-symlink", [.symlink("Contents/etc", "/etc")]),
      tar("hard link out", "special-file", [Node("Contents/h", .hardLink("../../etc/passwd"))]),
      tar(
        "hard link to a later path", "special-file",
        [Node("Contents/h", .hardLink("Contents/later.txt")), .file("Contents/later.txt", "x")]),
      xar("hard link to nothing", "archive-integrity", [Node("Contents/h", .hardLink("Contents/none"))]),
      // Duplicates and collisions
      xar("duplicate path", "duplicate-path", [.file("Contents/a.txt", "1"), .file("Contents/a.txt#2", "2")]),
      tar(
        "file then symlink at one path", "duplicate-path",
        [.file("Contents/a.txt", "1"), .symlink("Contents/a.txt#2", "/etc/passwd")]),
      xar("case collision", "duplicate-path", [.file("Contents/Readme.TXT", "1"), .file("Contents/README.txt", "2")]),
      xar(
        "NFC/NFD collision", "duplicate-path", [.file("Contents/caf\u{E9}", "1"), .file("Contents/cafe\u{301}", "2")]),
      tar("folder then file at one path", "duplicate-path", [.directory("Contents/d"), .file("Contents/d#2", "x")]),
      // Special files and modes
      xar("device node", "special-file", [Node("Contents/null", .characterDevice)]),
      tar("device node in tar", "special-file", [Node("Contents/null", .characterDevice)]),
      xar("FIFO", "special-file", [Node("Contents/pipe", .fifo)]),
      xar("setuid file", "special-file", [.file("Contents/s.txt", "x", mode: 0o4644)]),
      tar("setgid folder", "special-file", [.directory("Contents/g", mode: 0o2755)]),
      xar("executable bit", "no-executable", [.file("Contents/run.txt", "x", mode: 0o755)]),
      // Executables under media names
      xar(
        "Mach-O named .png", "no-executable",
        [.file("Contents/cover.png", bytes: [0xCF, 0xFA, 0xED, 0xFE, 7, 0, 0, 1] + Array(repeating: 0, count: 32))]),
      xar(
        "Mach-O 32 big-endian named .mp3", "no-executable",
        [.file("Contents/song.mp3", bytes: [0xFE, 0xED, 0xFA, 0xCE] + Array(repeating: 0, count: 28))]),
      xar(
        "fat binary named .jpg", "no-executable",
        [.file("Contents/photo.jpg", bytes: [0xCA, 0xFE, 0xBA, 0xBE, 0, 0, 0, 2] + Array(repeating: 0, count: 40))]),
      xar(
        "ELF named .json", "no-executable",
        [.file("Contents/level.json", bytes: [0x7F, 0x45, 0x4C, 0x46, 2, 1, 1] + Array(repeating: 0, count: 57))]),
      zip("script in a zip", "no-executable", [.file("Contents/notes.txt", "#!/bin/sh\nrm -rf ~\n")]),
      // Sizes, bombs, checksums, truncation
      crafted(
        "decompression bomb", "archive-integrity",
        doc(
          "<file id=\"3\"><name>bomb.txt</name><type>file</type>"
            + CraftedXAR.dataElement(
              stored: bombStored, plain: Array(bomb.prefix(1000)), offset: 20 + plistBytes.count,
              encoding: "application/x-gzip", size: 1000) + "</file>"), heap: plistBytes + bombStored),
      crafted(
        "declared size lie", "archive-integrity",
        doc(
          "<file id=\"3\"><name>lie.txt</name><type>file</type>"
            + CraftedXAR.dataElement(
              stored: Array("short".utf8), plain: Array("short".utf8), offset: 20 + plistBytes.count, size: 5, length: 5
            ).replacingOccurrences(of: "<size>5</size>", with: "<size>50</size>") + "</file>"),
        heap: plistBytes + Array("short".utf8)),
      damaged("truncated heap") { $0.removeLast(100) },
      damaged("checksum mismatch") { $0[$0.count - 10] ^= 0x55 },
      damaged("truncated TOC") { $0 = Array($0.prefix(60)) },
      damaged("bad magic") { $0[0] = 0x41 },
      crafted("TOC checksum mismatch", "archive-integrity", doc("")) { $0.corruptTOCChecksum = true },
      crafted(
        "data offset past the heap", "archive-integrity",
        doc(
          "<file id=\"3\"><name>far.txt</name><type>file</type>"
            + CraftedXAR.dataElement(stored: [1, 2, 3], plain: [1, 2, 3], offset: 1_000_000) + "</file>"),
        heap: plistBytes + [1, 2, 3]),
      crafted(
        "TOC with entity expansion", "archive-integrity",
        "<?xml version=\"1.0\"?><!DOCTYPE xar [<!ENTITY a \"aaaaaaaaaa\"><!ENTITY b \"&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;\">]><xar><toc><file id=\"1\"><name>&b;</name></file></toc></xar>"
      ),
      crafted(
        "name with a slash", "archive-integrity", doc("<file id=\"3\"><name>a/../../b</name><type>file</type></file>")),
      crafted(
        "two names", "archive-integrity", doc("<file id=\"3\"><name>a</name><name>b</name><type>file</type></file>")),
      HostilePackage("not a package at all", "archive-integrity") {
        try Data("hello".utf8).write(to: URL(fileURLWithPath: $0))
      },
      HostilePackage("empty file", "archive-integrity") { try Data().write(to: URL(fileURLWithPath: $0)) },
      // Plists
      xar(
        "plist with entities", "content-info",
        [
          plistFile(
            "<?xml version=\"1.0\"?><!DOCTYPE plist [<!ENTITY v \"1.0\">]><plist><dict><key>ContentVersion</key><string>&v;</string><key>IAPProductIdentifier</key><string>com.x</string></dict></plist>"
          )
        ]),
      xar(
        "plist with an external entity", "content-info",
        [
          plistFile(
            "<?xml version=\"1.0\"?><!DOCTYPE plist [<!ENTITY v SYSTEM \"file:///etc/hostname\">]><plist><dict><key>ContentVersion</key><string>&v;</string></dict></plist>"
          )
        ]),
      xar("plist root is an array", "content-info", [plistFile("<plist><array><string>1.0</string></array></plist>")]),
      xar(
        "version is an integer", "content-info",
        [
          plistFile(
            "<plist><dict><key>ContentVersion</key><integer>1</integer><key>IAPProductIdentifier</key><string>com.x</string></dict></plist>"
          )
        ]),
      xar(
        "binary plist cycle", "content-info",
        [
          .file(
            ContentInfo.fileName,
            bytes: Array("bplist00".utf8) + [0xA1, 0x00, 8] + [0, 0, 0, 0, 0, 0, 1, 1] + [0, 0, 0, 0, 0, 0, 0, 1] + [
              0, 0, 0, 0, 0, 0, 0, 0,
            ] + [0, 0, 0, 0, 0, 0, 0, 10])
        ]),
      xar("ContentInfo.plist is a folder", "layout", [.directory("ContentInfo.plist")]),
      xar("extra root entry", "layout", [.file("payload.sh", "x")]),
    ]
  }()
}
