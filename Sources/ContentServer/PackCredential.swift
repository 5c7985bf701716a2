import TextCoding

/// The credential of an asset-pack request: HTTP Basic (RFC 7617) with the user `storekit` and,
/// as the password, the StoreKit signed transaction the app's downloader extension read from its
/// App Group. Only its form is checked here; ``DownloadGate/prove(_:anyOf:now:)`` checks the
/// purchase.
enum PackCredential: Equatable {
  /// No `Authorization` header: answered with the challenge.
  case missing
  /// Not Basic, not Base64, no `storekit` user, or a password that is not a JWS: why.
  case malformed(String)
  /// The signed transaction.
  case transaction(String)

  /// The largest header read: a transaction with its chain is about 5 kB, 10 kB in Base64.
  static let maximumLength = 16 * 1024

  init(_ header: String?) {
    guard let header else {
      self = .missing
      return
    }
    guard header.utf8.count <= Self.maximumLength else {
      self = .malformed("the Authorization header is over \(Self.maximumLength) bytes")
      return
    }
    let parts = header.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
    guard parts.count == 2, parts[0].lowercased() == "basic" else {
      self = .malformed("the credential must be HTTP Basic: user storekit, password the signed transaction")
      return
    }
    guard let decoded = Base64.decode(String(parts[1]).trimmingSpaces),
      let text = String(validating: decoded, as: UTF8.self)
    else {
      self = .malformed("the Basic credential is not Base64 of user:password")
      return
    }
    guard let colon = text.firstIndex(of: ":"), text[..<colon] == "storekit" else {
      self = .malformed("the credential's user must be storekit")
      return
    }
    let password = String(text[text.index(after: colon)...])
    let segments = password.utf8.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
    guard segments.count == 3, segments.allSatisfy({ !$0.isEmpty && Base64.decodeURL($0) != nil }) else {
      self = .malformed(
        "the credential's password must be the StoreKit signed transaction (a JWS: three Base64URL parts)")
      return
    }
    self = .transaction(password)
  }
}

extension String {
  fileprivate var trimmingSpaces: String {
    String(self.drop { $0 == " " }.reversed().drop { $0 == " " }.reversed())
  }
}
