import Foundation

/// A fresh folder under the system's temporary folder, removed when the value goes away.
package final class TemporaryDirectory {
  package let path: String

  package init(_ label: String = "pkgtool-test") throws {
    var template = Array((NSTemporaryDirectory() + "/\(label).XXXXXX").utf8CString)
    guard let made = mkdtemp(&template) else { throw CocoaError(.fileWriteUnknown) }
    path = String(cString: made)
  }

  deinit { try? FileManager.default.removeItem(atPath: path) }

  /// `path/relative`.
  package func appending(_ relative: String) -> String { path + "/" + relative }
}

/// Writes `bytes` to `path`, creating parent folders.
package func writeFile(_ path: String, _ bytes: [UInt8], mode: Int = 0o644) throws {
  let parent = (path as NSString).deletingLastPathComponent
  try FileManager.default.createDirectory(atPath: parent, withIntermediateDirectories: true)
  try Data(bytes).write(to: URL(fileURLWithPath: path))
  chmod(path, mode_t(mode))
}

/// Writes `text` as UTF-8 to `path`, creating parent folders.
package func writeFile(_ path: String, _ text: String, mode: Int = 0o644) throws {
  try writeFile(path, Array(text.utf8), mode: mode)
}

/// The bytes of the file at `path`.
package func readFile(_ path: String) throws -> [UInt8] {
  Array(try Data(contentsOf: URL(fileURLWithPath: path)))
}
