import Foundation
import HostedContent
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

  /// A TOC refused half way (a limit, a cut or a damaged stream) used to stop the process now
  /// and then (SIGILL: libdispatch refusing to free the inflater's semaphore while its permits
  /// were out), 8 runs in 10 on this input; every run must give the finding and exit 1.
  @Test func aTOCRefusedHalfWayNeverStopsTheProcess() throws {
    let scratch = try TemporaryDirectory()
    var nodes = RuleExample.baseNodes
    for i in 0..<3_000 { nodes.append(.file("Contents/d\(i % 9)/file-\(i).txt", "file \(i)\n")) }
    let package = scratch.appending("many.pkg")
    try Data(ExamplePackages.xarBytes(nodes, compress: true)).write(to: URL(fileURLWithPath: package))
    var bytes = try readFile(package)
    // The same package cut inside its compressed TOC.
    let tocLength = bytes[8..<16].reduce(0) { $0 << 8 | Int($1) }
    bytes.removeLast(bytes.count - (28 + tocLength * 2 / 3))
    let cut = scratch.appending("cut.pkg")
    try Data(bytes).write(to: URL(fileURLWithPath: cut))
    for run in 0..<6 {
      let limited = try pkgtool(["validate", package, "--max-entries", "100"])
      #expect(limited.status == 1, "run \(run): \(limited.status) \(limited.stderr)")
      #expect(limited.stdout.contains("more than 100 entries"), "run \(run)")
      let truncated = try pkgtool(["validate", cut])
      #expect(truncated.status == 1, "run \(run): \(truncated.status) \(truncated.stderr)")
    }
  }
}
