import Foundation

/// A `--state` URL, parsed: where the store is. Never shows a password.
enum StoreLocation: Equatable {
  /// `sqlite:PATH`: the absolute path of the database file.
  case sqlite(path: String)
  /// `postgres://...`.
  case postgres(Postgres)

  /// A PostgreSQL server and database, and how to log in.
  struct Postgres: Equatable {
    /// TLS to the server: none, or required (certificate and name verified).
    enum TLSMode: String, Equatable { case disable, require }

    var username: String
    var password: String?
    var host: String
    var port: Int
    var database: String
    var tls: TLSMode

    /// `postgres://user@host:5432/db`, with `?sslmode=require` when so: no password.
    var display: String {
      let shownHost = host.contains(":") ? "[\(host)]" : host
      return "postgres://\(username)@\(shownHost):\(port)/\(database)" + (tls == .require ? "?sslmode=require" : "")
    }
  }

  /// Parses `url`, resolving a relative SQLite path against the working folder. Throws
  /// ``StoreError/badLocation(_:)`` naming the URL without its password.
  init(_ url: String, workingDirectory: String = FileManager.default.currentDirectoryPath) throws(StoreError) {
    func bad(_ why: String) -> StoreError {
      .badLocation(
        "cannot use the state location '\(Self.redacted(url))': \(why); use \(EntitlementStores.acceptedForms)")
    }
    if url.hasPrefix("sqlite:") {
      let path = String(url.dropFirst("sqlite:".count))
      guard !path.isEmpty else { throw bad("it names no file") }
      guard !path.utf8.contains(0) else { throw bad("the path holds a NUL character") }
      let absolute = path.hasPrefix("/") ? path : workingDirectory + "/" + path
      let standardized = (absolute as NSString).standardizingPath
      let folder = (standardized as NSString).deletingLastPathComponent
      var isFolder: ObjCBool = false
      guard FileManager.default.fileExists(atPath: folder, isDirectory: &isFolder), isFolder.boolValue else {
        throw bad("the folder '\(folder)' does not exist (the file is created, its folder is not)")
      }
      if FileManager.default.fileExists(atPath: standardized, isDirectory: &isFolder), isFolder.boolValue {
        throw bad("'\(standardized)' is a folder, not a database file")
      }
      self = .sqlite(path: standardized)
      return
    }
    let scheme: String
    if url.hasPrefix("postgres://") {
      scheme = "postgres://"
    } else if url.hasPrefix("postgresql://") {
      scheme = "postgresql://"
    } else {
      throw bad("it is neither a sqlite: nor a postgres:// URL")
    }
    // user[:password]@host[:port]/database[?query]. The user information ends at the last '@',
    // so that a password holding an unencoded '@' or '/' still parses (and is never shown).
    let rest = url.dropFirst(scheme.count)
    guard let at = rest.lastIndex(of: "@") else { throw bad("it names no user (postgres://user@host/database)") }
    let userInfo = rest[..<at]
    let afterAt = rest[rest.index(after: at)...]
    let username: String
    var password: String?
    if let colon = userInfo.firstIndex(of: ":") {
      username = String(userInfo[..<colon])
      password = String(userInfo[userInfo.index(after: colon)...])
    } else {
      username = String(userInfo)
    }
    guard let decodedUser = username.removingPercentEncoding, !decodedUser.isEmpty else {
      throw bad("the user name is empty or badly percent-encoded")
    }
    if let raw = password {
      guard let decoded = raw.removingPercentEncoding else { throw bad("the password is badly percent-encoded") }
      password = decoded
    }
    guard let slash = afterAt.firstIndex(of: "/") else {
      throw bad("it names no database (postgres://user@host/database)")
    }
    let hostPort = afterAt[..<slash]
    var pathAndQuery = afterAt[afterAt.index(after: slash)...]
    var query: Substring = ""
    if let question = pathAndQuery.firstIndex(of: "?") {
      query = pathAndQuery[pathAndQuery.index(after: question)...]
      pathAndQuery = pathAndQuery[..<question]
    }
    guard let database = pathAndQuery.removingPercentEncoding, !database.isEmpty, !database.contains("/") else {
      throw bad("it names no database, or a bad one (postgres://user@host/database)")
    }
    var host: Substring
    var portText: Substring?
    if hostPort.hasPrefix("[") {
      guard let close = hostPort.firstIndex(of: "]") else { throw bad("an IPv6 host lacks its ']'") }
      host = hostPort[hostPort.index(after: hostPort.startIndex)..<close]
      let afterClose = hostPort[hostPort.index(after: close)...]
      if afterClose.hasPrefix(":") {
        portText = afterClose.dropFirst()
      } else if !afterClose.isEmpty {
        throw bad("unexpected '\(afterClose)' after the host")
      }
    } else if let colon = hostPort.firstIndex(of: ":") {
      host = hostPort[..<colon]
      portText = hostPort[hostPort.index(after: colon)...]
    } else {
      host = hostPort
    }
    guard !host.isEmpty else { throw bad("it names no host") }
    var port = 5432
    if let portText {
      guard let value = Int(portText), (1...65535).contains(value) else { throw bad("the port is not 1 to 65535") }
      port = value
    }
    var tls = Postgres.TLSMode.disable
    for item in query.split(separator: "&") where !item.isEmpty {
      let pair = item.split(separator: "=", maxSplits: 1).map(String.init)
      guard pair.count == 2, pair[0] == "sslmode" else {
        throw bad("the only option understood is sslmode=disable or sslmode=require, not '\(item)'")
      }
      guard let mode = Postgres.TLSMode(rawValue: pair[1]) else {
        throw bad("sslmode is 'disable' or 'require', not '\(pair[1])'")
      }
      tls = mode
    }
    self = .postgres(
      Postgres(
        username: decodedUser, password: password, host: String(host), port: port, database: database, tls: tls))
  }

  /// `url` with any password replaced by `***`: what errors and logs may show.
  static func redacted(_ url: String) -> String {
    guard let schemeEnd = url.range(of: "://") else { return url }
    let rest = url[schemeEnd.upperBound...]
    guard let at = rest.lastIndex(of: "@") else { return url }
    let userInfo = rest[..<at]
    guard let colon = userInfo.firstIndex(of: ":") else { return url }
    return String(url[..<schemeEnd.upperBound]) + userInfo[..<colon] + ":***" + rest[at...]
  }
}
