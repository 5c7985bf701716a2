/// `no-executable`: no executable code, found by magic bytes whatever the name, and no execute
/// permission bits.
package final class NoExecutableRule: Rule {
  package static let description = RuleDescription(
    id: "no-executable", name: "No executable code", category: .content,
    headline: "Executable code (Mach-O, ELF, PE, a library, a #! script) or a file with an execute bit.",
    summary:
      "Mach-O (thin and fat, both byte orders), ELF, PE, static libraries, #! scripts, any file with an execute bit; found by magic bytes, whatever the file's name.",
    rationale:
      "Hosted content may not contain executable code (App Review Guideline 2.5.2); a renamed binary is still a binary.",
    securitySeverity: 7.5,
    details: [
      "Looks at the first bytes of every file whatever its name: Mach-O `FEEDFACE`/`FEEDFACF` in both byte orders, universal `CAFEBABE` with a small architecture count (a Java class file has its version, 45 or more, there) and `CAFEBABF`, ELF `7F 45 4C 46`, PE (`MZ` whose `e_lfanew` points at `PE\\0\\0`), `!<arch>` static libraries and `#!` scripts; and any execute permission bit.",
      "In a Background Assets asset-pack folder the rule follows Apple's \"Creating managed asset packs\": an asset pack may include CPU and GPU executables, but not macOS executables. There it reports only Mach-O code that may run on macOS: code whose LC_BUILD_VERSION or LC_VERSION_MIN load commands name macOS, Mac Catalyst, DriverKit or a simulator, or name no platform at all (every slice of a universal binary is checked). Packages keep the whole rule. Apple's wording was checked again for this release (developer.apple.com/documentation/backgroundassets/creating-managed-asset-packs, \"Identify asset packs and choose download policies\": \"You can also include CPU and GPU executables in an asset pack, but not macOS executables\") and is unchanged, so the rule is too.",
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

  /// The folder is a Background Assets asset pack, where Apple allows CPU and GPU executables
  /// but not macOS executables ("Creating managed asset packs").
  private let assetPack: Bool

  package init(context: RuleContext) { assetPack = context.isAssetPack }

  package func inspect(_ inspected: InspectedEntry, into findings: inout [Finding]) {
    let entry = inspected.entry
    guard entry.kind == .file else { return }
    if assetPack {
      // Apple: "You can also include CPU and GPU executables in an asset pack, but not macOS
      // executables." So only Mach-O code that may run on macOS is refused here.
      if let kind = FileSignature.executableKind(inspected.head), kind.contains("Mach-O"),
        NoExecutableRule.mayRunOnMacOS(inspected.head)
      {
        findings.append(
          finding(
            entry.path,
            "the file is \(kind) built for macOS (or for no platform its load commands name); an asset pack may hold CPU and GPU executables, but not macOS executables",
            hint: "leave macOS code out of the asset pack; ship it in the app"))
      }
      return
    }
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

  /// True unless the Mach-O code in `head` (thin, or every slice of a universal binary) names
  /// only device platforms (iOS, tvOS, watchOS, bridgeOS, visionOS) in its LC_BUILD_VERSION or
  /// LC_VERSION_MIN_* load commands. macOS, Mac Catalyst, DriverKit and the simulators run on
  /// macOS; code whose platform cannot be read from the bytes at hand counts as macOS code.
  static func mayRunOnMacOS(_ head: ArraySlice<UInt8>) -> Bool {
    let bytes = Array(head)
    func u32(_ at: Int, big: Bool) -> UInt32? {
      guard at >= 0, at + 4 <= bytes.count else { return nil }
      let b = bytes[at..<(at + 4)].map(UInt32.init)
      return big ? b[0] << 24 | b[1] << 16 | b[2] << 8 | b[3] : b[3] << 24 | b[2] << 16 | b[1] << 8 | b[0]
    }
    /// nil: unknown; true: some command names a platform that runs on macOS.
    func thin(at start: Int) -> Bool? {
      guard let magic = u32(start, big: true) else { return nil }
      let big: Bool
      let headerSize: Int
      switch magic {
      case 0xFEED_FACE: (big, headerSize) = (true, 28)
      case 0xFEED_FACF: (big, headerSize) = (true, 32)
      case 0xCEFA_EDFE: (big, headerSize) = (false, 28)
      case 0xCFFA_EDFE: (big, headerSize) = (false, 32)
      default: return nil
      }
      guard let count = u32(start + 16, big: big) else { return nil }
      var at = start + headerSize
      var sawDevice = false
      for _ in 0..<min(Int(count), 4096) {
        guard let command = u32(at, big: big), let size = u32(at + 4, big: big), size >= 8 else { return nil }
        switch command {
        case 0x32:  // LC_BUILD_VERSION
          guard let platform = u32(at + 8, big: big) else { return nil }
          if [2, 3, 4, 5, 11].contains(platform) { sawDevice = true } else { return true }
        case 0x24: return true  // LC_VERSION_MIN_MACOSX
        case 0x25, 0x2F, 0x30: sawDevice = true  // iPhoneOS, tvOS, watchOS
        default: break
        }
        at += Int(size)
      }
      return sawDevice ? false : nil
    }
    guard let magic = u32(0, big: true) else { return true }
    if magic == 0xCAFE_BABE || magic == 0xCAFE_BABF || magic == 0xBEBA_FECA {
      let big = magic != 0xBEBA_FECA
      let wide = magic == 0xCAFE_BABF
      guard let count = u32(4, big: big), count > 0 else { return true }
      for index in 0..<Int(min(count, 64)) {
        let record = 8 + index * (wide ? 32 : 20)
        let offset: Int?
        if wide {
          guard u32(record + 8, big: big) == 0 else { return true }  // past 4 GiB: not in the head
          offset = u32(record + 12, big: big).map(Int.init)
        } else {
          offset = u32(record + 8, big: big).map(Int.init)
        }
        guard let offset, thin(at: offset) == false else { return true }
      }
      return false
    }
    return thin(at: 0) != false
  }
}
