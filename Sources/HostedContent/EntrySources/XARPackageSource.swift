import XAR

/// The entries of a plain XAR package.
package final class XARPackageSource: EntrySource {
  package let format = PackageFormat.xar
  package let location: String
  package let reader: XARReader
  package var otherForms: [PackageFormat] = []

  package init(reader: XARReader) {
    self.reader = reader
    location = reader.path
  }

  package var packageSize: UInt64? { reader.fileSize }

  /// The XAR entry as a ``PackageEntry``.
  static func entry(from x: XAREntry, path: String? = nil) -> PackageEntry {
    let kind: EntryKind
    switch x.kind {
    case .file: kind = .file
    case .directory: kind = .directory
    case .symlink: kind = .symlink
    case .hardLink: kind = .hardLink
    case .fifo: kind = .fifo
    case .characterDevice: kind = .characterDevice
    case .blockDevice: kind = .blockDevice
    case .socket: kind = .socket
    case .unknown: kind = .other
    }
    let storage = x.data.map { data in
      PackageEntry.Storage(
        storedSize: data.length,
        encoding: {
          switch data.encoding {
          case .none: return "none"
          case .gzip: return "gzip"
          case .bzip2: return "bzip2"
          case .xz: return "xz"
          case .lzma: return "lzma"
          case .unknown(let s): return s
          }
        }(), checksum: data.extractedChecksum?.description)
    }
    return PackageEntry(
      path: path ?? x.path, kind: kind, mode: x.mode ?? (kind == .directory ? 0o755 : 0o644),
      size: kind == .file ? x.size : 0,
      linkTarget: kind == .symlink ? x.linkTarget : x.hardLinkTarget, storage: storage)
  }

  package func forEachEntry(_ visit: (PackageEntry, EntryData?) throws -> Void) throws {
    for x in reader.entries {
      let entry = XARPackageSource.entry(from: x)
      try visit(entry, entry.kind == .file ? reader.dataReader(for: x) : nil)
    }
  }
}
