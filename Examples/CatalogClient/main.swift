// What an app does to get a package from `pkgtool serve`, with Foundation and swift-crypto only
// (no pkgtool library): check the catalog (Ed25519 over the RFC 8785 canonical JSON of `signed`,
// and the expiry), prove the purchase (POST /v1/downloads), download the signed URL with resume,
// and check the file's size and SHA-256 against the catalog before handing it over.
// Usage: catalog-client-example CATALOG KEY.pub                  (check it, list its versions)
//        catalog-client-example CATALOG KEY.pub GATE PRODUCT TRANSACTION-FILE OUTPUT
// CATALOG is a file or a URL. A download that is cut leaves OUTPUT.partial: run it again to resume.
import Crypto
import Foundation

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// RFC 8785 for the values a catalog holds: objects sorted by the UTF-16 code units of their
/// names, no whitespace, integers, strings with only `"`, `\` and control characters escaped.
func canonical(_ value: Any) throws -> String {
  switch value {
  case let object as [String: Any]:
    let names = object.keys.sorted { $0.utf16.lexicographicallyPrecedes($1.utf16) }
    return try "{" + names.map { try canonical($0) + ":" + canonical(object[$0]!) }.joined(separator: ",") + "}"
  case let array as [Any]:
    return try "[" + array.map(canonical).joined(separator: ",") + "]"
  case let text as String:
    var out = "\""
    for scalar in text.unicodeScalars {
      switch scalar {
      case "\"": out += "\\\""
      case "\\": out += "\\\\"
      case "\u{8}": out += "\\b"
      case "\u{C}": out += "\\f"
      case "\n": out += "\\n"
      case "\r": out += "\\r"
      case "\t": out += "\\t"
      case let c where c.value < 0x20: out += String(format: "\\u%04x", c.value)
      default: out.unicodeScalars.append(scalar)
      }
    }
    return out + "\""
  case let number as NSNumber:
    guard let integer = Int64(exactly: number.doubleValue), abs(integer) <= (1 << 53) - 1 else {
      throw ClientError("a number that is not a plain integer")
    }
    return String(integer)
  default:
    throw ClientError("a value a catalog does not hold")
  }
}

struct ClientError: Error, CustomStringConvertible {
  var description: String
  init(_ description: String) { self.description = description }
}

/// The bytes of a file, or of an https:// URL (http:// only on this machine), at most `limit`.
func load(_ location: String, limit: Int) async throws -> Data {
  guard let url = URL(string: location), url.scheme == "https" || url.scheme == "http" else {
    return try Data(contentsOf: URL(fileURLWithPath: location))
  }
  guard url.scheme == "https" || ["127.0.0.1", "localhost", "::1"].contains(url.host ?? "") else {
    throw ClientError("\(location): plain http only on this machine")
  }
  let (data, response) = try await URLSession.shared.data(from: url)
  guard let http = response as? HTTPURLResponse, http.statusCode == 200, response.url?.scheme == url.scheme else {
    throw ClientError("\(location): HTTP \((response as? HTTPURLResponse)?.statusCode ?? 0)")
  }
  guard data.count <= limit else { throw ClientError("\(location): larger than \(limit) bytes") }
  return data
}

func verify(catalog: Data, publicKeyAt keyPath: String) throws -> [String: Any] {
  // The public key: SubjectPublicKeyInfo PEM, whose last 32 bytes are the Ed25519 key.
  let pem = try String(contentsOfFile: keyPath, encoding: .utf8)
  let body = pem.split(separator: "\n").filter { !$0.hasPrefix("-----") }.joined()
  guard let der = Data(base64Encoded: body), der.count == 44 else { throw ClientError("not an Ed25519 public key") }
  let key = try Curve25519.Signing.PublicKey(rawRepresentation: der.suffix(32))
  let file = try JSONSerialization.jsonObject(with: catalog)
  guard let root = file as? [String: Any], let signed = root["signed"] as? [String: Any],
    let signatures = root["signatures"] as? [[String: Any]]
  else { throw ClientError("not a catalog") }
  let message = Data(try canonical(signed).utf8)
  let verified = signatures.contains { entry in
    guard let text = entry["signature"] as? String, let signature = Data(base64Encoded: text) else { return false }
    return key.isValidSignature(signature, for: message)
  }
  guard verified else { throw ClientError("no signature of this key verifies") }
  if let expires = signed["expires"] as? String {
    guard let date = ISO8601DateFormatter().date(from: expires) else { throw ClientError("a bad expiry") }
    guard date > Date() else { throw ClientError("the catalog expired at \(expires)") }
  }
  return signed
}

/// The catalog's newest version of `product`: the one to ask for, so no gate can hand over an older one.
func newest(_ product: String, in signed: [String: Any]) throws -> [String: Any] {
  let products = signed["products"] as? [[String: Any]] ?? []
  guard let entry = products.first(where: { $0["productIdentifier"] as? String == product }),
    let version = (entry["versions"] as? [[String: Any]])?.last
  else { throw ClientError("the catalog does not list \(product)") }
  return version
}

/// POST GATE/v1/downloads: the signed transaction proves the purchase; the answer is a signed URL.
func grant(_ gate: String, product: String, version: String, transaction: String) async throws -> [String: Any] {
  var request = URLRequest(url: URL(string: gate + "/v1/downloads")!)
  request.httpMethod = "POST"
  request.setValue("application/json", forHTTPHeaderField: "Content-Type")
  request.httpBody = try JSONSerialization.data(withJSONObject: [
    "productIdentifier": product, "signedTransaction": transaction, "contentVersion": version,
  ])
  let (data, response) = try await URLSession.shared.data(for: request)
  let answer = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] ?? [:]
  guard (response as? HTTPURLResponse)?.statusCode == 200 else {
    let status = (response as? HTTPURLResponse)?.statusCode ?? 0
    throw ClientError("the gate refused: HTTP \(status) \(answer["error"] ?? "") \(answer["detail"] ?? "")")
  }
  return answer
}

/// One GET of `url` into `partial`, resumed from the bytes already there: `Range` from their
/// count and `If-Range` with the ETag the first response gave (kept beside them). A 206 that
/// starts there is appended; a 200 (the file changed) starts over from the first byte.
final class Download: NSObject, URLSessionDataDelegate, @unchecked Sendable {
  let partial: String
  let size: Int
  var file: FileHandle?
  var failure: Error?
  let finished = DispatchSemaphore(value: 0)

  init(partial: String, size: Int) {
    self.partial = partial
    self.size = size
  }

  func run(_ url: URL) throws {
    let have = fileSize(partial)
    if have == size { return }  // all there from an earlier run: the caller checks it
    if have > size || !FileManager.default.fileExists(atPath: partial) {
      try Data().write(to: URL(fileURLWithPath: partial))
    }
    var request = URLRequest(url: url)
    if have > 0, let etag = try? String(contentsOfFile: partial + ".etag", encoding: .utf8), !etag.isEmpty {
      request.setValue("bytes=\(have)-", forHTTPHeaderField: "Range")
      request.setValue(etag, forHTTPHeaderField: "If-Range")
    }
    let session = URLSession(configuration: .ephemeral, delegate: self, delegateQueue: nil)
    session.dataTask(with: request).resume()
    finished.wait()
    session.finishTasksAndInvalidate()
    try file?.close()
    if let failure { throw failure }
  }

  func urlSession(
    _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
    completionHandler: @escaping (URLSession.ResponseDisposition) -> Void
  ) {
    let http = response as? HTTPURLResponse
    let range = http?.value(forHTTPHeaderField: "Content-Range") ?? ""
    let have = fileSize(partial)
    do {
      let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: partial))
      file = handle
      if http?.statusCode == 206 && range.hasPrefix("bytes \(have)-") {
        try handle.seekToEnd()
      } else if http?.statusCode == 200 {
        try handle.truncate(atOffset: 0)
        let etag = http?.value(forHTTPHeaderField: "ETag") ?? ""
        try etag.write(toFile: partial + ".etag", atomically: true, encoding: .utf8)
      } else {
        try? FileManager.default.removeItem(atPath: partial)
        throw ClientError("HTTP \(http?.statusCode ?? 0) \(range): starting over on the next run")
      }
      completionHandler(.allow)
    } catch {
      failure = error
      completionHandler(.cancel)
    }
  }

  func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
    guard let file, failure == nil else { return }
    do {
      guard try file.offset() + UInt64(data.count) <= UInt64(size) else {
        throw ClientError("more bytes than the catalog gives")
      }
      try file.write(contentsOf: data)
    } catch {
      failure = error
      dataTask.cancel()
    }
  }

  func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: Error?) {
    if failure == nil, let error {
      failure = ClientError("the download was cut (\(error.localizedDescription)): run again to resume")
    }
    finished.signal()
  }
}

/// The size of the file at `path`; 0 when there is none.
func fileSize(_ path: String) -> Int {
  ((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? NSNumber)?.intValue ?? 0
}

/// The SHA-256 of a file, as lowercase hex, read 1 MiB at a time.
func sha256(of path: String) throws -> String {
  let handle = try FileHandle(forReadingFrom: URL(fileURLWithPath: path))
  defer { try? handle.close() }
  var hash = SHA256()
  while let chunk = try handle.read(upToCount: 1 << 20), !chunk.isEmpty { hash.update(data: chunk) }
  return hash.finalize().map { String(format: "%02x", $0) }.joined()
}

/// Proves the purchase, downloads the newest version of `product` into OUTPUT.partial (resumed),
/// checks its size and SHA-256 against the catalog, and only then renames it to `output`.
func fetchPackage(
  _ signed: [String: Any], gate: String, product: String, transactionAt path: String, output: String
) async throws {
  let entry = try newest(product, in: signed)
  guard let version = entry["contentVersion"] as? String, let size = entry["size"] as? Int,
    let sha = entry["sha256"] as? String
  else { throw ClientError("a catalog entry without version, size or SHA-256") }
  let transaction = try String(contentsOfFile: path, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
  let answer = try await grant(gate, product: product, version: version, transaction: transaction)
  guard answer["size"] as? Int == size, answer["sha256"] as? String == sha, let text = answer["url"] as? String,
    let url = URL(string: text)
  else { throw ClientError("the gate's answer does not match the catalog's \(product) \(version)") }
  let partial = output + ".partial"
  try Download(partial: partial, size: size).run(url)
  guard fileSize(partial) == size, try sha256(of: partial) == sha else {
    try? FileManager.default.removeItem(atPath: partial)
    throw ClientError("the download is not the catalog's \(product) \(version) (size or SHA-256)")
  }
  try? FileManager.default.removeItem(atPath: partial + ".etag")
  try? FileManager.default.removeItem(atPath: output)
  try FileManager.default.moveItem(atPath: partial, toPath: output)
  print("\(output): \(product) \(version), \(size) bytes, SHA-256 as the catalog gives")
}

let arguments = CommandLine.arguments
guard arguments.count == 3 || arguments.count == 7 else {
  FileHandle.standardError.write(
    Data("usage: catalog-client-example CATALOG KEY.pub [GATE PRODUCT TRANSACTION-FILE OUTPUT]\n".utf8))
  exit(2)
}
do {
  let signed = try verify(catalog: try await load(arguments[1], limit: 64 << 20), publicKeyAt: arguments[2])
  if arguments.count == 7 {
    try await fetchPackage(
      signed, gate: arguments[3], product: arguments[4], transactionAt: arguments[5], output: arguments[6])
  } else {
    for product in signed["products"] as? [[String: Any]] ?? [] {
      for version in product["versions"] as? [[String: Any]] ?? [] {
        print(product["productIdentifier"] ?? "?", version["contentVersion"] ?? "?", version["url"] ?? "?")
      }
    }
  }
} catch {
  FileHandle.standardError.write(Data("catalog-client-example: \(error)\n".utf8))
  exit(1)
}
