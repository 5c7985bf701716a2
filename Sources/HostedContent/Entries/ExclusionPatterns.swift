/// The patterns `build --exclude` and a project's `.pkgtoolignore` give: what a project leaves out
/// of its package, in gitignore syntax (git's `gitignore(5)`), matched as git does.
///
/// - `#` starts a comment line, blank lines are skipped, trailing spaces are dropped unless
///   escaped with a backslash (a CR before the line's end and a UTF-8 byte-order mark at the
///   file's start are dropped too, as git does);
/// - `!` negates: a path a later `!` pattern matches is kept again; the last pattern that
///   matches a path decides. A path inside a left-out folder is never seen, so it cannot be
///   kept again (git's rule);
/// - a trailing `/` matches folders only;
/// - a pattern with a `/` at its start or in its middle is anchored: it is matched against the
///   whole path from the project's root (the folder holding `.pkgtoolignore`); one without is
///   matched against the last name of every path, at any depth;
/// - `*` matches anything but `/`, `?` one character but `/`, `[...]` one character of a class
///   (`!` or `^` negates it, ranges, `[:alpha:]` and the other POSIX classes); `**/` at the start
///   matches in every folder, `/**` at the end everything inside, `/**/` zero or more folders;
///   any other `**` is a `*`; a backslash makes the next character literal.
///
/// Names are compared as they are stored: case-sensitively (git's default; `*.psd` does not match
/// `Art.PSD`), with no Unicode normalization. Where git compares bytes, `?` and a class match one
/// Unicode scalar here (so `?` matches `é`); for ASCII names the two agree.
package struct ExclusionPatterns: Sendable {
  /// The ignore file read at a project's root.
  package static let fileName = ".pkgtoolignore"
  /// The largest ignore file read.
  package static let maxFileSize = 1 << 20
  /// The longest pattern accepted, in Unicode scalars.
  package static let maxPatternLength = 4096

  /// One pattern as parsed.
  package struct Pattern: Sendable, Equatable {
    /// The line as written (trailing spaces dropped).
    package var text: String
    /// Where it comes from: `--exclude` or `.pkgtoolignore line N`.
    package var origin: String
    /// `!`: a path it matches is kept.
    package var negated: Bool
    /// A trailing `/`: matches folders only.
    package var directoryOnly: Bool
    /// Holds a `/` (other than a trailing one): matched against the whole path.
    package var anchored: Bool
    /// What is matched, leading `/`, `!` and trailing `/` removed.
    var body: [Unicode.Scalar]
  }

  /// A line that is not a usable pattern.
  package struct PatternError: Error, CustomStringConvertible {
    /// Where the pattern comes from.
    package var origin: String
    /// The pattern.
    package var text: String
    /// What is wrong.
    package var reason: String
    package var description: String { "\(origin): the pattern '\(text)' \(reason)" }
  }

  /// The patterns, in order: the last that matches a path decides.
  package private(set) var patterns: [Pattern] = []

  /// No patterns: nothing is excluded.
  package init() {}

  /// True when there is no pattern.
  package var isEmpty: Bool { patterns.isEmpty }

  /// Adds the lines of an ignore file (its bytes as read), `origin` naming it in messages.
  package mutating func add(fileBytes: [UInt8], origin: String) throws {
    var bytes = fileBytes[...]
    if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { bytes = bytes.dropFirst(3) }
    var number = 0
    for var line in bytes.split(separator: 0x0A, omittingEmptySubsequences: false) {
      number += 1
      if line.last == 0x0D { line = line.dropLast() }
      guard let text = String(validating: line, as: UTF8.self) else {
        throw PatternError(
          origin: "\(origin) line \(number)", text: String(decoding: line, as: UTF8.self), reason: "is not UTF-8")
      }
      try add(text, origin: "\(origin) line \(number)")
    }
  }

  /// Adds one line (a pattern, a comment or a blank line).
  package mutating func add(_ line: String, origin: String) throws {
    var scalars = Array(line.unicodeScalars)
    guard let first = scalars.first, first != "#" else { return }
    // Trailing spaces go, unless escaped: "a\ " keeps "\ " (a literal space).
    while scalars.last == " " {
      var backslashes = 0
      var i = scalars.count - 2
      while i >= 0 && scalars[i] == "\\" {
        backslashes += 1
        i -= 1
      }
      if backslashes % 2 == 1 { break }
      scalars.removeLast()
    }
    if scalars.isEmpty { return }
    let text = String(String.UnicodeScalarView(scalars))
    func refuse(_ reason: String) -> PatternError { PatternError(origin: origin, text: text, reason: reason) }
    guard scalars.count <= ExclusionPatterns.maxPatternLength else {
      throw refuse("is longer than \(ExclusionPatterns.maxPatternLength) characters")
    }
    var body = scalars[...]
    let negated = body.first == "!"
    if negated { body = body.dropFirst() }
    let directoryOnly = body.last == "/"
    if directoryOnly { body = body.dropLast() }
    let anchored = body.contains("/")
    if body.first == "/" { body = body.dropFirst() }
    guard !body.isEmpty else { throw refuse("matches nothing") }
    // A trailing lone backslash escapes nothing: git's matcher never matches such a pattern.
    var i = body.startIndex
    while i < body.endIndex {
      if body[i] == "\\" {
        guard i + 1 < body.endIndex else { throw refuse("ends in a backslash that escapes nothing") }
        i += 2
      } else {
        i += 1
      }
    }
    // Paths never hold '.' or '..' names: such a pattern would silently match nothing.
    let parts = body.split(separator: "/", omittingEmptySubsequences: false)
    if parts.contains(where: {
      $0.elementsEqual(["." as Unicode.Scalar, "."]) || $0.elementsEqual(["." as Unicode.Scalar])
    }) {
      throw refuse(
        "holds a '.' or '..' name; patterns match paths inside the project (relative to the folder holding .pkgtoolignore), so it would match nothing"
      )
    }
    patterns.append(
      Pattern(
        text: text, origin: origin, negated: negated, directoryOnly: directoryOnly, anchored: anchored,
        body: Array(body)))
  }

  /// The pattern that decides `path` (relative to the root, `/`-separated, as stored), or nil
  /// when none matches. A path is left out when the deciding pattern is not negated.
  package func decidingPattern(for path: String, isDirectory: Bool) -> Pattern? {
    guard !patterns.isEmpty else { return nil }
    let whole = Array(path.unicodeScalars)
    let nameStart = (whole.lastIndex(of: "/") ?? -1) + 1
    let name = whole[nameStart...]
    for pattern in patterns.reversed() {
      if pattern.directoryOnly && !isDirectory { continue }
      let matched =
        pattern.anchored
        ? Wildcard.matches(pattern.body, whole[...], pathname: true)
        : Wildcard.matches(pattern.body, name, pathname: true)
      if matched { return pattern }
    }
    return nil
  }

  /// True when the patterns leave `path` out.
  package func excludes(_ path: String, isDirectory: Bool) -> Bool {
    decidingPattern(for: path, isDirectory: isDirectory).map { !$0.negated } ?? false
  }
}

/// git's `wildmatch` semantics over Unicode scalars, with a table of (pattern, text) positions
/// already tried, so no pattern takes more than pattern length × text length steps.
enum Wildcard {
  static func matches(_ pattern: [Unicode.Scalar], _ text: ArraySlice<Unicode.Scalar>, pathname: Bool) -> Bool {
    var matcher = Matcher(pattern: pattern, text: text, pathname: pathname)
    return matcher.match(0, text.startIndex)
  }

  private struct Matcher {
    let pattern: [Unicode.Scalar]
    /// Indexed from its own start index (a slice of the whole path), ending at `text.endIndex`.
    let text: ArraySlice<Unicode.Scalar>
    let pathname: Bool
    /// 0 not tried, 1 match, 2 no match; indexed p * (text.count + 1) + (t - text.startIndex).
    /// Only a pattern with two or more runs of `*` can backtrack more than length × length
    /// steps, so only such a pattern gets the table.
    var tried: [UInt8]
    /// For ``rest(_:from:crossesSlash:)``: the same indexing, same values.
    var reached: [UInt8]

    init(pattern: [Unicode.Scalar], text: ArraySlice<Unicode.Scalar>, pathname: Bool) {
      self.pattern = pattern
      self.text = text
      self.pathname = pathname
      var runs = 0
      var previous: Unicode.Scalar = " "
      for c in pattern {
        if c == "*" && previous != "*" { runs += 1 }
        previous = c
      }
      tried = runs >= 2 ? [UInt8](repeating: 0, count: (pattern.count + 1) * (text.count + 1)) : []
      reached = runs >= 2 ? [UInt8](repeating: 0, count: (pattern.count + 1) * (text.count + 1)) : []
    }

    mutating func match(_ p: Int, _ t: Int) -> Bool {
      if tried.isEmpty { return run(p, t) }
      let key = p * (text.count + 1) + (t - text.startIndex)
      if tried[key] != 0 { return tried[key] == 1 }
      let result = run(p, t)
      tried[key] = result ? 1 : 2
      return result
    }

    /// Whether the pattern from `p` (just past a run of `*`) matches the text from some
    /// position at or after `t` the run can reach: remembered per (p, t), so the positions one
    /// run of `*` tries are tried once for every start, not again from each (a pattern such as
    /// `*a*a*a…b` took pattern length × text length² steps: 7 s for 300 names, one pattern).
    private mutating func rest(_ p: Int, from t: Int, crossesSlash: Bool) -> Bool {
      let row = p * (text.count + 1) - text.startIndex
      var u = t
      var result = false
      while true {
        if reached[row + u] != 0 {
          result = reached[row + u] == 1
          break
        }
        if match(p, u) {
          result = true
          break
        }
        if u == text.endIndex || (!crossesSlash && text[u] == "/") { break }
        u += 1
      }
      // Every position passed on the way has the same answer.
      for v in t...u { reached[row + v] = result ? 1 : 2 }
      return result
    }

    private mutating func run(_ start: Int, _ textStart: Int) -> Bool {
      var p = start
      var t = textStart
      while p < pattern.count {
        let c = pattern[p]
        switch c {
        case "*":
          let first = p
          while p < pattern.count && pattern[p] == "*" { p += 1 }
          var crossesSlash = !pathname
          if pathname && p - first >= 2 {
            let before = first == 0 || pattern[first - 1] == "/"
            let after =
              p == pattern.count || pattern[p] == "/"
              || (pattern[p] == "\\" && p + 1 < pattern.count && pattern[p + 1] == "/")
            if before && after {
              // "**/" also matches no folder at all.
              if p < pattern.count && pattern[p] == "/" && match(p + 1, t) { return true }
              crossesSlash = true
            }
          }
          if p == pattern.count {
            return crossesSlash || !text[t...].contains("/")
          }
          if !tried.isEmpty { return rest(p, from: t, crossesSlash: crossesSlash) }
          var u = t
          while true {
            if match(p, u) { return true }
            if u == text.endIndex { return false }
            if !crossesSlash && text[u] == "/" { return false }
            u += 1
          }
        case "?":
          guard t < text.endIndex, !(pathname && text[t] == "/") else { return false }
        case "[":
          guard t < text.endIndex, !(pathname && text[t] == "/") else { return false }
          guard let (matched, next) = matchClass(from: p + 1, text[t]) else { return false }
          guard matched else { return false }
          p = next - 1
        case "\\":
          p += 1
          guard p < pattern.count, t < text.endIndex, pattern[p] == text[t] else { return false }
        default:
          guard t < text.endIndex, c == text[t] else { return false }
        }
        p += 1
        t += 1
      }
      return t == text.endIndex
    }

    /// Whether `ch` is in the class starting at `from` (just past `[`), and the index past its
    /// `]`; nil for a class with no end (git: no match).
    private func matchClass(from start: Int, _ ch: Unicode.Scalar) -> (Bool, Int)? {
      var p = start
      guard p < pattern.count else { return nil }
      var negated = false
      if pattern[p] == "!" || pattern[p] == "^" {
        negated = true
        p += 1
      }
      var matched = false
      var previous: Unicode.Scalar?
      var firstMember = true
      while p < pattern.count {
        var c = pattern[p]
        if c == "]" && !firstMember { return (matched != negated, p + 1) }
        firstMember = false
        if c == "\\" {
          p += 1
          guard p < pattern.count else { return nil }
          c = pattern[p]
          if c == ch { matched = true }
          previous = c
        } else if c == "-", let low = previous, p + 1 < pattern.count, pattern[p + 1] != "]" {
          p += 1
          var high = pattern[p]
          if high == "\\" {
            p += 1
            guard p < pattern.count else { return nil }
            high = pattern[p]
          }
          if low.value <= ch.value && ch.value <= high.value { matched = true }
          previous = nil
        } else if c == "[", p + 1 < pattern.count, pattern[p + 1] == ":" {
          // A POSIX class, "[:alpha:]", up to the first ']'; without ':' before it, a literal '['.
          var q = p + 2
          while q < pattern.count && pattern[q] != "]" { q += 1 }
          guard q < pattern.count else { return nil }
          guard q > p + 2, pattern[q - 1] == ":" else {
            if c == ch { matched = true }
            previous = c
            p += 1
            continue
          }
          let name = String(String.UnicodeScalarView(pattern[(p + 2)..<(q - 1)]))
          guard let test = Matcher.posixClasses[name] else { return nil }
          if ch.isASCII && test(UInt8(ch.value)) { matched = true }
          p = q
          previous = nil
        } else {
          if c == ch { matched = true }
          previous = c
        }
        p += 1
      }
      return nil
    }

    private static let posixClasses: [String: @Sendable (UInt8) -> Bool] = [
      "alnum": { isLetter($0) || isDigit($0) },
      "alpha": { isLetter($0) },
      "blank": { $0 == 0x20 || $0 == 0x09 },
      "cntrl": { $0 < 0x20 || $0 == 0x7F },
      "digit": { isDigit($0) },
      "graph": { $0 > 0x20 && $0 < 0x7F },
      "lower": { $0 >= 0x61 && $0 <= 0x7A },
      "print": { $0 >= 0x20 && $0 < 0x7F },
      "punct": { $0 > 0x20 && $0 < 0x7F && !isLetter($0) && !isDigit($0) },
      "space": { $0 == 0x20 || ($0 >= 0x09 && $0 <= 0x0D) },
      "upper": { $0 >= 0x41 && $0 <= 0x5A },
      "xdigit": { isDigit($0) || ($0 | 0x20 >= 0x61 && $0 | 0x20 <= 0x66) },
    ]
    private static func isLetter(_ b: UInt8) -> Bool { b | 0x20 >= 0x61 && b | 0x20 <= 0x7A }
    private static func isDigit(_ b: UInt8) -> Bool { b >= 0x30 && b <= 0x39 }
  }
}
