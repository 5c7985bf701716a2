import SystemIO

/// A failure that stops a command before it can judge the package: a missing file, an unusable
/// argument, an I/O error. Exit code 2.
///
/// ``message`` and ``hint`` are for people; ``code`` is for a program that calls the library and
/// wants to act on the kind of failure (retry when ``Code/busy``, ask before replacing when
/// ``Code/outputExists``) without reading the text.
public struct OperationError: Error, CustomStringConvertible {
  /// The kind of failure, stable across releases: match on it, never on the message.
  public enum Code: String, Sendable, CaseIterable {
    /// A file or folder the command was given cannot be found or read.
    case inputUnreadable
    /// The input is not what the command takes (a folder where a package is needed, a package
    /// of another form, a project without `ContentInfo.plist`).
    case inputUnsuitable
    /// The input changed while the command read it; nothing was written. Run it again.
    case inputChanged
    /// An argument or setting cannot be used (a malformed URL, version, product ID, pattern,
    /// `SOURCE_DATE_EPOCH`).
    case invalidArgument
    /// The output exists and is not replaced (without `force`, or never: a root version).
    case outputExists
    /// The output cannot be written or its folder made: a missing folder, permissions, a full disk.
    case outputUnwritable
    /// Another run holds the lock on the same output; wait and run again.
    case busy
    /// A key file is not the key the command needs (a public key for a secret one, another
    /// algorithm, damaged).
    case unusableKey
    /// A catalog or root cannot be read, continued or signed as asked.
    case catalogRefused
    /// A download failed (HTTP status, a cut transfer, too large, no `curl`).
    case downloadFailed
    /// Anything else.
    case other
  }

  /// What went wrong, naming the file.
  public var message: String
  /// What to do about it.
  public var hint: String?
  /// The kind of failure.
  public var code: Code

  /// An error with a hint, of the kind `code`.
  public init(_ message: String, hint: String? = nil, code: Code = .other) {
    self.message = message
    self.hint = hint
    self.code = code
  }

  /// The message, with the hint in parentheses.
  public var description: String { hint.map { "\(message) (\($0))" } ?? message }

  /// The lock on `folder` that `command` holds while it reads and rewrites a shared file there;
  /// another holder past `timeout` seconds is an error that says so.
  package static func turn(in folder: String, for command: String, timeout: Double) throws -> FileLock {
    do {
      return try FileLock(folder: try DirectoryHandle(path: folder), timeout: timeout)
    } catch let busy as FileLock.Busy {
      throw OperationError(
        "\(busy)", hint: "wait for the other \(command) to finish, then \(command) again", code: .busy)
    } catch {
      throw OperationError.wrap(error)
    }
  }

  /// Turns the errors of lower layers into one: a failed system call about a path is
  /// ``Code/inputUnreadable`` (the outputs' own failures go through ``writing(_:_:)``).
  public static func wrap(_ error: Error) -> OperationError {
    switch error {
    case let e as OperationError: return e
    case let e as PackageOpener.OpenError:
      if case .unreadable = e { return OperationError(e.description, code: .inputUnreadable) }
      return OperationError(e.description, code: .inputUnsuitable)
    case let e as SystemError: return OperationError(e.description, code: .inputUnreadable)
    default: return OperationError("\(error)")
    }
  }

  /// An output failure, named after the file the user asked for (`output`), never its
  /// temporary.
  static func writing(_ output: String, _ error: Error) -> OperationError {
    if let system = error as? SystemError {
      return OperationError("cannot write '\(output)': \(system.reason) (\(system.codeName))", code: .outputUnwritable)
    }
    return OperationError.wrap(error)
  }
}
