// A client that checks a pkgtool catalog with Foundation and swift-crypto only (no pkgtool
// library): the signature (Ed25519 over the RFC 8785 canonical JSON of `signed`) and the expiry.
// Usage: catalog-client-example catalog.json signing.key.pub
import Crypto
import Foundation

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

func verify(catalogAt catalogPath: String, publicKeyAt keyPath: String) throws -> [String: Any] {
  // The public key: SubjectPublicKeyInfo PEM, whose last 32 bytes are the Ed25519 key.
  let pem = try String(contentsOfFile: keyPath, encoding: .utf8)
  let body = pem.split(separator: "\n").filter { !$0.hasPrefix("-----") }.joined()
  guard let der = Data(base64Encoded: body), der.count == 44 else { throw ClientError("not an Ed25519 public key") }
  let key = try Curve25519.Signing.PublicKey(rawRepresentation: der.suffix(32))
  let file = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: catalogPath)))
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

let arguments = CommandLine.arguments
guard arguments.count == 3 else {
  FileHandle.standardError.write(Data("usage: catalog-client-example CATALOG KEY.pub\n".utf8))
  exit(2)
}
do {
  let signed = try verify(catalogAt: arguments[1], publicKeyAt: arguments[2])
  for product in signed["products"] as? [[String: Any]] ?? [] {
    for version in product["versions"] as? [[String: Any]] ?? [] {
      print(product["productIdentifier"] ?? "?", version["contentVersion"] ?? "?", version["url"] ?? "?")
    }
  }
} catch {
  FileHandle.standardError.write(Data("catalog refused: \(error)\n".utf8))
  exit(1)
}
