/// `no-executable`: no executable code, found by magic bytes whatever the name, and no execute
/// permission bits.
package final class NoExecutableRule: Rule {
  package static let description = RuleDescription(
    id: "no-executable", name: "No executable code", category: .content,
    summary:
      "Mach-O (thin and fat, both byte orders), ELF, PE, static libraries, #! scripts, any file with an execute bit; found by magic bytes, whatever the file's name.",
    rationale:
      "Hosted content may not contain executable code (App Review Guideline 2.5.2); a renamed binary is still a binary.",
    securitySeverity: 7.5,
    details: [
      "Looks at the first bytes of every file whatever its name: Mach-O `FEEDFACE`/`FEEDFACF` in both byte orders, universal `CAFEBABE` with a small architecture count (a Java class file has its version, 45 or more, there) and `CAFEBABF`, ELF `7F 45 4C 46`, PE (`MZ` whose `e_lfanew` points at `PE\\0\\0`), `!<arch>` static libraries and `#!` scripts; and any execute permission bit."
    ],
    triggering: [
      RuleExample.package(
        "Mach-O 64 named .png",
        adding: [
          .file("Contents/cover.png", bytes: [0xCF, 0xFA, 0xED, 0xFE, 7, 0, 0, 1] + Array(repeating: 0, count: 24))
        ], expecting: "Contents/cover.png"),
      RuleExample.package(
        "fat binary",
        adding: [
          .file("Contents/lib.dat", bytes: [0xCA, 0xFE, 0xBA, 0xBE, 0, 0, 0, 2] + Array(repeating: 0, count: 40))
        ], expecting: "Contents/lib.dat"),
      RuleExample.package(
        "ELF", adding: [.file("Contents/a.bin", bytes: [0x7F, 0x45, 0x4C, 0x46, 2, 1, 1, 0])],
        expecting: "Contents/a.bin"),
      RuleExample.package(
        "PE", adding: [.file("Contents/setup.txt", bytes: peBytes())], expecting: "Contents/setup.txt"),
      RuleExample.package(
        "static library", adding: [.file("Contents/libx.a", "!<arch>\nfoo.o/ ")], expecting: "Contents/libx.a"),
      RuleExample.package(
        "shell script", adding: [.file("Contents/run.json", "#!/bin/sh\necho hi\n")], expecting: "Contents/run.json"),
      RuleExample.package(
        "execute bit", adding: [.file("Contents/data.txt", "plain text", mode: 0o755)], expecting: "Contents/data.txt"
      ).with { $0.appliesToFolders = false },
    ],
    nonTriggering: [
      RuleExample.package(
        "Java class file",
        adding: [
          .file("Contents/A.class", bytes: [0xCA, 0xFE, 0xBA, 0xBE, 0, 0, 0, 52] + Array(repeating: 0, count: 16))
        ]),
      RuleExample.package(
        "text that mentions MZ", adding: [.file("Contents/mz.txt", "MZ is not enough without a PE header")]),
      RuleExample.package(
        "PNG image", adding: [.file("Contents/cover.png", bytes: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])]),
    ])

  /// A minimal PE header: `MZ`, `e_lfanew` = 0x40, `PE\0\0`.
  static func peBytes() -> [UInt8] {
    var bytes = [UInt8](repeating: 0, count: 0x48)
    bytes[0] = 0x4D
    bytes[1] = 0x5A
    bytes[0x3C] = 0x40
    bytes[0x40] = 0x50
    bytes[0x41] = 0x45
    return bytes
  }

  package init(context: RuleContext) {}

  package func inspect(_ inspected: InspectedEntry, into findings: inout [Finding]) {
    let entry = inspected.entry
    guard entry.kind == .file else { return }
    if let kind = FileSignature.executableKind(inspected.head) {
      findings.append(
        finding(
          entry.path, "the file is \(kind)",
          hint: "remove executable code from the content; hosted content may only hold data"))
    } else if entry.mode & 0o111 != 0 {
      findings.append(
        finding(
          entry.path, "the file has an execute permission bit (mode \(String(entry.mode & 0o7777, radix: 8)))",
          hint: "chmod a-x it (pkgtool build clears execute bits)"))
    }
  }
}
