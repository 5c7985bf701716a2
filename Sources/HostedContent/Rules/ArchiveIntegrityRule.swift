import AppleArchive
import ArchiveIO
import XAR

/// `archive-integrity`: the package must be a readable XAR, flat package or zip whose every
/// checksum and size agrees. Findings come from the sources and data streams as they read.
package final class ArchiveIntegrityRule: Rule {
  package static let description = RuleDescription(
    id: "archive-integrity", name: "Archive integrity", category: .archive,
    headline:
      "Not a readable XAR, flat package or zip: truncated, checksums or sizes wrong, bytes past the end, entries that disagree.",
    summary:
      "Not a XAR/flat package/zip, truncated, TOC or file checksum mismatch, declared size different from actual, heap not where the header says, bytes after the last one the TOC references (a zip or XAR appended: another reader would read that instead), data that inflates past its declared size; entries that contradict themselves (data on a folder, symlink or hard link; a file with a <link>), files sharing heap bytes, too many path bytes; a zip whose local headers and central directory disagree or leave room for hidden entries.",
    rationale:
      "A damaged package cannot be trusted to hold what its table of contents says; the client would fail to unpack it or, worse, unpack something else.",
    securitySeverity: 6.5,
    details: [
      "Its findings come from the readers (see `docs/format.md`), among them: XAR entries that contradict themselves (`<data>` on a folder, symlink or hard link, a `file` that also carries a `<link>`, which libarchive makes a symlink); data regions that overlap in the heap (a small file could declare many times its size); more path bytes than `--max-path-bytes` (64 MiB) across all entries; a zip whose local headers and central directory disagree on a name, method, flags, CRC or size (unzip extracts the central names, libarchive the local ones), whose entries overlap, leave room for an entry listed in neither view, or have bytes before the first entry.",
      "Real-world zips refused on purpose, each with its reason: names in a legacy code page (not UTF-8; with the UTF-8 flag, general-purpose bit 11, a name must be UTF-8, without it UTF-8 is still taken when the bytes are valid, as macOS writes), or holding a NUL byte, or whose Unicode Path field names another file; bytes before the first entry (self-extracting stubs, prepended data) or after the end record (padding, a comment longer than declared); split or spanned archives (disk numbers other than 0); encrypted entries; methods other than stored, deflate, bzip2, lzma, zstd, xz and ppmd (implode, shrink, reduce, deflate64); an entry whose trailing '/' and external attributes (Unix mode type, MS-DOS folder bit) disagree, or a folder that carries data; a data descriptor whose CRC or sizes differ from the central directory; bytes between entries; a stored entry with a data descriptor whose data holds a zip signature, where a streaming reader (bsdtar from a pipe, Java's ZipInputStream) would end it early and read the rest as entries of its own. A zip comment of any allowed length (up to 65,535 bytes) is read.",
      "An Apple Archive (`.aar`) entry that carries a hard-link, clone or identical-data cluster field (`HLC`, `CLC`, `SLC`) is refused, naming the entry: an asset pack carries no links (`export background-assets` writes them as copies), and a reader that honours the field makes the names share one file, or fills a name whose data is left out from another entry, where one that ignores it unpacks separate, possibly empty, files.",
      "When the input is not a package at all, this is the only rule that runs.",
    ],
    triggering: [
      RuleExample.package("truncated package").with {
        $0.damage = .truncate(keeping: 200)
        $0.appliesToFolders = false
      },
      RuleExample.package(
        "file checksum mismatch", adding: [.file("Contents/z.txt", String(repeating: "data ", count: 50))]
      ).with {
        $0.damage = .flipLastByte
        $0.appliesToFolders = false
      },
      RuleExample.package("not an archive").with {
        $0.damage = .replace(Array("just some text, not a package".utf8))
        $0.appliesToFolders = false
      },
    ],
    nonTriggering: [RuleExample.package("intact package")])

  package init(context: RuleContext) {}

  /// The hint for a file that was cut off (a download that did not finish).
  static let fetchAgain = "the download is incomplete: fetch it again"

  package func finish(_ summary: InspectionSummary, into findings: inout [Finding]) {
    // A cut-off package read anyway (`unpack --keep-going`): one finding for the cut; the
    // entries past it are listed as skipped, not reported one by one.
    guard let cut = summary.truncation else { return }
    let error = XARError.truncatedArchive(fileSize: cut.fileSize, describedSize: cut.describedSize, unrecoverable: nil)
    let count = summary.entriesPastTheCut
    findings.append(
      Finding(
        ruleID: Self.description.id, severity: .error, path: nil,
        message: error.description
          + "; \(count) \(count == 1 ? "entry lies" : "entries lie") past the cut and \(count == 1 ? "was" : "were") not read",
        hint: Self.fetchAgain))
  }

  /// Why an entry whose data lies past `cut` was not read.
  package static func pastTheCut(_ cut: Truncation) -> String {
    "its data lies past the end of the file (cut at byte \(cut.fileSize) of the \(cut.describedSize) its table of contents describes)"
  }

  /// The finding for a reading failure.
  package static func finding(for error: Error, path: String? = nil) -> Finding {
    let message: String
    var entryPath = path
    var hint = "the package is damaged or was not made by a package tool; build it again from its sources"
    switch error {
    case let notAPackage as UnreadablePackageSource.NotAPackage:
      if let cause = notAPackage.cause {
        var finding = self.finding(for: cause, path: path)
        finding.message = notAPackage.description
        return finding
      }
      message = notAPackage.description
      hint = "check that this is the package you meant; build it again if it is damaged"
    case let error as XARError:
      message = error.description
      switch error {
      case .tocTooLarge: hint = "if the package is genuine, raise the limit with --max-toc-size"
      case .tooManyEntries: hint = "if the package is genuine, raise the limit with --max-entries"
      case .tooManyPathBytes: hint = "if the package is genuine, raise the limit with --max-path-bytes"
      case .truncatedHeader, .truncatedTOC: hint = fetchAgain
      case .hiddenArchive:
        hint = "the package carries another archive where only a signature or an attribute belongs: build it again"
      case .bytesAfterHeap:
        hint =
          "something was appended to the package (cat, a download that was resumed wrongly): build it again, or fetch it again"
      case .truncatedArchive(_, _, let unrecoverable):
        hint =
          fetchAgain + (unrecoverable == nil ? "; unpack --keep-going writes the entries that lie before the cut" : "")
      case .overlappingData(let p, _):
        entryPath = entryPath ?? p
        hint = "each file must have heap bytes of its own; build the package again"
      case .expansionTooLarge(let p, _, _, _):
        entryPath = entryPath ?? p
        hint =
          "a decompression bomb, or a genuine file that compresses extremely well: raise the limit with --max-ratio"
      case .archivedChecksumMismatch(let p, _, _), .extractedChecksumMismatch(let p, _, _),
        .dataSizeMismatch(let p, _, _), .dataLongerThanDeclared(let p, _), .corruptData(let p, _),
        .truncatedHeap(let p), .storedLengthMismatch(let p, _, _), .dataOutOfHeap(let p, _, _, _),
        .unsupportedEncoding(let p, _):
        entryPath = entryPath ?? p
      default: break
      }
    case let libarchive as LibArchiveError where libarchive.message.lowercased().contains("truncated"):
      // A tar or zip that ends early (libarchive: "Truncated tar archive", "Truncated input file").
      message = "\(error)"
      hint = fetchAgain
    case let aar as AppleArchiveError:
      message = aar.description
      if let p = aar.path, !p.isEmpty { entryPath = entryPath ?? AppleArchiveError.printable(p) }
      switch aar.reason {
      case .truncatedFraming, .truncatedBlock, .truncatedHeader, .truncatedBlob: hint = fetchAgain
      case .ratioTooHigh:
        hint =
          "a decompression bomb, or a genuine block that compresses extremely well: raise the limit with --max-ratio"
      case .tooManyEntries: hint = "if the archive is genuine, raise the limit with --max-entries"
      case .linkedData:
        hint =
          "an asset pack carries no links: make each linked file a file of its own (pkgtool export background-assets copies them) and archive the folder again"
      case .unsupportedCompression:
        hint = "recompress the archive with LZFSE, zlib or LZMA (on a Mac: aa archive -a lzfse …)"
      default: hint = "the archive is damaged or was not made by an Apple Archive tool; make it again from its sources"
      }
    case let zip as ZipDirectory.Inconsistency where zip.cutOff:
      message = zip.description
      hint = fetchAgain
    default:
      message = "\(error)"
    }
    return Finding(
      ruleID: description.id, severity: .error, path: entryPath, message: message, hint: hint)
  }
}
