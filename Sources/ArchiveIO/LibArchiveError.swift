/// A libarchive failure: the call that failed, libarchive's error number and its message.
///
/// Reads as libarchive's message (with the archive or entry it concerned in front), such as
/// `'Contents/a.txt': Truncated input file (needed 1024 bytes, only 12 available)`.
package struct LibArchiveError: Error, CustomStringConvertible, Sendable {
  /// The libarchive function that failed, such as `archive_read_data` (empty when the error is
  /// pkgtool's own judgement of what libarchive returned).
  package var call: String
  /// `archive_errno` after the call (0 when libarchive set none).
  package var code: Int32
  /// libarchive's message, or pkgtool's.
  package var message: String

  package init(call: String = "", code: Int32 = 0, _ message: String) {
    self.call = call
    self.code = code
    // libarchive ends some messages with a newline; a finding is one line.
    var trimmed = Substring(message)
    while let last = trimmed.last, last.isWhitespace { trimmed = trimmed.dropLast() }
    self.message = String(trimmed)
  }

  package var description: String { message }

  /// The same error about `subject` (a file or entry): `'subject': message`.
  package func about(_ subject: String) -> LibArchiveError {
    LibArchiveError(call: call, code: code, "'\(subject)': \(message)")
  }
}
