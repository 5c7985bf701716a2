import XAR

/// Opens a package file or content folder as an ``EntrySource``, finding the format from the
/// bytes, not the name.
public enum PackageOpener {
  /// Why a path could not be opened as a source.
  public enum OpenError: Error, CustomStringConvertible {
    /// The file or folder could not be read (exit 2).
    case unreadable(SystemError)
    /// The file is there but is not a package, or is damaged (an `archive-integrity` finding).
    case notAPackage(path: String, reason: String, cause: XARError? = nil)

    public var description: String {
      switch self {
      case .unreadable(let e): return e.description
      case .notAPackage(let path, let reason, _): return "'\(path)' is not a readable package: \(reason)"
      }
    }
  }

  /// Opens `path`: a folder gives a ``DirectorySource``; a file is sniffed for XAR (plain or
  /// flat package) or zip.
  public static func open(_ path: String, limits: XARReader.Limits = XARReader.Limits()) throws -> EntrySource {
    guard let info = Paths.status(path) else {
      throw OpenError.unreadable(SystemError("open", path: path))
    }
    if Paths.isDirectory(path) && Paths.isDirectoryMode(info.st_mode) {
      return DirectorySource(path: path)
    }
    let file: FileDescriptor
    do {
      file = try FileDescriptor.open(reading: path)
    } catch let error as SystemError {
      throw OpenError.unreadable(error)
    }
    let size: UInt64
    let magic: [UInt8]
    do {
      size = try file.size()
      magic = try file.read(count: 4, at: 0)
      if try file.read(count: 5, at: 257) == Array("ustar".utf8) {
        return ZipPackageSource(path: path, size: size, format: .tar)
      }
    } catch let error as SystemError {
      throw OpenError.unreadable(error)
    }
    if magic == Array("xar!".utf8) {
      let reader: XARReader
      do {
        reader = try XARReader(file: file, limits: limits)
      } catch let error as XARError {
        throw OpenError.notAPackage(path: path, reason: error.description, cause: error)
      }
      if let payload = FlatPackageSource.payload(in: reader) {
        return FlatPackageSource(reader: reader, payload: payload)
      }
      return XARPackageSource(reader: reader)
    }
    if magic == [0x50, 0x4B, 0x03, 0x04] || magic == [0x50, 0x4B, 0x05, 0x06] {
      return ZipPackageSource(path: path, size: size)
    }
    let shown = magic.isEmpty ? "the file is empty" : "it starts with bytes \(hexString(magic)), not 'xar!', a zip or a tar header"
    throw OpenError.notAPackage(path: path, reason: "\(shown)")
  }
}
