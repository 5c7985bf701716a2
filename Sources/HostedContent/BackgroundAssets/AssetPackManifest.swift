import Foundation

/// The `Manifest.json` of a Background Assets asset-pack source folder, as Apple's `ba-package`
/// reads it: `assetPackID`, `downloadPolicy` (one of `essential`, `prefetch`, `onDemand`),
/// `fileSelectors` and `platforms`, in either of two forms:
///
/// - 1.x: selectors are `{"file": p}` and `{"directory": p}`, relative to the folder `ba-package`
///   runs in;
/// - 2.x: a top-level `sourceRoot` (the folder the selectors are relative to), an optional
///   `language`, and selectors `{"fileSource": p, "fileDestination": q}` that copy the file or
///   folder `p` under `sourceRoot` to `q` inside the pack.
///
/// Both are read; ``form`` says which one a manifest uses. A manifest mixing the two is refused.
public struct AssetPackManifest: Equatable, Sendable {
  /// Which form of the manifest (see the type's documentation).
  public enum Form: Int, CaseIterable, Sendable {
    /// `file`/`directory` selectors.
    case v1 = 1
    /// `sourceRoot`, `fileSource`/`fileDestination` selectors.
    case v2 = 2
  }

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
    /// (2.x) A file or folder at `source` under `sourceRoot`, copied to `destination` in the pack.
    case copy(source: String, destination: String)

    /// The selected path, relative to the folder (for 2.x, to `sourceRoot`).
    public var path: String {
      switch self {
      case .file(let p), .directory(let p): return p
      case .copy(let source, _): return source
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
  /// Which form the manifest is written in.
  public var form: Form
  /// (2.x) The folder the selectors are relative to, relative to the manifest's folder.
  public var sourceRoot: String?
  /// The pack's language (a BCP-47 language, optionally with script and region), if any.
  public var language: String?

  package init(
    assetPackID: String, policy: Policy, installationEvents: [InstallationEvent], fileSelectors: [Selector],
    platforms: [String], form: Form = .v1, sourceRoot: String? = nil, language: String? = nil
  ) {
    self.assetPackID = assetPackID
    self.policy = policy
    self.installationEvents = policy == .onDemand ? [] : installationEvents
    self.fileSelectors = fileSelectors
    self.platforms = platforms
    self.form = form
    self.sourceRoot = sourceRoot
    self.language = language
  }

  /// The longest asset-pack ID pkgtool accepts, in bytes.
  public static let maxAssetPackIDLength = 64

  /// What is wrong with `id` as an asset-pack ID, or nil: 1 to 64 ASCII letters, digits, `-` and
  /// `_`, starting with a letter or digit. App Store Connect refuses a dot in an asset-pack ID
  /// (the rule `asset-pack-manifest` documents the sources).
  package static func problem(withAssetPackID id: String) -> String? {
    if id.isEmpty { return "the asset-pack ID is empty" }
    if id.utf8.count > maxAssetPackIDLength {
      return "the asset-pack ID is \(id.utf8.count) bytes; at most \(maxAssetPackIDLength)"
    }
    if id.contains(".") {
      return
        "the asset-pack ID '\(id)' holds a '.'; App Store Connect refuses dots in an asset-pack ID (use '-' or '_', for example '\(suggestedAssetPackID(from: id))')"
    }
    let allowed = id.utf8.allSatisfy { b in
      (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A) || b == UInt8(ascii: "-")
        || b == UInt8(ascii: "_")
    }
    if !allowed {
      return "the asset-pack ID '\(id)' holds characters other than ASCII letters, digits, '-' and '_'"
    }
    if let first = id.utf8.first, first == UInt8(ascii: "-") || first == UInt8(ascii: "_") {
      return "the asset-pack ID '\(id)' must start with a letter or digit"
    }
    return nil
  }

  /// The asset-pack ID `export background-assets` derives from a product identifier: each `.`
  /// becomes `-` (`com.example.book` → `com-example-book`).
  public static func suggestedAssetPackID(from productIdentifier: String) -> String {
    productIdentifier.replacingOccurrences(of: ".", with: "-")
  }

  /// What is wrong with `tag` as the manifest's `language`, or nil: a BCP-47 language tag of a
  /// language (2 or 3 letters), an optional script (4 letters) and an optional region (2 letters
  /// or 3 digits); Background Assets takes no variants or extensions.
  package static func problem(withLanguage tag: String) -> String? {
    let parts = tag.split(separator: "-", omittingEmptySubsequences: false)
    func letters(_ s: Substring, _ counts: ClosedRange<Int>) -> Bool {
      counts.contains(s.utf8.count) && s.utf8.allSatisfy { ($0 | 0x20) >= 0x61 && ($0 | 0x20) <= 0x7A }
    }
    func digits(_ s: Substring) -> Bool { s.utf8.count == 3 && s.utf8.allSatisfy { $0 >= 0x30 && $0 <= 0x39 } }
    guard let first = parts.first, letters(first, 2...3) else {
      return "language '\(tag)' does not start with an ISO 639 language code (2 or 3 letters)"
    }
    var index = 1
    if index < parts.count, letters(parts[index], 4...4) { index += 1 }
    if index < parts.count, letters(parts[index], 2...2) || digits(parts[index]) { index += 1 }
    if index < parts.count {
      return
        "language '\(tag)' has '\(parts[index])' after the language, script and region; Background Assets takes only those (no variants or extensions)"
    }
    return nil
  }

  /// The manifest's JSON, keys sorted, indented.
  package var encoded: [UInt8] {
    var policyValue: [String: JSONValue] = [:]
    if policy != .onDemand {
      policyValue["installationEventTypes"] = .array(installationEvents.map { .string($0.rawValue) })
    }
    var members: [String: JSONValue] = [
      "assetPackID": .string(assetPackID),
      "downloadPolicy": .object([policy.rawValue: .object(policyValue)]),
      "fileSelectors": .array(
        fileSelectors.map {
          switch $0 {
          case .file(let p): return .object(["file": .string(p)])
          case .directory(let p): return .object(["directory": .string(p)])
          case .copy(let source, let destination):
            return .object(["fileSource": .string(source), "fileDestination": .string(destination)])
          }
        }),
      "platforms": .array(platforms.map { .string($0) }),
    ]
    if let sourceRoot { members["sourceRoot"] = .string(sourceRoot) }
    if let language { members["language"] = .string(language) }
    return Array(JSONText.string(JSONValue.object(members)).utf8) + [0x0A]
  }

  /// The `assetPackID` string a manifest's bytes declare, whatever else is wrong with them (for
  /// the headers of `info` and `diff`); nil when there is none.
  package static func declaredID(in bytes: [UInt8]) -> String? {
    guard case .string(let id)? = (try? JSONValue(parsing: bytes))?.objectValue?["assetPackID"] else { return nil }
    return id
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
    let known: Set<String> = [
      "assetPackID", "downloadPolicy", "fileSelectors", "platforms", "sourceRoot", "language",
    ]
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
    var forms: Set<Form> = []
    if case .array(let items)? = root["fileSelectors"], !items.isEmpty {
      for item in items {
        guard let fields = item.objectValue else {
          problems.append(
            "a file selector must be an object ({\"file\": …}, {\"directory\": …}, or {\"fileSource\": …, \"fileDestination\": …}), not \(describe(item))"
          )
          continue
        }
        if fields["fileSource"] != nil || fields["fileDestination"] != nil {
          forms.insert(.v2)
          guard fields.count == 2, case .string(let source)? = fields["fileSource"],
            case .string(let destination)? = fields["fileDestination"]
          else {
            problems.append(
              "a 2.x file selector has exactly a 'fileSource' and a 'fileDestination' string, not \(describeKeys(fields))"
            )
            continue
          }
          selectors.append(.copy(source: source, destination: destination))
          continue
        }
        guard fields.count == 1, let (key, path) = fields.first, case .string(let text) = path else {
          problems.append(
            "a file selector must be an object with one 'file' or 'directory' string (1.x) or a 'fileSource' and a 'fileDestination' (2.x), not \(describeKeys(fields))"
          )
          continue
        }
        switch key {
        case "file":
          forms.insert(.v1)
          selectors.append(.file(text))
        case "directory":
          forms.insert(.v1)
          selectors.append(.directory(text))
        default:
          problems.append(
            "a file selector's key is 'file' or 'directory' (or 'fileSource' with 'fileDestination'), not '\(key)'")
        }
      }
    } else {
      problems.append(
        "fileSelectors must be a non-empty array\(root["fileSelectors"].map { ", not " + describe($0) } ?? "")")
    }

    // The form: 2.x when its selectors or its sourceRoot appear; never both forms at once.
    var sourceRoot: String?
    if let value = root["sourceRoot"] {
      if case .string(let text) = value {
        sourceRoot = text
      } else {
        problems.append("sourceRoot must be a string (a folder relative to Manifest.json), not \(describe(value))")
      }
    }
    if forms.count > 1 {
      problems.append(
        "fileSelectors mixes the 1.x form ('file', 'directory') with the 2.x form ('fileSource', 'fileDestination'); use one form"
      )
    } else if forms == [.v1], root["sourceRoot"] != nil {
      problems.append(
        "sourceRoot belongs to the 2.x form, but the selectors are 1.x ('file', 'directory'); use 'fileSource' and 'fileDestination', or drop sourceRoot"
      )
    } else if forms == [.v2], root["sourceRoot"] == nil {
      problems.append(
        "a manifest with 'fileSource'/'fileDestination' selectors (2.x) needs a sourceRoot, the folder they are relative to (\".\" for the manifest's folder)"
      )
    }
    let form: Form = forms.contains(.v2) || (forms.isEmpty && root["sourceRoot"] != nil) ? .v2 : .v1

    var language: String?
    if let value = root["language"] {
      if case .string(let text) = value {
        language = text
        if let problem = problem(withLanguage: text) { problems.append(problem) }
      } else {
        problems.append("language must be a string (a BCP-47 tag such as 'ja' or 'zh-Hant'), not \(describe(value))")
      }
    }

    var platforms: [String] = []
    if case .array(let items)? = root["platforms"], !items.isEmpty {
      platforms = distinctNames(
        items, in: "platforms", known: AssetPackManifest.platforms, knownAre: "the platforms are", problems: &problems)
    } else {
      problems.append("platforms must be a non-empty array\(root["platforms"].map { ", not " + describe($0) } ?? "")")
    }
    let manifest = AssetPackManifest(
      assetPackID: id, policy: policy, installationEvents: events, fileSelectors: selectors, platforms: platforms,
      form: form, sourceRoot: sourceRoot, language: language)
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

  /// An object's keys, for a message: "an object with 'a', 'b'".
  private static func describeKeys(_ fields: [String: JSONValue]) -> String {
    fields.isEmpty
      ? "an empty object" : "an object with " + fields.keys.sorted().map { "'\($0)'" }.joined(separator: ", ")
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
