import SystemIO

/// A failure that stops a command before it can judge the package: a missing file, an unusable
/// argument, an I/O error. Exit code 2.
public struct OperationError: Error, CustomStringConvertible {
  /// What went wrong, naming the file.
  public var message: String
  /// What to do about it.
  public var hint: String?

  /// An error with a hint.
  public init(_ message: String, hint: String? = nil) {
    self.message = message
    self.hint = hint
  }

  /// The message, with the hint in parentheses.
  public var description: String { hint.map { "\(message) (\($0))" } ?? message }

  /// The lock on `folder` that `command` holds while it reads and rewrites a shared file there;
  /// another holder past `timeout` seconds is an error that says so.
  package static func turn(in folder: String, for command: String, timeout: Double) throws -> FileLock {
    do {
      return try FileLock(folder: try DirectoryHandle(path: folder), timeout: timeout)
    } catch let busy as FileLock.Busy {
      throw OperationError("\(busy)", hint: "wait for the other \(command) to finish, then \(command) again")
    } catch {
      throw OperationError.wrap(error)
    }
  }

  /// Turns the errors of lower layers into one.
  public static func wrap(_ error: Error) -> OperationError {
    switch error {
    case let e as OperationError: return e
    case let e as PackageOpener.OpenError: return OperationError(e.description)
    default: return OperationError("\(error)")
    }
  }

  /// An output failure, named after the file the user asked for (`output`), never its
  /// temporary.
  static func writing(_ output: String, _ error: Error) -> OperationError {
    if let system = error as? SystemError {
      return OperationError("cannot write '\(output)': \(system.reason) (\(system.codeName))")
    }
    return OperationError.wrap(error)
  }
}
