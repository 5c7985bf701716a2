import AppleArchive
import SystemIO
import XAR

/// Opens a package file or content folder as an ``EntrySource``, finding the format from the
/// bytes, not the name.
package enum PackageOpener {
  /// Why a path could not be opened as a source.
  package enum OpenError: Error, CustomStringConvertible {
    /// The file or folder could not be read (exit 2).
    case unreadable(SystemError)
    /// The file is there but is not a package, or is damaged (an `archive-integrity` finding).
    case notAPackage(path: String, reason: String, cause: XARError? = nil)

    package var description: String {
      switch self {
      case .unreadable(let e): return e.description
      case .notAPackage(let path, let reason, _): return "'\(path)' is not a readable package: \(reason)"
      }
    }
  }

  /// Opens `path`: a folder gives a ``DirectorySource``; a file is sniffed for XAR (plain or
  /// flat package) or zip.
  package static func open(_ path: String, limits: ReaderLimits = ReaderLimits()) throws -> EntrySource {
    guard let info = Paths.status(path) else {
      throw OpenError.unreadable(SystemError("open", path: path))
    }
    if Paths.isDirectory(path) && Paths.isDirectoryMode(info.st_mode) {
      return DirectorySource(path: path)
    }
    let file: FileDescriptor
    do {
      file = try FileDescriptor.open(regularFile: path)
    } catch let error as SystemError {
      throw OpenError.unreadable(error)
    }
    return try open(file: file, limits: limits)
  }

  /// Opens the package file already open as `file`: every later read (index, data, checksums)
  /// goes through this one descriptor, so a file renamed over the path meanwhile is never read.
  /// An operation that hashes or checks the package and then reads it opens the path once and
  /// passes the same descriptor to both.
  package static func open(file: FileDescriptor, limits: ReaderLimits = ReaderLimits()) throws -> EntrySource {
    let path = file.path
    let size: UInt64
    let head: [UInt8]
    do {
      size = try file.size()
      head = try file.read(count: 512, at: 0)
    } catch let error as SystemError {
      throw OpenError.unreadable(error)
    }
    let magic = Array(head.prefix(4))
    // Every format the first bytes claim. XAR is looked for first: it is what a .pkg must be,
    // and the view bsdtar takes of a file that starts with `xar!`.
    let forms = sniff(head)
    if forms.first == .xar {
      let reader: XARReader
      do {
        reader = try XARReader(file: file, limits: limits.xar)
      } catch let error as XARError {
        throw OpenError.notAPackage(path: path, reason: error.description, cause: error)
      }
      if let payload = FlatPackageSource.payload(in: reader) {
        if let cut = reader.truncation {
          // The content is one compressed Payload: a cut leaves none of it verifiable.
          let error = XARError.truncatedArchive(
            fileSize: cut.fileSize, describedSize: cut.describedSize,
            unrecoverable: "a flat package's content is one compressed Payload, whose checksum cannot be verified")
          throw OpenError.notAPackage(path: path, reason: error.description, cause: error)
        }
        let source = FlatPackageSource(reader: reader, payload: payload)
        source.otherForms = Array(forms.dropFirst())
        return source
      }
      let source = XARPackageSource(reader: reader)
      source.otherForms = Array(forms.dropFirst())
      source.decodeThreads = limits.decodeThreads
      return source
    }
    if forms.first == .appleArchive {
      // A zip read from its end (unzip, Python's zipfile) finds one when the last file's data
      // is a zip stored as it is: two readers, two archives.
      var others = Array(forms.dropFirst())
      if !others.contains(.zip), zipPrefix(file: file, size: size) != nil { others.append(.zip) }
      do {
        return try AppleArchiveSource(file: file, size: size, limits: limits, otherForms: others)
      } catch let error as AppleArchiveError {
        throw OpenError.notAPackage(path: path, reason: error.description)
      }
    }
    if magic == Array("AEA1".utf8) {
      throw OpenError.notAPackage(
        path: path,
        reason:
          "it is an Apple Encrypted Archive (AEA1, signed or encrypted), which pkgtool does not open; on a Mac, `aea decrypt` gives the Apple Archive inside"
      )
    }
    if let first = forms.first {
      let source = ZipPackageSource(file: file, size: size, format: first, otherForms: Array(forms.dropFirst()))
      source.maxEntries = limits.maxEntries
      return source
    }
    if let prefix = zipPrefix(file: file, size: size) {
      throw OpenError.notAPackage(
        path: path,
        reason:
          "\(prefix) bytes come before the zip (a self-extracting stub, or data prepended to it), which readers treat differently; a package zip starts with its first entry"
      )
    }
    let shown =
      magic.isEmpty
      ? "the file is empty" : "it starts with bytes \(hexString(magic)), not 'xar!', a zip or a tar header"
    throw OpenError.notAPackage(path: path, reason: "\(shown)")
  }

  /// For a file that does not start like a zip: how many bytes come before the zip it ends
  /// with, when its last 64 KiB hold an end-of-central-directory record whose directory
  /// offset, shifted, lands on a central directory header; nil otherwise.
  static func zipPrefix(file: FileDescriptor, size: UInt64) -> UInt64? {
    let length = Int(min(size, 22 + 65_535))
    guard length >= 22, let tail = try? file.read(count: length, at: size - UInt64(length)) else { return nil }
    func u32(_ i: Int) -> UInt64 {
      UInt64(tail[i]) | UInt64(tail[i + 1]) << 8 | UInt64(tail[i + 2]) << 16 | UInt64(tail[i + 3]) << 24
    }
    var i = tail.count - 22
    while i >= 0 {
      if tail[i] == 0x50, tail[i + 1] == 0x4B, tail[i + 2] == 5, tail[i + 3] == 6 {
        let eocd = size - UInt64(length) + UInt64(i)
        let directorySize = u32(i + 12)
        let directoryOffset = u32(i + 16)
        guard directorySize <= eocd, directoryOffset <= eocd - directorySize else { return nil }
        let start = eocd - directorySize
        let prefix = start - directoryOffset
        guard let header = try? file.read(count: 46, at: start), header.count == 46,
          Array(header[0..<4]) == [0x50, 0x4B, 1, 2]
        else { return nil }
        // Offsets counted from the zip (a stub put in front) or from the file (adjusted).
        let first = UInt64(header[42]) | UInt64(header[43]) << 8 | UInt64(header[44]) << 16 | UInt64(header[45]) << 24
        return prefix > 0 ? prefix : (first > 0 ? first : nil)
      }
      i -= 1
    }
    return nil
  }

  /// Opens `path` for the rules: as ``open(_:limits:)``, except that a content project (a
  /// folder whose `ContentInfo.plist` is a file) is read as `build` reads it
  /// (``ProjectSource``: what build leaves out is listed, not judged), and a file which is not
  /// a package (or whose index cannot be read) becomes an ``UnreadablePackageSource``, so it
  /// flows through the rules like any other source and `archive-integrity` reports it. Only a
  /// path that cannot be read at all throws.
  package static func openForInspection(_ path: String, limits: ReaderLimits = ReaderLimits()) throws -> EntrySource {
    if Paths.isDirectory(path) && ProjectSource.isProject(path) {
      return try ProjectSource(directory: path)
    }
    if Paths.isDirectory(path) && Paths.isRegularFile(path + "/" + AssetPackManifest.fileName) {
      // No ContentInfo.plist, a Manifest.json: a Background Assets asset-pack source folder.
      return DirectorySource(path: path, format: .assetPack)
    }
    do {
      return try open(path, limits: limits)
    } catch OpenError.notAPackage(let path, let reason, let cause) {
      return UnreadablePackageSource(
        path: path, packageSize: Paths.status(path).map { UInt64($0.st_size) }, reason: reason, cause: cause)
    }
  }

  /// As ``openForInspection(_:limits:)``, for a package file already open as `file` (see
  /// ``open(file:limits:)``).
  package static func openForInspection(file: FileDescriptor, limits: ReaderLimits = ReaderLimits()) throws
    -> EntrySource
  {
    do {
      return try open(file: file, limits: limits)
    } catch OpenError.notAPackage(let path, let reason, let cause) {
      return UnreadablePackageSource(
        path: path, packageSize: try? file.size(), reason: reason, cause: cause)
    }
  }

  /// Opens the package file `file` for a run of the rules: a plain XAR as its TOC streams
  /// (``StreamingXARPackageSource``, which settles its verdict at the end), anything else as
  /// ``openForInspection(file:limits:)`` opens it. `streaming` false reads a plain XAR's whole
  /// TOC first (``XARPackageSource``): for a run that cannot wait for the verdict (digests
  /// reported as they come) or reads a cut-off file (`--keep-going`).
  package static func openForRules(file: FileDescriptor, limits: ReaderLimits, streaming: Bool = true) throws
    -> EntrySource
  {
    if streaming, !limits.acceptsTruncation, let source = openStreaming(file: file, limits: limits) {
      return source
    }
    return try openForInspection(file: file, limits: limits)
  }

  /// As ``openStreaming(_:limits:)``, for a package file already open as `file`.
  package static func openStreaming(file: FileDescriptor, limits: ReaderLimits = ReaderLimits())
    -> StreamingXARPackageSource?
  {
    guard let head = try? file.read(count: 512, at: 0) else { return nil }
    let forms = sniff(head)
    guard forms.first == .xar, let streaming = try? XARStreamingReader(file: file, limits: limits.xar) else {
      return nil
    }
    let source = StreamingXARPackageSource(streaming: streaming)
    source.otherForms = Array(forms.dropFirst())
    source.decodeThreads = limits.decodeThreads
    // Decided before any rule runs: a TOC without ContentInfo.plist at its root (a flat
    // package) goes to the ordinary reader whole.
    guard source.waitForContentInfo() else { return nil }
    return source
  }

  /// Opens `path` as a plain XAR whose TOC is parsed while its entries are read
  /// (``StreamingXARPackageSource``), for an operation that can hold back what it makes until
  /// the TOC is confirmed. Nil for anything else, or when even the header or the TOC's bounds
  /// fail: the ordinary ``openForInspection(_:limits:)`` then judges the file.
  package static func openStreaming(_ path: String, limits: ReaderLimits = ReaderLimits())
    -> StreamingXARPackageSource?
  {
    guard let file = try? FileDescriptor.open(regularFile: path) else { return nil }
    return openStreaming(file: file, limits: limits)
  }

  /// The formats whose signature `head` (a file's first 512 bytes) carries, XAR first.
  static func sniff(_ head: [UInt8]) -> [PackageFormat] {
    var forms: [PackageFormat] = []
    if head.starts(with: Array("xar!".utf8)) { forms.append(.xar) }
    // Apple Archive: raw entries (`AA01`, legacy `YAA1`) or `pbz` and an algorithm letter (an
    // unknown letter is still claimed, so the codec names it).
    if head.starts(with: Array("AA01".utf8)) || head.starts(with: Array("YAA1".utf8))
      || (head.count >= 4 && head.starts(with: Array("pbz".utf8)))
    {
      forms.append(.appleArchive)
    }
    if head.starts(with: [0x50, 0x4B, 0x03, 0x04]) || head.starts(with: [0x50, 0x4B, 0x05, 0x06]) {
      forms.append(.zip)
    }
    if isTarHeader(head) { forms.append(.tar) }
    return forms
  }

  /// True when `head` is a tar header as libarchive accepts one: `ustar` at 257, or a header
  /// whose checksum field matches its bytes (old v7 tar).
  static func isTarHeader(_ head: [UInt8]) -> Bool {
    guard head.count >= 512 else { return false }
    if Array(head[257..<262]) == Array("ustar".utf8) { return true }
    // The checksum: octal digits (with spaces or NULs around), the sum of the header's bytes
    // with the checksum field read as spaces.
    let field = head[148..<156]
    let digits = field.drop { $0 == 0x20 }.prefix { $0 >= 0x30 && $0 <= 0x37 }
    guard !digits.isEmpty, let stored = Int(String(decoding: digits, as: UTF8.self), radix: 8) else { return false }
    var sum = 0
    for (index, byte) in head.prefix(512).enumerated() { sum += (148..<156).contains(index) ? 0x20 : Int(byte) }
    return stored == sum && head.prefix(100).contains(where: { $0 != 0 })
  }
}

/// A file that is not a package, or whose index cannot be read: it has no entries, and reading
/// it throws why (an `archive-integrity` finding).
package final class UnreadablePackageSource: EntrySource {
  package let format = PackageFormat.unknown
  package var isUnreadable: Bool { true }
  package let location: String
  package let packageSize: UInt64?
  /// Why the file is not a package.
  package let reason: String
  /// The reader's error, when the file claimed to be a XAR.
  package let cause: XARError?

  /// The error ``entries()`` throws.
  package struct NotAPackage: Error, CustomStringConvertible {
    package var reason: String
    package var cause: XARError?
    package var description: String { "not a readable package: \(reason)" }
  }

  package init(path: String, packageSize: UInt64?, reason: String, cause: XARError?) {
    location = path
    self.packageSize = packageSize
    self.reason = reason
    self.cause = cause
  }

  package func entries() throws -> PackageReader {
    throw NotAPackage(reason: reason, cause: cause)
  }
}
