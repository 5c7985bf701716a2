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
  static func craftedContents(_ name: String, _ rule: String, extra: (Int) -> String, heap: [UInt8] = [], change: @escaping (inout CraftedXAR) -> Void = { _ in }) -> HostilePackage {
    let plistBytes: [UInt8] = { if case .file(let b) = plist.content { return b } else { return [] } }()
    let plistData = CraftedXAR.dataElement(stored: plistBytes, plain: plistBytes, offset: 20)
    let toc = CraftedXAR.document(
      "<file id=\"1\"><name>ContentInfo.plist</name><type>file</type><mode>0644</mode>\(plistData)</file>"
        + "<file id=\"2\"><name>Contents</name><type>directory</type><mode>0755</mode>\(extra(20 + plistBytes.count))</file>")
    return crafted(name, rule, toc, heap: plistBytes + heap, change: change)
  }

  /// A XAR whose stored TOC puts `ustar` at offset 257 (a tar header to bsdtar's eyes), with an
  /// ELF inside the XAR view.
  static func polyglot() -> HostilePackage {
    HostilePackage("XAR that is also a tar (ustar at 257)", "package-form") { path in
      let plistBytes: [UInt8] = { if case .file(let b) = plist.content { return b } else { return [] } }()
      let files = "<file id=\"1\"><name>ContentInfo.plist</name><type>file</type><mode>0644</mode>"
        + CraftedXAR.dataElement(stored: plistBytes, plain: plistBytes, offset: 20) + "</file>"
        + "<file id=\"2\"><name>Contents</name><type>directory</type><mode>0755</mode>"
        + "<file id=\"3\"><name>tool.png</name><type>file</type><mode>0644</mode>"
        + CraftedXAR.dataElement(stored: elf, plain: elf, offset: 20 + plistBytes.count) + "</file></file>"
      // A stored zlib stream: XML byte i sits at 28 + 2 + 5 + i. Pad a comment so that `ustar`
      // lands at 257.
      let lead = "<?xml version=\"1.0\" encoding=\"UTF-8\"?><!--"
      let pad = String(repeating: "x", count: 257 - 35 - lead.utf8.count)
      let xml = lead + pad + "ustar  -->" + CraftedXAR.document(files).replacingOccurrences(of: "<?xml version=\"1.0\" encoding=\"UTF-8\"?>", with: "")
      var x = CraftedXAR(toc: xml, heap: plistBytes + elf)
      x.tocLevel = 0
      let bytes = x.bytes()
      precondition(Array(bytes[257..<262]) == Array("ustar".utf8))
      try Data(bytes).write(to: URL(fileURLWithPath: path))
    }
  }

  static let edges: [HostilePackage] = {
    let elfData = { (offset: Int) in CraftedXAR.dataElement(stored: elf, plain: elf, offset: offset) }
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
      craftedContents("hard link with its own data (an ELF)", "archive-integrity", extra: { o in
        "<file id=\"3\"><name>a.txt</name><type>file</type><mode>0644</mode></file>"
          + "<file id=\"4\"><name>b.txt</name><type link=\"3\">hardlink</type><mode>0644</mode>\(elfData(o))</file>"
      }, heap: elf),
      craftedContents("data on a folder", "archive-integrity", extra: { o in
        "<file id=\"3\"><name>d</name><type>directory</type><mode>0755</mode>\(elfData(o))</file>"
      }, heap: elf),
      craftedContents("data on a symlink", "archive-integrity", extra: { o in
        "<file id=\"3\"><name>l</name><type>symlink</type><link type=\"file\">../ContentInfo.plist</link>\(elfData(o))</file>"
      }, heap: elf),
      craftedContents("file that also carries a link", "archive-integrity", extra: { o in
        "<file id=\"3\"><name>f</name><type>file</type><link type=\"file\">/etc/passwd</link><mode>0644</mode></file>"
      }),
      craftedContents("300 entries sharing one heap region", "archive-integrity", extra: { o in
        let chunk = [UInt8](repeating: 0x41, count: 4096)
        let data = CraftedXAR.dataElement(stored: chunk, plain: chunk, offset: o)
        return (0..<300).map { "<file id=\"\(10 + $0)\"><name>f\($0).txt</name><type>file</type><mode>0644</mode>\(data)</file>" }.joined()
      }, heap: [UInt8](repeating: 0x41, count: 4096)),
    ]
    list += zipEdges
    return list
  }()
}

/// Edits a zip's central directory in place, to make the two views of a zip disagree.
public struct ZipPatch {
  public var bytes: [UInt8]

  public init(_ bytes: [UInt8]) { self.bytes = bytes }

  private func u16(_ i: Int) -> Int { Int(bytes[i]) | Int(bytes[i + 1]) << 8 }
  private func u32(_ i: Int) -> Int { u16(i) | u16(i + 2) << 16 }
  private mutating func put16(_ i: Int, _ v: Int) { bytes[i] = UInt8(v & 0xFF); bytes[i + 1] = UInt8(v >> 8 & 0xFF) }
  private mutating func put32(_ i: Int, _ v: Int) { put16(i, v & 0xFFFF); put16(i + 2, v >> 16) }

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
  public func index(of name: String) -> Int { centralEntries.indices.first { centralName($0) == name }! }

  /// Gives central entry `index` another name of the same length.
  public mutating func renameCentral(_ index: Int, to name: String) {
    let p = centralEntries[index]
    precondition(name.utf8.count == u16(p + 28))
    bytes.replaceSubrange((p + 46)..<(p + 46 + name.utf8.count), with: Array(name.utf8))
  }

  public mutating func setCentralMethod(_ index: Int, _ method: Int) { put16(centralEntries[index] + 10, method) }
  public mutating func setCentralSize(_ index: Int, _ size: Int) { put32(centralEntries[index] + 24, size) }

  /// Removes central entry `index`: its local header and data stay where they were.
  public mutating func dropCentral(_ index: Int) {
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
  static func patchedZip(_ name: String, _ rule: String, _ nodes: [Node], patch: @escaping (inout ZipPatch) -> Void) -> HostilePackage {
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
    patchedZip("zip central method differs", "archive-integrity", [.file("Contents/a.txt", String(repeating: "a", count: 500))]) {
      $0.setCentralMethod($0.index(of: "Contents/a.txt"), 0)
    },
    patchedZip("zip central size differs", "archive-integrity", [.file("Contents/a.txt", "abc")]) {
      $0.setCentralSize($0.index(of: "Contents/a.txt"), 2)
    },
    patchedZip("zip entry hidden from the central directory", "archive-integrity", [.file("Contents/hidden.sh", "#!/bin/sh\nrm -rf ~\n")]) {
      $0.dropCentral($0.index(of: "Contents/hidden.sh"))
    },
  ]
}
