import XAR

/// How hard to compress what is worth compressing.
public enum CompressionLevel: String, CaseIterable, Sendable {
  case none, fast, `default`, best

  /// The zlib level; nil stores everything.
  public var zlibLevel: Int32? {
    switch self {
    case .none: return nil
    case .fast: return 1
    case .default: return 6
    case .best: return 9
    }
  }
}

/// Decides per file: already-compressed formats (by magic bytes) are stored, the rest deflated.
struct EncodingChooser {
  var level: CompressionLevel
  func shouldCompress(head: UnsafeRawBufferPointer) -> Bool {
    guard level.zlibLevel != nil, head.count > 0 else { return false }
    return !FileSignature.isCompressed(Array(head.prefix(64)))
  }
}

/// Writes entries into a XAR through ``XARWriter``; the archive appears only on ``commit()``.
public final class XARSink: EntrySink {
  public let writer: XARWriter
  private let attributesTime: XARTimestamp
  private let chooser: EncodingChooser
  private var pending: PackageEntry?
  /// Files stored without compression because they already were compressed.
  public private(set) var storedCount = 0

  public init(path: String, overwrite: Bool, mtime: XARTimestamp, compression: CompressionLevel) throws {
    var options = XARWriter.Options()
    options.overwrite = overwrite
    options.creationTime = mtime
    writer = try XARWriter(path: path, options: options)
    attributesTime = mtime
    chooser = EncodingChooser(level: compression)
  }

  private func attributes(_ entry: PackageEntry) -> XARWriter.Attributes {
    .init(mode: entry.mode, mtime: attributesTime)
  }

  public func begin(_ entry: PackageEntry) throws -> String? {
    switch entry.kind {
    case .directory: try writer.addDirectory(entry.path, attributes: attributes(entry))
    case .symlink: try writer.addSymlink(entry.path, target: entry.linkTarget ?? "", attributes: attributes(entry))
    case .file: pending = entry
    default: return "a \(entry.kind.rawValue) cannot be packaged"
    }
    return nil
  }

  public func write(_ bytes: UnsafeRawBufferPointer) throws {
    if let entry = pending {
      pending = nil
      let compress = chooser.shouldCompress(head: bytes)
      if !compress { storedCount += 1 }
      try writer.beginFile(entry.path, attributes: attributes(entry), compression: compress ? .zlib(level: chooser.level.zlibLevel!) : .none)
    }
    try writer.writeFileData(bytes)
  }

  public func end(_ entry: PackageEntry) throws {
    guard entry.kind == .file else { return }
    if let pending {
      self.pending = nil
      try writer.beginFile(pending.path, attributes: attributes(pending), compression: .none)
    }
    try writer.endFile()
  }

  /// Publishes the archive, unless `check` (given the final size) throws.
  public func commit(checkingSize check: ((UInt64) throws -> Void)? = nil) throws {
    try writer.finish(checkingSize: check)
  }

  /// Drops everything written; nothing appears.
  public func discard() { writer.cancel() }
}

/// Writes the zip delivery form (what the client downloads) through libarchive, to a temporary
/// file that ``commit()`` renames into place.
public final class ZipSink: EntrySink {
  private let writer: LibArchiveZipWriter
  private let path: String
  private let tempPath: String
  private let overwrite: Bool
  private let mtime: Int64
  private let chooser: EncodingChooser
  private var pending: PackageEntry?
  private var open = false

  public init(path: String, overwrite: Bool, mtime: XARTimestamp, compression: CompressionLevel) throws {
    self.path = path
    self.overwrite = overwrite
    self.mtime = mtime.secondsSinceEpoch
    tempPath = FileSystem.temporarySibling(of: path, purpose: "tmp")
    chooser = EncodingChooser(level: compression)
    writer = try LibArchiveZipWriter(path: tempPath)
    open = true
  }

  deinit { discard() }

  public func begin(_ entry: PackageEntry) throws -> String? {
    switch entry.kind {
    case .directory, .symlink: try writer.add(entry, mtime: mtime, compress: false, data: nil)
    case .file: pending = entry
    default: return "a \(entry.kind.rawValue) cannot be packaged"
    }
    return nil
  }


  public func write(_ bytes: UnsafeRawBufferPointer) throws {
    if let entry = pending {
      pending = nil
      try writer.add(entry, mtime: mtime, compress: chooser.shouldCompress(head: bytes), data: nil)
    }
    try writer.writeData(bytes)
  }

  public func end(_ entry: PackageEntry) throws {
    if let pending {
      self.pending = nil
      try writer.add(pending, mtime: mtime, compress: false, data: nil)
    }
  }

  /// Closes the zip and renames it into place, unless `check` (given its size) throws.
  public func commit(checkingSize check: ((UInt64) throws -> Void)? = nil) throws {
    try writer.finish()
    let file = try FileDescriptor.open(reading: tempPath)
    try check?(try file.size())
    try file.sync()
    if overwrite {
      try FileSystem.rename(tempPath, to: path)
    } else {
      try FileSystem.link(tempPath, to: path)
      FileSystem.removeFile(tempPath)
    }
    open = false
  }

  /// Removes the temporary zip.
  public func discard() {
    if open {
      FileSystem.removeFile(tempPath)
      open = false
    }
  }
}
