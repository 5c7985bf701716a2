import SystemIO
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

  package var index: PackageIndex? {
    var index = PackageIndex()
    index.otherForms = otherForms
    index.entryCountHint = reader.entries.count
    index.expectedDataSize = { XARPackageSource.declaredFileBytes(self.reader.entries) }
    index.truncation = reader.truncation.map { Truncation(fileSize: $0.fileSize, describedSize: $0.describedSize) }
    index.indexedPaths = { self.reader.entries.indices.map { self.reader.entries.path(at: $0) } }
    index.contentInfo = { limit in try self.contentInfo(limit: limit) }
    index.checksumStyle = reader.header.checksumAlgorithm.styleName
    index.tableOfContents = reader
    return index
  }

  /// `ContentInfo.plist`'s bytes (at most `limit`) straight from the TOC; nil when it has none
  /// at the root.
  private func contentInfo(limit: UInt64) throws -> [UInt8]? {
    guard let entry = reader.entries.first(where: { $0.path == ContentInfo.fileName && $0.kind == .file }) else {
      return nil
    }
    return try reader.readData(of: entry, limit: limit)
  }

  /// The XAR entry as a ``PackageEntry``.
  static func entry(from x: XAREntry, path: String? = nil) -> PackageEntry {
    let kind = x.kind
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

  /// Decode files' data on other threads, ahead of the rules (when there is a second core).
  package var prefetch = Machine.processorCount > 1
  /// How many threads decode ahead (``ReaderLimits/decodeThreads``).
  package var decodeThreads = Machine.processorCount
  /// Decode large files up to this size ahead too (in parts), not only small ones, two at a
  /// time: for a reader that reads every file whole. Any larger file is decoded by the reading
  /// thread itself, as far as it reads it, while the workers go on with the next ones. Set by
  /// the opener from ``ReadPolicy/decodeAheadUpTo``.
  package var prefetchLargeFilesUpTo: UInt64 = 0

  package func entries() throws -> PackageReader {
    XAREntries(reader.entries, from: 0, reading: reader.dataReader(for:)) {
      self.prefetch && self.decodeThreads > 1
        ? self.reader.prefetchedItems(workers: self.decodeThreads, largeFilesInPartsUpTo: self.prefetchLargeFilesUpTo)
        : nil
    }
  }

  /// `x` as a ``PackageEntry`` and, for a file, its data: decoded ahead when the prefetcher has
  /// it, else streamed from `reading`.
  static func item(_ x: XAREntry, items: XARPrefetchedItems?, reading: (XAREntry) -> XARDataReader) -> (
    entry: PackageEntry, data: EntryData?
  ) {
    let entry = XARPackageSource.entry(from: x)
    guard entry.kind == .file else { return (entry, nil) }
    if let items, case let item = items.next(), !item.isStreamed {
      return (entry, PrefetchedData(item, rest: items))
    }
    return (entry, reading(x))
  }
}

/// A pass over a XAR's entries from a table, from one index on, their data decoded ahead by a
/// prefetcher made at the first ``next()`` (so that a pass never started starts no thread).
final class XAREntries: PackageReader {
  private let table: XAREntryTable
  private var index: Int
  private let reading: (XAREntry) -> XARDataReader
  private var makeItems: (() -> XARPrefetchedItems?)?
  private var items: XARPrefetchedItems?

  init(
    _ table: XAREntryTable, from index: Int, reading: @escaping (XAREntry) -> XARDataReader,
    items: @escaping () -> XARPrefetchedItems?
  ) {
    self.table = table
    self.index = index
    self.reading = reading
    makeItems = items
  }

  deinit { items?.stop() }

  func next() throws -> (entry: PackageEntry, data: EntryData?)? {
    if let make = makeItems {
      items = make()
      makeItems = nil
    }
    guard index < table.count else {
      items?.stop()
      return nil
    }
    defer { index += 1 }
    return XARPackageSource.item(table[index], items: items, reading: reading)
  }
}

/// A file's data decoded ahead by ``XARPrefetcher``: its bytes (part after part for a large
/// file), then the reader's error at the point where the reader threw it (after the bytes it
/// had delivered), as ``XARDataReader`` would have.
final class PrefetchedData: EntryData {
  private var item: XARPrefetcher.Item
  private let rest: XARPrefetchedItems
  private var position = 0

  init(_ item: XARPrefetcher.Item, rest: XARPrefetchedItems) {
    self.item = item
    self.rest = rest
  }

  deinit { rest.recycle(&item.bytes) }

  func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
    while true {
      let n = min(buffer.count, item.bytes.count - position)
      if n > 0 {
        item.bytes.withUnsafeBytes {
          buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: $0[position..<(position + n)]))
        }
        position += n
        return n
      }
      if let error = item.error { throw error }
      guard item.continues else { return 0 }
      rest.recycle(&item.bytes)
      item = rest.nextPart()
      position = 0
    }
  }
}

/// A plain XAR package read while its TOC is still being parsed (``XARStreamingReader``): the
/// entries come as the parser hands them out, their data decoded ahead by the same workers as
/// ``XARPackageSource``'s (on two processors, for a caller whose work per file is light, only
/// once the TOC is whole: ``ReadPolicy/callerWorkIsLight``), so the rules and the sink start on
/// the first entries while the parser reads the rest.
///
/// It is the one way a plain XAR is read for the rules (validate, unpack, install, info, diff):
/// every entry reaches the rules once, and the checks on the whole TOC settle the verdict at the
/// end.
/// - When the whole TOC then passes (``XARStreamingReader/reader()``), the entries given were
///   exactly those the ordinary ``XARReader`` gives.
/// - When the parser cannot stream the TOC (a hard link, whose target is known only at the
///   end), the TOC is read again whole and the entries not yet given come from that reading.
///   The ones already given are its own: the parser stores entries in document order, and a
///   field after a child, which would change one, is refused by both readers
///   (``XARError/fieldAfterChildren(path:)``); they are compared all the same.
/// - When the whole TOC is refused, ``PackageIndex/refusal`` says why, and the run's verdict is
///   that of a file whose index cannot be read (``UnreadablePackageSource``), as the ordinary
///   reader's: the run gives it as its result (``InspectionResult/indexRefused``).
package final class StreamingXARPackageSource: EntrySource {
  package let format = PackageFormat.xar
  package let location: String
  package let streaming: XARStreamingReader
  package var otherForms: [PackageFormat] = []
  /// Decode files' data on other threads (as ``XARPackageSource/prefetch``).
  package var prefetch = Machine.processorCount > 1
  /// How many threads decode ahead (``ReaderLimits/decodeThreads``).
  package var decodeThreads = Machine.processorCount
  /// Decode large files up to this size ahead too (as ``XARPackageSource/prefetchLargeFilesUpTo``).
  package var prefetchLargeFilesUpTo: UInt64 = 0
  /// The caller decodes each file itself while the TOC is parsed, and the decode threads start
  /// once it is whole (set by the opener: ``ReadPolicy/decodesOnCallerWhileParsing``).
  package var decodeOnCallerWhileParsing = false

  /// The TOC as the parser had handed it out, and how many of its entries were given.
  private var handedOut: (table: XAREntryTable?, count: Int) = (nil, 0)
  /// The whole TOC's verdict, once asked: its reader, and whether the stream alone was read.
  private var settled: Result<(reader: XARReader, streamed: Bool), any Error>?

  /// Decides, before any entry is given to the rules, whether this source reads the package:
  /// true for a plain XAR, false when the ordinary reader must judge it (a flat package, whose
  /// outer entries the rules must never see as a plain XAR's: ``FlatPackageSource`` reads it).
  ///
  /// A plain XAR is known by `ContentInfo.plist` at its root, or by a TOC none of whose entries
  /// can be a flat package's `Payload`. pkgtool writes the plist first, so one entry settles
  /// it; bsdtar writes it last, so the TOC's bytes are scanned meanwhile on this thread
  /// (``XARStreamingReader/tocMayName(_:stopWhen:)``, about a quarter of the parse's time),
  /// and the rules start long before the parser's end. When the scan cannot tell, this waits
  /// for the plist or the TOC's end.
  package func waitForContentInfo() -> Bool {
    var seen = 0
    let scanned = streaming.tocMayName(FlatPackageSource.payloadName) {
      let (table, ready, _) = streaming.feed.snapshot
      defer { seen = ready }
      return (seen..<ready).contains { StreamingXARPackageSource.isContentInfo(table, $0) }
    }
    if scanned != true { return true }  // the plist was handed out, or no Payload is possible
    return firstEntry { table, i in StreamingXARPackageSource.isContentInfo(table, i) } != nil
  }

  /// True when the entry at `i` is named `ContentInfo.plist` at the root (its path's length
  /// compared first: the path is joined only for a likely one).
  private static func isContentInfo(_ table: XAREntryTable, _ i: Int) -> Bool {
    table.pathLength(at: i) == ContentInfo.fileName.utf8.count && table.path(at: i) == ContentInfo.fileName
  }

  /// The first entry of the TOC, in the parser's order, for which `matches` is true (waiting for
  /// the parser as far as it takes); nil when the TOC ends without one.
  private func firstEntry(where matches: (XAREntryTable, Int) -> Bool) -> XAREntry? {
    var seen = 0
    while true {
      let (table, ready) = streaming.feed.view(beyond: seen)
      guard seen < ready else { return nil }
      if let i = (seen..<ready).first(where: { matches(table, $0) }) { return table[i] }
      seen = ready
    }
  }

  package init(streaming: XARStreamingReader) {
    self.streaming = streaming
    location = streaming.path
  }

  package var packageSize: UInt64? { streaming.fileSize }

  package var index: PackageIndex? {
    var index = PackageIndex()
    index.otherForms = otherForms
    index.expectedDataSize = { self.streaming.feed.completeTable.map(XARPackageSource.declaredFileBytes) }
    index.expectedDataSizeMayArrive = true
    index.contentInfo = { limit in try self.contentInfo(limit: limit) }
    index.checksumStyle = streaming.header.checksumAlgorithm.styleName
    index.refusal = { self.refusal() }
    return index
  }

  /// `ContentInfo.plist`'s bytes as soon as the parser has handed out its entry (the first
  /// file of that name at the root, as ``XARPackageSource`` takes it): before the TOC is
  /// settled, so whoever acts on them before reading the entries asks ``PackageIndex/refusal``
  /// first.
  private func contentInfo(limit: UInt64) throws -> [UInt8]? {
    guard
      let entry = firstEntry(where: { table, i in
        StreamingXARPackageSource.isContentInfo(table, i) && table.kind(at: i) == .file
      })
    else { return nil }
    return try streaming.dataReader(for: entry).readAll(of: entry, limit: limit)
  }

  package func entries() throws -> PackageReader { Entries(self) }

  /// A pass: entries as the parser hands them out, then (a TOC read again whole) the rest from
  /// that reading. Each pass starts again from the first entry.
  private final class Entries: PackageReader {
    private let source: StreamingXARPackageSource
    private var streamed: XARPrefetchedItems?
    private var table: XAREntryTable?
    private var ready = 0
    /// The entry this pass gives next.
    private var position = 0
    private var rest: XAREntries?
    private var ended = false
    /// The decode threads wait for the TOC's end (``decodeOnCallerWhileParsing``).
    private var prefetchDeferred: Bool

    init(_ source: StreamingXARPackageSource) {
      self.source = source
      let prefetch = source.prefetch && source.decodeThreads > 1
      prefetchDeferred = prefetch && source.decodeOnCallerWhileParsing
      streamed =
        prefetch && !prefetchDeferred
        ? source.streaming.prefetchedItems(
          workers: source.decodeThreads, largeFilesInPartsUpTo: source.prefetchLargeFilesUpTo)
        : nil
    }

    deinit { streamed?.stop() }

    func next() throws -> (entry: PackageEntry, data: EntryData?)? {
      if let rest { return try rest.next() }
      guard !ended else { return nil }
      let given = position
      if table == nil || given >= ready {
        (table, ready) = source.streaming.feed.view(beyond: given)
      }
      if let table, given < ready {
        if prefetchDeferred && source.streaming.feed.hasEnded {
          // The parse is over: the decode threads take the files from this one on.
          prefetchDeferred = false
          streamed = source.streaming.prefetchedItems(
            workers: source.decodeThreads, largeFilesInPartsUpTo: source.prefetchLargeFilesUpTo, startingAt: given)
        }
        position += 1
        // (What the source has handed out, for the check against a TOC read again whole.)
        if position > source.handedOut.count { source.handedOut = (table, position) }
        return XARPackageSource.item(table[given], items: streamed, reading: source.streaming.dataReader(for:))
      }
      // The TOC has ended: confirmed, refused (thrown), or read again whole for the rest.
      streamed?.stop()
      streamed = nil
      ended = true
      let (reader, wasStreamed) = try source.settle()
      guard !wasStreamed, given < reader.entries.count else { return nil }
      let rest = XAREntries(reader.entries, from: given, reading: reader.dataReader(for:)) {
        self.source.prefetch && self.source.decodeThreads > 1
          ? reader.prefetchedItems(
            workers: self.source.decodeThreads, largeFilesInPartsUpTo: self.source.prefetchLargeFilesUpTo,
            startingAt: given)
          : nil
      }
      self.rest = rest
      return try rest.next()
    }
  }

  /// Waits for the whole TOC's verdict (the parse once): the reader, or why the TOC is refused.
  /// A TOC read again whole must hold the entries handed out so far as its first ones.
  private func settle() throws -> (reader: XARReader, streamed: Bool) {
    if settled == nil { settled = Result { try streaming.wholeReader() } }
    let whole = try settled!.get()
    if !whole.streamed, let table = handedOut.table {
      for i in 0..<handedOut.count {
        let given = table[i]
        guard i < whole.reader.entries.count else { throw XARError.fieldAfterChildren(path: given.path) }
        let read = whole.reader.entries[i]
        guard given.data == read.data && XARPackageSource.entry(from: given) == XARPackageSource.entry(from: read)
        else { throw XARError.fieldAfterChildren(path: read.path) }
      }
    }
    return whole
  }

  /// Why the whole TOC is refused, once it is settled; nil when it stands.
  private func refusal() -> (any Error)? {
    do {
      _ = try settle()
      return nil
    } catch {
      return error
    }
  }

  /// Waits for the parse: true when the whole TOC passed every check as it streamed, so the
  /// entries given were the package's without reading it again (tests).
  package func confirmed() -> Bool {
    (try? settle().streamed) ?? false
  }
}

extension XARReader: TableOfContents {}
