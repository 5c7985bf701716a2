import Foundation
import HostedContent
import XAR

extension HostilePackage {
  /// Names that are one name on APFS (case folding, normalization) but two to a naive reader.
  ///
  /// APFS compares names after full case folding (CaseFolding.txt, C and F) and canonical
  /// decomposition; `String.lowercased()` is not case folding: `ſ` (U+017F), `µ` (U+00B5), `ς`
  /// and `ß` are already lower case, and `K` (U+212A) lowers to `k` but `ﬁ` stays one letter.
  static let round2Names: [HostilePackage] = {
    /// A link `Contents/d/NAME -> ..` (harmless: it is `Contents`) and a link `Contents/x` whose
    /// target walks through `SPELLING`, another spelling of NAME: on the device `d/SPELLING` is
    /// `Contents`, so `../../y` climbs out of the package; read as two names, it is `Contents/y`.
    func escape(_ what: String, _ name: String, _ spelling: String) -> HostilePackage {
      xar(
        "symlink escape through \(what)", "no-external-symlink",
        [
          .directory("Contents/d"), .symlink("Contents/d/\(name)", ".."), .file("Contents/y", "y"),
          .symlink("Contents/x", "d/\(spelling)/../../y"),
        ])
    }
    /// Two files whose names are one on the device.
    func collision(_ what: String, _ a: String, _ b: String) -> HostilePackage {
      xar("collision by \(what)", "duplicate-path", [.file("Contents/\(a)", "1"), .file("Contents/\(b)", "2")])
    }
    return [
      escape("long s (U+017F) and s", "\u{17F}", "s"),
      escape("Kelvin sign (U+212A) and k", "\u{212A}", "k"),
      escape("micro sign (U+00B5) and mu", "\u{B5}", "\u{3BC}"),
      escape("final sigma and capital sigma", "\u{3C2}", "\u{3A3}"),
      escape("sharp s and SS (full folding)", "stra\u{DF}e", "STRASSE"),
      escape("ligature fi and fi (full folding)", "\u{FB01}", "fi"),
      escape("long s with dot above and capital S with dot above (folding and normalization)", "\u{1E9B}", "\u{1E60}"),
      HostilePackage("symlink escape through long s, in tar", "no-external-symlink") {
        try ExamplePackages.writeTar(
          base + [
            .directory("Contents/d"), .symlink("Contents/d/\u{17F}", ".."), .file("Contents/y", "y"),
            .symlink("Contents/x", "d/s/../../y"),
          ], to: $0)
      },
      collision("long s and s", "\u{17F}.txt", "s.txt"),
      collision("micro sign and mu", "\u{B5}.txt", "\u{3BC}.txt"),
      collision("final and medial sigma", "\u{3C2}.txt", "\u{3C3}.txt"),
      collision("sharp s and SS (full folding)", "gro\u{DF}.txt", "GROSS.txt"),
      collision("capital sharp s and ss (full folding)", "\u{1E9E}.txt", "ss.txt"),
      collision("ligature ffi and ffi (full folding)", "o\u{FB03}ce.txt", "office.txt"),
      collision("Kelvin sign and K", "\u{212A}.txt", "K.txt"),
      collision("long s with dot above and capital S with dot above", "\u{1E9B}.txt", "\u{1E60}.txt"),
      xar(
        "file under a symlinked folder spelled with long s", "path-safety",
        [.directory("Contents/real"), .symlink("Contents/\u{17F}", "real"), .file("Contents/s/x.txt", "x")]),
      tar(
        "file under a symlinked folder spelled with the Kelvin sign, in tar", "path-safety",
        [.directory("Contents/real"), .symlink("Contents/\u{212A}", "real"), .file("Contents/k/x.txt", "x")]),
      xar(
        "file under a symlinked folder spelled with sharp s", "path-safety",
        [.directory("Contents/real"), .symlink("Contents/\u{DF}", "real"), .file("Contents/SS/x.txt", "x")]),
    ]
  }()
}
