/// `special-file`: only files, folders and symlinks; no special permission bits; hard links only
/// to files inside the package.
package final class SpecialFileRule: Rule {
  package static let description = RuleDescription(
    id: "special-file", name: "Special files", category: .content,
    headline: "Devices, FIFOs, sockets; setuid, setgid or sticky bits; hard links to anything outside the package.",
    summary:
      "Devices, FIFOs, sockets; setuid, setgid, sticky bits; hard links to anything outside the package, or carrying data of their own.",
    rationale: "Special files do nothing useful in content and can be abused on the machine that unpacks them.",
    securitySeverity: 7.5,
    details: [
      "Refuses hard links that carry bytes of their own (a pax hard link with data, the last link of a newc cpio set): extractors write those bytes over the linked file."
    ],
    triggering: [
      RuleExample.package("FIFO", adding: [Node("Contents/pipe", .fifo)], expecting: "Contents/pipe"),
      RuleExample.package("device node", adding: [Node("Contents/dev", .characterDevice)], expecting: "Contents/dev"),
      RuleExample.package(
        "setuid bit", adding: [.file("Contents/s.txt", "x", mode: 0o4644)], expecting: "Contents/s.txt"
      ).with { $0.appliesToFolders = false },
      RuleExample.package(
        "sticky folder", adding: [.directory("Contents/tmp", mode: 0o1755)], expecting: "Contents/tmp"
      ).with { $0.appliesToFolders = false },
      RuleExample.package(
        "hard link out", adding: [Node("Contents/h", .hardLink("../../etc/passwd"))], expecting: "Contents/h"
      ).with {
        $0.appliesToFolders = false
        $0.packageFormat = .tar
      },
    ],
    nonTriggering: [
      RuleExample.package("hard link inside", adding: [Node("Contents/copy.txt", .hardLink("Contents/readme.txt"))])
    ])

  package typealias Node = RuleExample.Node

  package init(context: RuleContext) {}

  package func inspect(_ inspected: InspectedEntry, into findings: inout [Finding]) {
    let entry = inspected.entry
    switch entry.kind {
    case .fifo, .socket, .characterDevice, .blockDevice, .other:
      findings.append(
        finding(
          entry.path, "the entry is a \(entry.kind.rawValue.replacingOccurrences(of: "-", with: " "))",
          hint: "content may only hold files, folders and internal symlinks"))
      return
    case .hardLink:
      let target = entry.linkTarget ?? ""
      if entry.size > 0 {
        findings.append(
          finding(
            entry.path,
            "the hard link to '\(target)' carries \(entry.size) bytes of its own, which extractors write over '\(target)' unchecked",
            hint: "store the file itself, not a hard link with data (pkgtool build turns hard links into files)"))
      } else if !inspected.paths.containsEntry(target) {
        findings.append(
          finding(
            entry.path, "the hard link points to '\(target)', which is not a file earlier in the package",
            hint: "store a copy of the file instead"))
      }
    default: break
    }
    let special = entry.mode & 0o7000
    if special != 0 {
      var bits: [String] = []
      if special & 0o4000 != 0 { bits.append("setuid") }
      if special & 0o2000 != 0 { bits.append("setgid") }
      if special & 0o1000 != 0 { bits.append("sticky") }
      findings.append(
        finding(
          entry.path, "the entry has the \(bits.joined(separator: " and ")) bit (mode \(String(entry.mode, radix: 8)))",
          hint: "clear it with chmod (pkgtool build normalizes modes)"))
    }
  }
}
