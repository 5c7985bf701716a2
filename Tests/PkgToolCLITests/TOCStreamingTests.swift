import Foundation
import Testing

@testable import TestSupport

/// `info --toc` writes the table of contents as it inflates: its memory does not grow with the
/// TOC. Checked with a hard address-space limit (not a clock): the limit is below what holding
/// the TOC (and the text made from it) takes, and the output must still be the whole TOC.
@Suite struct TOCStreamingTests {
  @Test func aHugeWhitespaceTOCStreamsUnderAnAddressSpaceLimit() throws {
    let plist = Array(
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<plist version=\"1.0\"><dict><key>ContentVersion</key><string>1.0</string><key>IAPProductIdentifier</key><string>com.example.big</string></dict></plist>\n"
        .utf8)
    let files =
      "<file id=\"1\"><name>ContentInfo.plist</name><type>file</type><mode>0644</mode>\(CraftedXAR.dataElement(stored: plist, plain: plist, offset: 20))</file>"
      + "<file id=\"2\"><name>Contents</name><type>directory</type><mode>0755</mode></file>"
      + "<file id=\"3\"><name>caf\u{E9}-\u{1F600}</name><type>directory</type><mode>0755</mode></file>"
    // 96 MB of blanks: compressed, a few tens of kilobytes.
    let toc = CraftedXAR.document(String(repeating: " ", count: 96_000_000) + files)
    let scratch = try TemporaryDirectory()
    let package = scratch.appending("big.pkg")
    var crafted = CraftedXAR(toc: toc, heap: plist)
    crafted.tocLevel = 1
    try crafted.write(to: package)
    let out = scratch.appending("toc.xml")
    // About 100 MB of the limit is the process itself (the runtime, ICU's data): holding the TOC
    // twice over does not fit in the rest.
    let result = try runProcess(
      "/bin/sh", ["-c", "ulimit -v 200000 && exec \"$0\" info --toc \"$1\" > \"$2\"", pkgtoolBinary, package, out])
    #expect(result.status == 0, "\(result.stderr)")
    let written = try readFile(out)
    #expect(written.count == toc.utf8.count)
    #expect(written == Array(toc.utf8))
  }
}
