import Foundation

/// The `Manifest.json` of a Background Assets asset-pack source folder, as Apple's `ba-package`
/// reads it: `assetPackID`, `downloadPolicy` (one of `essential`, `prefetch`, `onDemand`),
/// `fileSelectors` (relative `file` and `directory` paths) and `platforms`.
public struct AssetPackManifest: Equatable, Sendable {
  /// How the system downloads the pack.
  public enum Policy: String, CaseIterable, Sendable {
    /// During the app's installation; the app cannot open until it is done.
    case essential
    /// Starts with the installation, may go on after.
    case prefetch
    /// Only when the app asks.
    case onDemand
  }

  /// When an essential or prefetch policy applies.
  public enum InstallationEvent: String, CaseIterable, Sendable {
    /// At the app's first installation.
    case firstInstallation
    /// At each update of the app.
    case subsequentUpdate
  }

  /// What a manifest selects for the asset pack.
  public enum Selector: Equatable, Sendable {
    /// One file, by its path in the folder.
    case file(String)
    /// A folder and everything in it.
    case directory(String)

    /// The selected path, relative to the folder.
    public var path: String {
      switch self {
      case .file(let p), .directory(let p): return p
      }
    }
  }

  /// The manifest's file name in an asset-pack folder.
  public static let fileName = "Manifest.json"
  /// The platforms a manifest may name.
  public static let platforms = ["iOS", "macOS", "tvOS", "visionOS"]

  /// The asset pack's identifier (`assetPackID`).
  public var assetPackID: String
  /// When the system downloads the pack (`downloadPolicy`).
  public var policy: Policy
  /// Empty for `onDemand`.
  public var installationEvents: [InstallationEvent]
  /// What the pack holds (`fileSelectors`).
  public var fileSelectors: [Selector]
  /// The platforms the pack is for.
  public var platforms: [String]

  package init(
    assetPackID: String, policy: Policy, installationEvents: [InstallationEvent], fileSelectors: [Selector],
    platforms: [String]
  ) {
    self.assetPackID = assetPackID
    self.policy = policy
    self.installationEvents = policy == .onDemand ? [] : installationEvents
    self.fileSelectors = fileSelectors
    self.platforms = platforms
  }

  /// What is wrong with `id` as an asset-pack ID, or nil. pkgtool's reading, kept narrow: 1 to
  /// 64 ASCII letters, digits, `.`, `-` and `_`, starting with a letter or digit, no `..`.
  package static func problem(withAssetPackID id: String) -> String? {
    if id.isEmpty { return "the asset-pack ID is empty" }
    if id.utf8.count > 64 { return "the asset-pack ID is \(id.utf8.count) bytes; at most 64" }
    let allowed = id.utf8.allSatisfy { b in
      (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A) || b == UInt8(ascii: ".")
        || b == UInt8(ascii: "-") || b == UInt8(ascii: "_")
    }
    if !allowed {
      return "the asset-pack ID '\(id)' holds characters other than ASCII letters, digits, '.', '-' and '_'"
    }
    if let first = id.utf8.first, first == UInt8(ascii: ".") || first == UInt8(ascii: "-") || first == UInt8(ascii: "_")
    {
      return "the asset-pack ID '\(id)' must start with a letter or digit"
    }
    if id.contains("..") { return "the asset-pack ID '\(id)' holds '..'" }
    return nil
  }

  /// The manifest's JSON, keys sorted, indented.
  package var encoded: [UInt8] {
    var policyValue: [String: JSONValue] = [:]
    if policy != .onDemand {
      policyValue["installationEventTypes"] = .array(installationEvents.map { .string($0.rawValue) })
    }
    let value = JSONValue.object([
      "assetPackID": .string(assetPackID),
      "downloadPolicy": .object([policy.rawValue: .object(policyValue)]),
      "fileSelectors": .array(
        fileSelectors.map {
          switch $0 {
          case .file(let p): return .object(["file": .string(p)])
          case .directory(let p): return .object(["directory": .string(p)])
          }
        }),
      "platforms": .array(platforms.map { .string($0) }),
    ])
    return Array(JSONText.string(value).utf8) + [0x0A]
  }

  /// Parses manifest bytes; every problem found, or the manifest when there is none.
  package static func parse(_ bytes: [UInt8]) -> (
    manifest: AssetPackManifest?, problems: [String], unknownKeys: [String]
  ) {
    let value: JSONValue
    do { value = try JSONValue(parsing: bytes) } catch {
      return (nil, [describe(error, in: bytes)], [])
    }
    guard let root = value.objectValue else { return (nil, ["Manifest.json is not a JSON object"], []) }
    var problems: [String] = []
    let known: Set<String> = ["assetPackID", "downloadPolicy", "fileSelectors", "platforms"]
    let unknown = root.keys.filter { !known.contains($0) }.sorted()

    var id = ""
    if case .string(let text)? = root["assetPackID"] {
      id = text
      if let problem = problem(withAssetPackID: text) { problems.append(problem) }
    } else {
      problems.append("assetPackID is missing or not a string")
    }

    var policy = Policy.onDemand
    var events: [InstallationEvent] = []
    if let members = root["downloadPolicy"]?.objectValue, members.count == 1, let (key, body) = members.first {
      if let chosen = Policy(rawValue: key) {
        policy = chosen
        let fields = body.objectValue
        if fields == nil { problems.append("downloadPolicy.\(key) must be an object") }
        if chosen == .onDemand {
          if let fields, !fields.isEmpty { problems.append("downloadPolicy.onDemand must be an empty object") }
        } else if case .array(let items)? = fields?["installationEventTypes"], !items.isEmpty {
          events = distinctNames(
            items, in: "installationEventTypes", known: InstallationEvent.allCases.map(\.rawValue),
            knownAre: "the known events are", problems: &problems
          ).compactMap(InstallationEvent.init(rawValue:))
        } else if let found = fields?["installationEventTypes"] {
          problems.append(
            "downloadPolicy.\(key).installationEventTypes must be a non-empty array of event names, not \(describe(found))"
          )
        } else {
          problems.append("downloadPolicy.\(key) needs a non-empty installationEventTypes array")
        }
      } else {
        problems.append("downloadPolicy '\(key)' is none of essential, prefetch, onDemand")
      }
    } else {
      problems.append("downloadPolicy must be an object with exactly one of essential, prefetch, onDemand")
    }

    var selectors: [Selector] = []
    if case .array(let items)? = root["fileSelectors"], !items.isEmpty {
      for item in items {
        guard let fields = item.objectValue, fields.count == 1, let (key, path) = fields.first,
          case .string(let text) = path
        else {
          problems.append(
            "a file selector must be an object with one 'file' or 'directory' string, not \(describe(item))")
          continue
        }
        switch key {
        case "file": selectors.append(.file(text))
        case "directory": selectors.append(.directory(text))
        default: problems.append("a file selector's key is 'file' or 'directory', not '\(key)'")
        }
      }
    } else {
      problems.append(
        "fileSelectors must be a non-empty array\(root["fileSelectors"].map { ", not " + describe($0) } ?? "")")
    }

    var platforms: [String] = []
    if case .array(let items)? = root["platforms"], !items.isEmpty {
      platforms = distinctNames(
        items, in: "platforms", known: AssetPackManifest.platforms, knownAre: "the platforms are", problems: &problems)
    } else {
      problems.append("platforms must be a non-empty array\(root["platforms"].map { ", not " + describe($0) } ?? "")")
    }
    let manifest = AssetPackManifest(
      assetPackID: id, policy: policy, installationEvents: events, fileSelectors: selectors, platforms: platforms)
    return (problems.isEmpty ? manifest : nil, problems, unknown)
  }

  /// The strings of `items` that are among `known`, each once; a problem for every other item
  /// and every repeat.
  private static func distinctNames(
    _ items: [JSONValue], in field: String, known: [String], knownAre: String, problems: inout [String]
  ) -> [String] {
    var names: [String] = []
    for item in items {
      if case .string(let name) = item, known.contains(name) {
        if names.contains(name) {
          problems.append("\(field) lists '\(name)' twice")
        } else {
          names.append(name)
        }
      } else {
        problems.append("\(field) holds \(describe(item)); \(knownAre) \(known.joined(separator: ", "))")
      }
    }
    return names
  }

  /// Why `bytes` did not parse, as "Manifest.json line L, column C: what" for a syntax error
  /// (the offset the JSON parser reports, turned into a line and a column of characters), or
  /// naming the key path of a value pkgtool does not take (a number with a fraction).
  package static func describe(_ error: Error, in bytes: [UInt8]) -> String {
    // A name twice in one object (StrictJSON); numbers are described below, with their path.
    if let refusal = error as? StrictJSON.Refusal, refusal.isDuplicateName {
      return "Manifest.json: \(refusal.description)"
    }
    // The syntax first: where the parser stopped.
    let parsed: Any
    do {
      parsed = try JSONSerialization.jsonObject(with: Data(bytes), options: [.fragmentsAllowed])
    } catch {
      let text = ((error as NSError).userInfo[NSDebugDescriptionErrorKey] as? String) ?? "\(error)"
      let (line, column) = position(in: bytes, describedBy: text)
      let what: String
      if text.lowercased().contains("end of file") || text.lowercased().contains("unexpected end") {
        what = "the JSON ends too early (an object, array or string is not closed)"
      } else {
        what = "this is not valid JSON here (look for a missing comma, quote or brace just before)"
      }
      return "Manifest.json line \(line), column \(column): \(what)"
    }
    // Valid JSON that is not of the kinds taken: a number with a fraction, or too large.
    if let path = firstNonInteger(in: parsed, path: "") {
      return
        "Manifest.json: \(path.isEmpty ? "the value" : path) is a number that is not a whole 64-bit integer; a manifest holds strings, integers, arrays and objects"
    }
    return "Manifest.json is not JSON of the expected kind (objects, arrays, strings, integers)"
  }

  /// The key path (`downloadPolicy.essential.x`, `platforms[1]`) of the first number in `value`
  /// that is not a whole number in 64 bits, keys in sorted order.
  private static func firstNonInteger(in value: Any, path: String) -> String? {
    switch value {
    case let object as [String: Any]:
      for key in object.keys.sorted() {
        if let found = firstNonInteger(in: object[key]!, path: path.isEmpty ? key : path + "." + key) { return found }
      }
    case let array as [Any]:
      for (index, item) in array.enumerated() {
        if let found = firstNonInteger(in: item, path: path + "[\(index)]") { return found }
      }
    case is String, is NSNull, is Bool:
      return nil
    case let number as NSNumber:
      let double = number.doubleValue
      if double.rounded() != double || abs(double) >= 9.2e18 { return path }
    default:
      return nil
    }
    return nil
  }

  /// The 1-based line and column (in characters) that a parser's message points at: "line L,
  /// column C" as such, "character N" as a byte offset, the end of the bytes otherwise.
  static func position(in bytes: [UInt8], describedBy text: String) -> (line: Int, column: Int) {
    func number(after word: String) -> Int? {
      guard let range = text.range(of: word) else { return nil }
      return Int(text[range.upperBound...].prefix { $0.isNumber })
    }
    if let line = number(after: "line "), let column = number(after: "column ") { return (line, column) }
    let offset = min(number(after: "character ") ?? bytes.count, bytes.count)
    let before = bytes[..<offset]
    let line = before.filter { $0 == 0x0A }.count + 1
    let lineStart = (before.lastIndex(of: 0x0A) ?? -1) + 1
    // Characters, not bytes: UTF-8 continuation bytes do not start one.
    let column = bytes[lineStart..<offset].filter { $0 & 0xC0 != 0x80 }.count + 1
    return (line, column)
  }

  private static func describe(_ value: JSONValue) -> String {
    switch value {
    case .string(let s): return "'\(s)'"
    case .integer(let i): return "\(i)"
    case .bool(let b): return "\(b)"
    case .null: return "null"
    case .array: return "an array"
    case .object: return "an object"
    }
  }
}
