#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// What kind of file-system object an entry is: the one vocabulary of kinds, from a folder's
/// `stat`, a XAR `<type>`, a libarchive header or an Apple Archive `TYP` to the rules, the
/// reports and the sinks. (The library re-exports it as `HostedContent.EntryKind`.)
public enum EntryKind: String, Codable, Sendable, CaseIterable {
  /// A regular file.
  case file
  /// A folder.
  case directory
  /// A symbolic link.
  case symlink
  /// A second name for a file stored earlier.
  case hardLink = "hardlink"
  /// A named pipe.
  case fifo
  /// A character device.
  case characterDevice = "character-device"
  /// A block device.
  case blockDevice = "block-device"
  /// A socket.
  case socket
  /// Anything else a format can describe.
  case other

  /// The kind the file-type bits of a `stat` mode (`S_IFMT`) name.
  package init(fileType mode: mode_t) {
    switch mode & S_IFMT {
    case S_IFREG: self = .file
    case S_IFDIR: self = .directory
    case S_IFLNK: self = .symlink
    case S_IFIFO: self = .fifo
    case S_IFCHR: self = .characterDevice
    case S_IFBLK: self = .blockDevice
    case S_IFSOCK: self = .socket
    default: self = .other
    }
  }
}
