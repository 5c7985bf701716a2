/// A `ContentVersion`: one to three non-negative integers separated by periods (`1`, `1.0`,
/// `1.2.3`), compared numerically with missing components as zero (`1.0` == `1.0.0` < `1.10`).
public struct ContentVersion: Comparable, Hashable, Sendable, CustomStringConvertible, Codable {
  /// The numbers, most significant first; one to three of them.
  public let components: [UInt64]

  /// Parses `text`; nil if it is not one to three period-separated decimal integers.
  public init?(_ text: String) {
    let parts = text.split(separator: ".", omittingEmptySubsequences: false)
    guard (1...3).contains(parts.count) else { return nil }
    var components: [UInt64] = []
    for part in parts {
      guard !part.isEmpty, part.utf8.count <= 18, part.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }),
        let value = UInt64(part)
      else { return nil }
      components.append(value)
    }
    self.components = components
  }

  /// A version from its numbers (one to three).
  public init(components: [UInt64]) {
    precondition((1...3).contains(components.count), "a content version has one to three parts")
    self.components = components
  }

  /// Why `text` is not a valid version, in words; nil if it is one.
  public static func problem(with text: String) -> String? {
    if ContentVersion(text) != nil { return nil }
    return "'\(text)' is not a version: use one to three whole numbers separated by periods, such as 1.0 or 1.2.3"
  }

  /// The version as written in the plist, such as `1.2`.
  public var description: String { components.map(String.init).joined(separator: ".") }

  private func padded(_ n: Int) -> [UInt64] { components + Array(repeating: 0, count: n - components.count) }

  /// Compares part by part; a missing part counts as 0 (`1.2` < `1.10`, `1.0` == `1`).
  public static func < (a: ContentVersion, b: ContentVersion) -> Bool {
    a.padded(3).lexicographicallyPrecedes(b.padded(3))
  }

  /// Equal part by part, a missing part counting as 0.
  public static func == (a: ContentVersion, b: ContentVersion) -> Bool { a.padded(3) == b.padded(3) }

  /// Hashes the parts padded to three, consistent with `==`.
  public func hash(into hasher: inout Hasher) { hasher.combine(padded(3)) }

  /// Which part of a version to raise.
  public enum Part: String, CaseIterable, Sendable {
    /// The last part present: `1.0` → `1.1`, `1.2.3` → `1.2.4`.
    case last
    /// `1.4` → `2.0`, `1.4.2` → `2.0.0`.
    case major
    /// `1.4.2` → `1.5.0`, `3` → `3.1`.
    case minor
    /// `1.4` → `1.4.1`, `1.4.2` → `1.4.3`.
    case patch
  }

  /// The next version, raising `part` and zeroing the parts after it.
  public func bumped(_ part: Part = .last) -> ContentVersion {
    var c = components
    let index: Int
    switch part {
    case .last: index = c.count - 1
    case .major: index = 0
    case .minor: index = 1
    case .patch: index = 2
    }
    while c.count <= index { c.append(0) }
    c[index] += 1
    for i in (index + 1)..<max(index + 1, c.count) { c[i] = 0 }
    return ContentVersion(components: c)
  }

  /// Decodes a version from its string form.
  public init(from decoder: Decoder) throws {
    let text = try decoder.singleValueContainer().decode(String.self)
    guard let v = ContentVersion(text) else {
      throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "bad version \(text)"))
    }
    self = v
  }

  /// Encodes the version as its string form.
  public func encode(to encoder: Encoder) throws {
    var c = encoder.singleValueContainer()
    try c.encode(description)
  }
}

/// Product identifiers: reverse-DNS style labels (`com.example.book_1`) of letters, digits and
/// `_`, separated by single periods.
///
/// The identifier becomes a folder name when content is installed (`DOCS/<id>/<version>`), so
/// the check is strict: no empty label (which also rules out a leading or trailing period, `.`
/// and `..`), nothing but ASCII letters, digits, `_` and `.`, at most 255 bytes.
public enum ProductIdentifier {
  /// The longest identifier accepted, in bytes.
  public static let maxLength = 255

  /// Why `text` is not a valid product identifier, in words; nil if it is one.
  public static func problem(with text: String) -> String? {
    if text.isEmpty { return "the product identifier is empty" }
    if text.utf8.count > maxLength { return "the product identifier is longer than \(maxLength) characters" }
    for scalar in text.unicodeScalars {
      let ok =
        (scalar >= "a" && scalar <= "z") || (scalar >= "A" && scalar <= "Z")
        || (scalar >= "0" && scalar <= "9") || scalar == "." || scalar == "_"
      if !ok {
        return
          "'\(text)' is not a product identifier: use only letters, digits, '.' and '_' (found '\(scalar.escaped(asASCII: true))')"
      }
    }
    if text.split(separator: ".", omittingEmptySubsequences: false).contains(where: \.isEmpty) {
      return
        "'\(text)' is not a product identifier: it has an empty label (a leading, trailing or doubled '.'); use reverse-DNS labels such as com.example.book"
    }
    return nil
  }
}
