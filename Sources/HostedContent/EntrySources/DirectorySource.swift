import SystemIO

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// The entries of a folder on disk, depth first, names sorted by their bytes, never following a
/// symlink. Hard links (a second name of an inode already seen) are reported as hard links.
package final class DirectorySource: EntrySource {
  /// `directory`, or `assetPack` for an asset-pack source folder.
  package let format: PackageFormat
  package let location: String
  package let packageSize: UInt64? = nil

  package var index: PackageIndex? {
    var index = PackageIndex()
    index.expectedDataSize = { self.expectedDataSize }
    return index
  }
  /// Names left out (junk), when the walk was asked to skip them.
  package fileprivate(set) var skipped: [String] = []
  private let skipJunk: Bool
  private let hardLinksAsFiles: Bool
  /// A file the walk must not see: the package being written into the folder it walks (and
  /// the temporaries beside it), found by its folder's identity, whatever path names it.
  package var excludedOutput: (device: UInt64, inode: UInt64, name: String)?
  /// Patterns (`--exclude`, `.pkgtoolignore`) whose paths are left out, unread: a folder left
  /// out is not opened, a file not opened, so an unreadable file or a FIFO there does no harm.
  package var exclusions = ExclusionPatterns()
  /// What the patterns see before each path of the walk (`Contents/` in a project).
  package var exclusionPrefix = ""
  /// A name at the walk's root that is never an entry (a plain folder's `.pkgtoolignore`).
  package var skippedRootName: String?
  /// Paths the patterns left out (relative to the walk's root), when there are patterns.
  package fileprivate(set) var excluded: [String] = []

  /// - Parameters:
  ///   - skipJunk: leave out junk files and folders (see ``JunkFileRule``).
  ///   - hardLinksAsFiles: report every name of a file as a file of its own.
  ///   - format: what the folder holds, for the rules.
  package init(path: String, skipJunk: Bool = false, hardLinksAsFiles: Bool = false, format: PackageFormat = .directory)
  {
    location = path
    self.format = format
    self.skipJunk = skipJunk
    self.hardLinksAsFiles = hardLinksAsFiles
  }

  package func entries() throws -> PackageReader {
    let root = try DirectoryHandle(path: location)
    skipped = []
    excluded = []
    return Walk(self, root: root)
  }

  /// The walk: depth first, a folder's entry before what it holds, one folder's names at a
  /// time (each level of the stack is a folder being listed).
  private final class Walk: PackageReader {
    private struct Level {
      var folder: DirectoryHandle
      var prefix: String
      var names: [(name: String, validUTF8: Bool)]
      var next = 0
      /// The folder holds the excluded output (see ``DirectorySource/excludedOutput``).
      var holdsOutput: Bool
    }
    private let source: DirectorySource
    private var stack: [Level] = []
    /// The folder last given, opened (and listed) at the next call, as the walk goes into it.
    private var pending: (folder: DirectoryHandle, name: String, path: String)?
    private var inodes: [String: String] = [:]

    init(_ source: DirectorySource, root: DirectoryHandle) {
      self.source = source
      pending = (root, "", "")
    }

    private func enter(_ folder: DirectoryHandle, prefix: String) throws {
      var here = stat()
      let holdsOutput =
        source.excludedOutput.map { out in
          fstat(folder.fd, &here) == 0 && UInt64(here.st_dev) == out.device && UInt64(here.st_ino) == out.inode
        } ?? false
      stack.append(Level(folder: folder, prefix: prefix, names: try folder.list(), holdsOutput: holdsOutput))
    }

    func next() throws -> (entry: PackageEntry, data: EntryData?)? {
      if let into = pending {
        pending = nil
        try enter(into.name.isEmpty ? into.folder : try into.folder.openDirectory(into.name), prefix: into.path)
      }
      while let top = stack.indices.last {
        guard stack[top].next < stack[top].names.count else {
          stack.removeLast()
          continue
        }
        let (name, valid) = stack[top].names[stack[top].next]
        stack[top].next += 1
        let folder = stack[top].folder
        let prefix = stack[top].prefix
        if stack[top].holdsOutput, let out = source.excludedOutput,
          name == out.name || name.hasPrefix(TemporaryName.prefix(of: out.name))
        {
          continue
        }
        if prefix.isEmpty, name == source.skippedRootName { continue }
        let path = prefix.isEmpty ? name : prefix + "/" + name
        // Matched before anything is opened: the status of a name reads no file.
        var status: stat?
        if !source.exclusions.isEmpty {
          let info = try folder.status(name)
          status = info
          if source.exclusions.excludes(
            source.exclusionPrefix + path, isDirectory: info.st_mode & S_IFMT == S_IFDIR)
          {
            source.excluded.append(path)
            continue
          }
        }
        if source.skipJunk && JunkFileRule.isJunk(Substring(name)) {
          source.skipped.append(path)
          continue
        }
        let info = try status ?? folder.status(name)
        let mode = UInt32(info.st_mode) & 0o7777
        let kind = EntryKind(fileType: info.st_mode)
        switch kind {
        case .directory:
          pending = (folder, name, path)
          return (PackageEntry(path: path, kind: .directory, mode: mode, pathIsValidUTF8: valid), nil)
        case .file:
          let key = "\(info.st_dev):\(info.st_ino)"
          if !source.hardLinksAsFiles, info.st_nlink > 1, let original = inodes[key] {
            return (
              PackageEntry(path: path, kind: .hardLink, mode: mode, linkTarget: original, pathIsValidUTF8: valid), nil
            )
          }
          if info.st_nlink > 1 { inodes[key] = path }
          let (file, size) = try folder.openFileAndSize(name)
          let entry = PackageEntry(
            path: path, kind: .file, mode: mode, size: UInt64(info.st_size), pathIsValidUTF8: valid)
          return (entry, OpenedFile(file, size: size))
        case .symlink:
          let target = try folder.readLink(name)
          return (PackageEntry(path: path, kind: .symlink, mode: mode, linkTarget: target, pathIsValidUTF8: valid), nil)
        default:
          // FIFOs, devices, sockets and anything else: listed with their kind, for the rules.
          return (PackageEntry(path: path, kind: kind, mode: mode, pathIsValidUTF8: valid), nil)
        }
      }
      return nil
    }
  }
}

/// A regular file's bytes as the walk opened it. A read that comes back short exactly at the size
/// the opened file had is taken as the end, and the read that would return 0 is not made (a read
/// of a regular file is short only at its end): one system call of the six a small file costs. A
/// file that grew since is read on to its real end.
final class OpenedFile: PositionalEntryData {
  private let file: FileDescriptor
  /// Bytes from here to the size at opening (0 once past it).
  private var remaining: UInt64
  private var ended = false

  init(_ file: FileDescriptor, size: UInt64) {
    self.file = file
    remaining = size
  }

  func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
    guard !ended, !buffer.isEmpty else { return 0 }
    let n = try file.read(into: buffer)
    if n == 0 || (UInt64(n) == remaining && n < buffer.count) { ended = true }
    remaining -= min(remaining, UInt64(n))
    return n
  }

  func read(into buffer: UnsafeMutableRawBufferPointer, at offset: UInt64) throws -> Int {
    try file.read(into: buffer, at: offset)
  }
}
