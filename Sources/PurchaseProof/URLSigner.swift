import Crypto
import Foundation
import HostedContent
import SystemIO
import TextCoding

/// Signs and checks download URLs that expire: `PATH?expires=SECONDS&signature=HEX`, where the
/// signature is HMAC-SHA256, keyed by a shared secret, over `PATH`, a newline and `SECONDS`
/// (Unix time, decimal). Stateless: every server with the same key gives the same answer, so any
/// number of them can stand behind a load balancer, and a CDN can be given the URLs.
///
/// `PATH` is the URL's path exactly as sent (percent-encoded, no query), such as
/// `/packages/book-1.0.pkg`; a prefix that a CDN or proxy adds in front is not part of it.
public struct URLSigner: Sendable {
  /// The fewest key bytes accepted: the HMAC's own output size.
  public static let minimumKeyLength = 32
  /// The key's bytes (swift-crypto's SymmetricKey is not Sendable; one is made per use).
  private let keyBytes: [UInt8]
  private var key: SymmetricKey { SymmetricKey(data: keyBytes) }

  /// A signer keyed by `key` (at least ``minimumKeyLength`` bytes).
  public init(key: [UInt8]) throws {
    guard key.count >= Self.minimumKeyLength else {
      throw OperationError(
        "the URL key is \(key.count) bytes; it must be at least \(Self.minimumKeyLength)",
        hint: "make one with: \(URLSigner.makeKey)")
    }
    keyBytes = key
  }

  /// A signer with a random key: its URLs hold only in this process.
  public static func random() -> URLSigner {
    // swift-format-ignore: NeverForceUnwrap
    try! URLSigner(key: SymmetricKey(size: .bits256).withUnsafeBytes { Array($0) })
  }

  /// The command that makes a key file only its owner can read.
  public static let makeKey = "(umask 077; head -c 32 /dev/urandom > url.key)"

  /// A signer keyed by the whole content of the file at `path` (every byte, newline included, so
  /// the same file gives the same key on every machine).
  ///
  /// As ssh asks of its keys, the file must be a regular file that only its owner can read or
  /// write (mode 0600 or 0400): one that its group or others can read or write is refused, so
  /// a key that anyone on the machine could copy (or change) is not used. A symlink is followed
  /// (as ssh does, and as container secrets are mounted); the file it leads to is the one
  /// checked, on the descriptor that is read, so nothing can be swapped in between.
  public static func load(contentsOf path: String) throws -> URLSigner {
    let bytes: [UInt8]
    do {
      let file = try FileDescriptor.open(regularFile: path)
      var info = stat()
      guard fstat(file.rawValue, &info) == 0 else { throw SystemError("inspect", path: path) }
      let mode = info.st_mode & 0o7777
      guard mode & 0o077 == 0 else {
        let octal = String(mode, radix: 8)
        throw OperationError(
          "the URL key '\(path)' has mode \(String(repeating: "0", count: max(0, 4 - octal.count)) + octal): its group or others can \(mode & 0o044 != 0 ? "read" : "write") it, and only its owner may",
          hint: "chmod 600 \(path)")
      }
      let size = try file.size()
      guard size <= 4096 else {
        throw OperationError(
          "the URL key '\(path)' is \(size) bytes; a key is 32 to 4096 bytes",
          hint: "make one with: \(URLSigner.makeKey)")
      }
      bytes = try file.read(count: Int(size), at: 0)
    } catch let error as OperationError {
      throw error
    } catch {
      throw OperationError(
        "cannot read the URL key '\(path)': \(error)", hint: "make one with: \(URLSigner.makeKey)")
    }
    do { return try URLSigner(key: bytes) } catch let error as OperationError {
      throw OperationError("the URL key '\(path)': \(error.message)", hint: error.hint)
    }
  }

  /// The signature of `path` until `expires` (Unix seconds), in lower-case hex.
  public func signature(path: String, expires: Int64) -> String {
    let mac = HMAC<SHA256>.authenticationCode(for: Array(Self.message(path: path, expires: expires)), using: key)
    return hexString(mac)
  }

  /// The query that makes `path` downloadable until `expires`: `expires=…&signature=…`.
  public func query(path: String, expires: Int64) -> String {
    "expires=\(expires)&signature=\(signature(path: path, expires: expires))"
  }

  /// What ``check(path:expires:signature:now:)`` found.
  public enum Check: Equatable, Sendable {
    /// The signature is this key's and the time has not passed.
    case valid
    /// `expires` or `signature` missing or not well formed.
    case malformed
    /// The signature is not this key's over this path and expiry.
    case badSignature
    /// The signature is right but the time has passed.
    case expired
  }

  /// Checks the `expires` and `signature` query values of a request for `path`. The signature is
  /// compared in constant time (swift-crypto's HMAC check).
  public func check(path: String, expires: String?, signature: String?, now: Date = Date()) -> Check {
    guard let expires, let signature, let seconds = Int64(expires), seconds >= 0, expires == String(seconds),
      let mac = Self.hex(signature), mac.count == SHA256.byteCount
    else { return .malformed }
    guard
      HMAC<SHA256>.isValidAuthenticationCode(
        mac, authenticating: Array(Self.message(path: path, expires: seconds)), using: key)
    else { return .badSignature }
    return Double(seconds) > now.timeIntervalSince1970 ? .valid : .expired
  }

  private static func message(path: String, expires: Int64) -> String.UTF8View {
    "\(path)\n\(expires)".utf8
  }

  /// The signature's bytes: lower-case hex only, as ``signature(path:expires:)`` writes it (one
  /// spelling of a URL, for caches and logs alike).
  private static func hex(_ text: String) -> [UInt8]? { Hex.bytes(text, lowerCaseOnly: true) }

}
