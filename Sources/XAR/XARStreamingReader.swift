import SystemIO

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// A TOC's entries as they are read: the table so far, and how many of its entries, from the
/// first, are whole. Shared between the thread that parses and those that read; each gets a
/// copy of the table (a value: later entries never change what a copy shows).
package final class TOCFeed: Sendable {
  private struct State: Sendable {
    var table = XAREntryTable()
    var ready = 0
    var ended = false
  }
  private let state: Watched<State>

  /// A feed that is already complete: all of `table`.
  init(complete table: XAREntryTable) {
    state = Watched(State(table: table, ready: table.count, ended: true))
  }

  /// A feed whose entries are still to come.
  init() { state = Watched(State()) }

  /// More entries are whole: the first `ready` of `table`.
  func publish(_ table: XAREntryTable, ready: Int) {
    state.update {
      $0.table = table
      $0.ready = ready
    }
  }

  /// No more entries will come (the TOC is read, or its reading failed): `table`, when given, is
  /// the whole of it.
  func end(with table: XAREntryTable?) {
    state.update {
      if let table {
        $0.table = table
        $0.ready = table.count
      }
      $0.ended = true
    }
  }

  /// The whole table once the TOC is read (without waiting); nil while it is still being
  /// parsed, or when its reading failed.
  package var completeTable: XAREntryTable? {
    state.update { $0.ended && $0.ready == $0.table.count ? $0.table : nil }
  }

  /// True once no more entries will come (without waiting, and without copying the table).
  package var hasEnded: Bool {
    state.update { $0.ended }
  }

  /// The table and how many of its entries are whole now, and whether more will come (without
  /// waiting).
  package var snapshot: (table: XAREntryTable, ready: Int, ended: Bool) {
    state.update { ($0.table, $0.ready, $0.ended) }
  }

  /// Waits until more than `count` entries are whole, or no more will come; returns the table
  /// and how many of its entries are whole (at most `count` only at the end).
  package func view(beyond count: Int) -> (table: XAREntryTable, ready: Int) {
    state.wait(until: { $0.ended || $0.ready > count }, then: { ($0.table, $0.ready) })
  }
}

/// A XAR archive whose TOC is parsed on a thread of its own while its entries are already
/// read: ``feed`` hands them out as they are parsed (``TOCParser/parse(pulling:limits:publish:)``).
///
/// Each entry handed out has passed the checks made one entry at a time (name, fields, path
/// limits, data inside the heap, expansion); the checks that need the whole TOC (its checksum,
/// ids, overlapping data, what follows the document) pass only when ``reader()`` returns. Until
/// then, whatever was made from the entries must be held back, and thrown away if it throws.
/// A TOC the parser cannot stream (hard links, fields after a child) fails with
/// ``TOCParser/CannotStream``; the ordinary ``XARReader`` reads it.
package final class XARStreamingReader {
  /// The archive's path, for messages.
  package let path: String
  package let header: XARHeader
  /// The size of the archive file.
  package let fileSize: UInt64
  /// The entries, as they are parsed.
  package let feed = TOCFeed()
  let file: FileDescriptor
  private let limits: XARReader.Limits
  private let window = ReadWindow()
  private let outcome = Watched<Outcome?>(nil)

  /// The parse's result, handed over once from the parsing thread, which keeps no reference.
  private struct Outcome: @unchecked Sendable {
    var result: Result<XARReader, any Error>
  }

  /// Reads the header and bounds the TOC (throwing as ``XARReader`` does), then starts parsing
  /// on a new thread.
  package init(file: FileDescriptor, limits: XARReader.Limits = XARReader.Limits()) throws {
    let front = try XARReader.Front(file: file, limits: limits)
    self.file = file
    self.limits = limits
    path = file.path
    header = front.header
    fileSize = front.fileSize
    let feed = self.feed
    let outcome = self.outcome
    let started = startDetachedThread {
      var checked = 0
      let result = Result<XARReader, any Error> {
        let parsed = try XARReader.parseTOC(front, limits: limits) { table, ready in
          while checked < ready {
            // (A cut-off file, when accepted, is checked whole at the end.)
            _ = try XARReader.checkData(
              of: table, at: checked, heapSize: limits.acceptsTruncation ? .max : front.heapSize, limits: limits)
            checked += 1
          }
          feed.publish(table, ready: ready)
        }
        return try XARReader(front, parsed: parsed, limits: limits)
      }
      feed.end(with: try? result.get().entries)
      outcome.update { $0 = Outcome(result: result) }
    }
    guard started else { throw SystemError("start a thread for", path: file.path, code: EAGAIN) }
  }

  /// Waits for the parse and the whole-TOC checks; the reader, or why the archive is refused.
  package func reader() throws -> XARReader {
    try outcome.wait(until: { $0 != nil }, then: { $0!.result }).get()
  }

  /// Waits for the parse, as ``reader()``; when the TOC is one the parser does not stream
  /// (``TOCParser/CannotStream``: a hard link, a field after a child), reads it again the
  /// ordinary way, which judges it. `streamed` is false then, and the entries handed out so far
  /// need not be the reader's (see ``TOCParser/CannotStream``): the caller compares them.
  package func wholeReader() throws -> (reader: XARReader, streamed: Bool) {
    do {
      return (try reader(), true)
    } catch is TOCParser.CannotStream {
      return (try XARReader(file: file, limits: limits), false)
    }
  }

  /// Whether some entry of the TOC may be named `name`, judged from the TOC's bytes alone
  /// (``TOCNameScan``): the TOC is inflated a second time, on the calling thread, while the
  /// parser reads it on its own. Much faster than the parse, so the answer comes long before
  /// the parser's end. True ("may") for whatever the scan does not judge, a stream that does
  /// not inflate, or more bytes than the header declares: the parse then decides. `stop` is
  /// asked after each piece; when it returns true, the scan ends without an answer (nil).
  package func tocMayName(_ name: String, stopWhen stop: () -> Bool) -> Bool? {
    var scan = TOCNameScan(name: name)
    var stream = TOCStream(
      file: file, offset: UInt64(header.headerSize), length: Int(header.tocCompressedLength),
      declared: header.tocUncompressedLength)
    var output = [UInt8](repeating: 0, count: 128 << 10)
    while !stream.finished {
      if stop() { return nil }
      guard let made = try? output.withUnsafeMutableBytes({ try stream.inflate(into: $0) }),
        made > 0 || stream.finished
      else { return true }
      let verdict = output.withUnsafeBytes { scan.feed(UnsafeRawBufferPointer(rebasing: $0[..<made])) }
      if verdict == .may { return true }
    }
    return scan.finish() == .may
  }

  /// A stream of `entry`'s decoded bytes (see ``XARReader/dataReader(for:)``).
  package func dataReader(for entry: XAREntry) -> XARDataReader {
    XARDataReader(
      file: file, heapStart: header.heapStart, path: entry.path, data: entry.data, window: window,
      threads: max(1, limits.inflateThreads))
  }

  /// Starts decoding the data of every file entry on `workers` threads as the entries come (see
  /// ``XARPrefetcher``); the files before the entry at `first` are left out (read another way).
  package func prefetchedItems(workers: Int = 2, largeFilesInPartsUpTo: UInt64 = .max, startingAt first: Int = 0)
    -> XARPrefetchedItems
  {
    XARPrefetchedItems(
      XARPrefetcher(
        file: file, heapStart: header.heapStart, feed: feed, workers: workers,
        largeFilesInPartsUpTo: largeFilesInPartsUpTo, startingAt: first, inflateThreads: max(1, limits.inflateThreads)))
  }
}
