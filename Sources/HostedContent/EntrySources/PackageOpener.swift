import AppleArchive
import SystemIO
import TextCoding
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

  /// Opens `input` as `policy` allows: the one way into a package. A folder gives a
  /// ``DirectorySource`` (or, when the policy reads folders as projects, a ``ProjectSource`` or an
  /// asset-pack folder); a file is sniffed from its first bytes (read once) for XAR (plain or flat
  /// package), Apple Archive, zip or tar. A plain XAR is read while its TOC is parsed when the
  /// policy allows it (``ReadPolicy/streaming``), and the decode threads are set from the policy.
  /// A file that is not a package throws ``OpenError/notAPackage(path:reason:cause:)``, or becomes
  /// an ``UnreadablePackageSource`` (``ReadPolicy/notAPackage``); a path that cannot be read
  /// throws ``OpenError/unreadable(_:)``.
  package static func open(_ input: PackageInput, _ policy: ReadPolicy = ReadPolicy()) throws -> EntrySource {
    let file: FileDescriptor
    switch input {
    case .file(let given):
      file = given
    case .path(let path):
      if let folder = try openFolder(path, policy) { return folder }
      do {
        file = try FileDescriptor.open(regularFile: path)
      } catch let error as SystemError {
        throw OpenError.unreadable(error)
      }
    }
    do {
      return try open(file: file, policy)
    } catch OpenError.notAPackage(let path, let reason, let cause) where policy.notAPackage == .unreadableSource {
      return UnreadablePackageSource(path: path, packageSize: try? file.size(), reason: reason, cause: cause)
    }
  }

  /// The source for `path` when it is a folder; nil for a file. Throws when `path` cannot be read.
  private static func openFolder(_ path: String, _ policy: ReadPolicy) throws -> EntrySource? {
    if policy.foldersAsProjects && Paths.isDirectory(path) {
      if ProjectSource.isProject(path) { return try ProjectSource(directory: path) }
      // No ContentInfo.plist, a Manifest.json: a Background Assets asset-pack source folder.
      if Paths.isRegularFile(path + "/" + AssetPackManifest.fileName) {
        return DirectorySource(path: path, format: .assetPack)
      }
    }
    guard let info = Paths.status(path) else {
      throw OpenError.unreadable(SystemError("open", path: path))
    }
    return Paths.isDirectory(path) && Paths.isDirectoryMode(info.st_mode) ? DirectorySource(path: path) : nil
  }

  /// Opens the package file `file` (its first bytes read here, once).
  private static func open(file: FileDescriptor, _ policy: ReadPolicy) throws -> EntrySource {
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
      if policy.streamsPlainXAR, let source = openStreaming(file: file, otherForms: Array(forms.dropFirst()), policy) {
        return source
      }
      return try openXAR(file: file, otherForms: Array(forms.dropFirst()), policy)
    }
    if forms.first == .appleArchive {
      // A zip read from its end (unzip, Python's zipfile) finds one when the last file's data
      // is a zip stored as it is: two readers, two archives.
      var others = Array(forms.dropFirst())
      if !others.contains(.zip), zipPrefix(file: file, size: size) != nil { others.append(.zip) }
      do {
        return try AppleArchiveSource(file: file, size: size, limits: policy.limits, otherForms: others)
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
      source.maxEntries = policy.limits.maxEntries
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

  /// Opens a XAR whose TOC is read whole first: a plain XAR, or a flat package.
  private static func openXAR(file: FileDescriptor, otherForms: [PackageFormat], _ policy: ReadPolicy) throws
    -> EntrySource
  {
    let reader: XARReader
    do {
      reader = try XARReader(file: file, limits: policy.xar)
    } catch let error as XARError {
      throw OpenError.notAPackage(path: file.path, reason: error.description, cause: error)
    }
    if let payload = FlatPackageSource.payload(in: reader) {
      if let cut = reader.truncation {
        // The content is one compressed Payload: a cut leaves none of it verifiable.
        let error = XARError.truncatedArchive(
          fileSize: cut.fileSize, describedSize: cut.describedSize,
          unrecoverable: "a flat package's content is one compressed Payload, whose checksum cannot be verified")
        throw OpenError.notAPackage(path: file.path, reason: error.description, cause: error)
      }
      let source = FlatPackageSource(reader: reader, payload: payload)
      source.otherForms = otherForms
      return source
    }
    let source = XARPackageSource(reader: reader)
    source.otherForms = otherForms
    source.decodeThreads = policy.decodeThreads
    source.prefetchLargeFilesUpTo = policy.decodeAheadUpTo
    return source
  }

  /// Opens a plain XAR whose TOC is parsed while its entries are read
  /// (``StreamingXARPackageSource``). Nil for a flat package, or when even the header or the
  /// TOC's bounds fail: the ordinary reader then judges the file.
  private static func openStreaming(file: FileDescriptor, otherForms: [PackageFormat], _ policy: ReadPolicy)
    -> StreamingXARPackageSource?
  {
    guard let streaming = try? XARStreamingReader(file: file, limits: policy.xar) else { return nil }
    let source = StreamingXARPackageSource(streaming: streaming)
    source.otherForms = otherForms
    source.decodeThreads = policy.decodeThreads
    source.prefetchLargeFilesUpTo = policy.decodeAheadUpTo
    source.decodeOnCallerWhileParsing = policy.decodesOnCallerWhileParsing
    // Decided before any rule runs: a TOC without ContentInfo.plist at its root (a flat
    // package) goes to the ordinary reader whole.
    guard source.waitForContentInfo() else { return nil }
    return source
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

  package var index: PackageIndex? {
    var index = PackageIndex()
    index.unreadable = reason
    return index
  }

  package func entries() throws -> PackageReader {
    throw NotAPackage(reason: reason, cause: cause)
  }
}
