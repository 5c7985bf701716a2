import Foundation
import HostedContent

/// A package named by URL: fetched into a private temporary file first, never into place. With
/// a catalog the download stops as soon as it passes the size the catalog gives for that URL.
///
/// http(s) goes through the `curl` command, not Foundation's URLSession: linking
/// FoundationNetworking loads libcurl and some thirty libraries behind it into every run, about
/// 9 MiB of memory before the first byte of a package is read, and it keeps the Swift runtime
/// from being linked statically on Linux (docs/performance.md). Only `unpack` and `install` of a
/// URL need it.
final class DownloadedPackage {
  /// The local path to read.
  let path: String
  private let temporaryFolder: String?

  /// `location` is a local path, a `file://` URL, or an `http(s)://` URL.
  init(_ location: String, catalog: Catalog?) throws {
    let lower = location.lowercased()
    if lower.hasPrefix("file://") {
      guard let url = URL(string: location), url.isFileURL else {
        throw OperationError("'\(location)' is not a file URL")
      }
      path = url.path
      temporaryFolder = nil
      return
    }
    guard lower.hasPrefix("https://") || lower.hasPrefix("http://") else {
      path = location
      temporaryFolder = nil
      return
    }
    guard let url = URL(string: location) else { throw OperationError("'\(location)' is not a URL") }
    let limit = catalog?.downloadLimit(forURL: location)
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("pkgtool-download-\(UUID().uuidString)")
      .path
    try FileManager.default.createDirectory(
      atPath: folder, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
    temporaryFolder = folder
    // A fixed name, never one from the URL; only the extension is kept (the package-form rule
    // reads it).
    let ext = url.pathExtension.lowercased() == "zip" ? "zip" : "pkg"
    path = folder + "/download." + ext
    try fetch(url, to: path, limit: limit.map { UInt64(clamping: $0) })
  }

  deinit {
    if let temporaryFolder { try? FileManager.default.removeItem(atPath: temporaryFolder) }
  }

  /// Runs `curl` with the body on a pipe, counted here: past `limit` curl is stopped, whatever the
  /// server said the length would be.
  private func fetch(_ url: URL, to path: String, limit: UInt64?) throws {
    let address = url.absoluteString
    guard FileManager.default.createFile(atPath: path, contents: nil, attributes: [.posixPermissions: 0o600]),
      let output = FileHandle(forWritingAtPath: path)
    else { throw OperationError("cannot download '\(address)': cannot create '\(path)'") }
    defer { try? output.close() }
    let curl = Process()
    curl.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    // No redirect to anything but http(s); the URL is passed as an option's value, never as
    // something curl could read as an option.
    curl.arguments = [
      "curl", "--fail", "--silent", "--show-error", "--location", "--max-redirs", "10", "--proto", "=http,https",
      "--proto-redir", "=http,https", "--url", address,
    ]
    let body = Pipe()
    let errors = Pipe()
    curl.standardOutput = body
    curl.standardError = errors
    curl.standardInput = FileHandle.nullDevice
    do { try curl.run() } catch {
      throw OperationError(
        "cannot download '\(address)': \(error.localizedDescription); downloading needs the curl command (or download the file yourself and pass its path)"
      )
    }
    var received: UInt64 = 0
    var failure: String?
    while let data = try body.fileHandleForReading.read(upToCount: 256 * 1024), !data.isEmpty {
      received += UInt64(data.count)
      if let limit, received > limit {
        failure = "it is larger than the \(limit) bytes the catalog gives"
        curl.terminate()
        break
      }
      try output.write(contentsOf: data)
    }
    try? body.fileHandleForReading.close()
    let message = (try? errors.fileHandleForReading.readToEnd()).flatMap { $0 }.map {
      String(decoding: $0, as: UTF8.self)
    }
    curl.waitUntilExit()
    if let failure { throw OperationError("cannot download '\(address)': \(failure)") }
    guard curl.terminationReason == .exit, curl.terminationStatus == 0 else {
      var reason = (message ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
      if curl.terminationStatus == 127 && curl.terminationReason == .exit {
        reason = "the curl command is not installed (install curl, or download the file yourself and pass its path)"
      } else if let range = reason.range(of: "The requested URL returned error: ") {
        reason = "the server answered HTTP " + reason[range.upperBound...].trimmingCharacters(in: .whitespaces)
      } else if reason.isEmpty {
        reason = "curl exited with status \(curl.terminationStatus)"
      }
      throw OperationError("cannot download '\(address)': \(reason)")
    }
  }
}
