/// The `ContentInfo.plist` at a package's root: the product it belongs to, its version, and any
/// other keys, which are kept as they are.
public struct ContentInfo: Equatable, Sendable {
  /// The file name at the package root.
  public static let fileName = "ContentInfo.plist"
  /// The plist key of the version.
  public static let versionKey = "ContentVersion"
  /// The plist key of the product identifier.
  public static let productKey = "IAPProductIdentifier"

  /// The In-App Purchase product identifier (`IAPProductIdentifier`).
  public var productIdentifier: String
  /// The content's version (`ContentVersion`).
  public var contentVersion: ContentVersion
  /// The whole dictionary, in its order, including the two keys above.
  public private(set) var properties: PropertyList
  /// The encoding it was read in (XML for new ones); ``encoded()`` keeps it.
  public var format: PropertyListFormat

  /// A new plist with just the two required keys.
  public init(productIdentifier: String, contentVersion: ContentVersion, format: PropertyListFormat = .xml) {
    self.productIdentifier = productIdentifier
    self.contentVersion = contentVersion
    self.format = format
    properties = .dictionary([
      (ContentInfo.versionKey, .string(contentVersion.description)),
      (ContentInfo.productKey, .string(productIdentifier)),
    ])
  }

  /// Reads a plist (XML or binary) and checks it. Throws ``ContentInfoError`` listing every
  /// problem found.
  public init(decoding bytes: [UInt8]) throws {
    let value: PropertyList
    do {
      (value, format) = try PropertyList.decode(bytes)
    } catch let error as PropertyListError {
      throw ContentInfoError.unreadable(error)
    }
    guard case .dictionary = value else {
      throw ContentInfoError.invalid(["the root of the plist is a \(value.typeName), not a dictionary"])
    }
    var problems: [String] = []
    var version: ContentVersion?
    var product: String?
    switch value[ContentInfo.versionKey] {
    case nil: problems.append("\(ContentInfo.versionKey) is missing")
    case .string(let text)?:
      if let problem = ContentVersion.problem(with: text) {
        problems.append("\(ContentInfo.versionKey): \(problem)")
      } else {
        version = ContentVersion(text)
      }
    case let other?: problems.append("\(ContentInfo.versionKey) is a \(other.typeName), not a string")
    }
    switch value[ContentInfo.productKey] {
    case nil: problems.append("\(ContentInfo.productKey) is missing")
    case .string(let text)?:
      if let problem = ProductIdentifier.problem(with: text) {
        problems.append("\(ContentInfo.productKey): \(problem)")
      } else {
        product = text
      }
    case let other?: problems.append("\(ContentInfo.productKey) is a \(other.typeName), not a string")
    }
    guard problems.isEmpty, let version, let product else { throw ContentInfoError.invalid(problems) }
    productIdentifier = product
    contentVersion = version
    properties = value
  }

  /// The plist's bytes in ``format``, with every key kept and the two known ones updated.
  public func encoded() -> [UInt8] {
    var dict = properties
    dict.set(ContentInfo.versionKey, .string(contentVersion.description))
    dict.set(ContentInfo.productKey, .string(productIdentifier))
    return dict.encoded(as: format)
  }
}

/// Why a `ContentInfo.plist` is not acceptable.
public enum ContentInfoError: Error, Equatable, CustomStringConvertible, Sendable {
  /// Not a property list at all.
  case unreadable(PropertyListError)
  /// A property list, but these keys are missing or wrong.
  case invalid([String])

  /// Each problem as a sentence.
  public var problems: [String] {
    switch self {
    case .unreadable(let error): return ["not a valid property list: \(error)"]
    case .invalid(let problems): return problems
    }
  }

  /// Every problem found, joined.
  public var description: String { problems.joined(separator: "; ") }
}
