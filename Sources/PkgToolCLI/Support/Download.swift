import Foundation
import HostedContent

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// A package named by URL: fetched into a private temporary file first, never into place. With
/// a catalog the download stops as soon as it passes the size the catalog gives for that URL.
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

  private func fetch(_ url: URL, to path: String, limit: UInt64?) throws {
    let delegate = Receiver(path: path, limit: limit)
    let session = URLSession(configuration: .ephemeral, delegate: delegate, delegateQueue: nil)
    defer { session.invalidateAndCancel() }
    let task = session.dataTask(with: url)
    task.resume()
    delegate.done.wait()
    if let failure = delegate.failure { throw OperationError("cannot download '\(url.absoluteString)': \(failure)") }
  }

  /// Streams the body to a file; cancels past `limit`.
  private final class Receiver: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    let done = DispatchSemaphore(value: 0)
    var failure: String?
    private let handle: FileHandle?
    private let limit: UInt64?
    private var received: UInt64 = 0

    init(path: String, limit: UInt64?) {
      _ = FileManager.default.createFile(atPath: path, contents: nil, attributes: [.posixPermissions: 0o600])
      handle = FileHandle(forWritingAtPath: path)
      self.limit = limit
    }

    func urlSession(
      _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
      completionHandler: @escaping (URLSession.ResponseDisposition) -> Void
    ) {
      if let http = response as? HTTPURLResponse, !(200..<300).contains(http.statusCode) {
        failure = "the server answered HTTP \(http.statusCode)"
        completionHandler(.cancel)
        return
      }
      completionHandler(.allow)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
      received += UInt64(data.count)
      if let limit, received > limit {
        if failure == nil { failure = "it is larger than the \(limit) bytes the catalog gives" }
        dataTask.cancel()
        return
      }
      handle?.write(data)
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: Error?) {
      try? handle?.close()
      if failure == nil, let error { failure = error.localizedDescription }
      done.signal()
    }
  }
}
