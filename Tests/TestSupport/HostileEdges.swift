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
    list += []
    return list
  }()
}
