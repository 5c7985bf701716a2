import Dispatch
import SystemIO

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

// Whole small files compressed and hashed in batches, on worker threads when
// `Options.threads` > 1, and written to the heap in the order they were added.
extension XARWriter {
  /// Hands the open batch to a worker (or runs it here with one thread).
  func submitBatch() throws {
    guard let job = batch else { return }
    batch = nil
    if options.threads > 1 {
      queuedBytes += job.inputBytes
      queue.append(job)
      job.start()
      while queuedBytes > options.maxBytesInFlight || queue.count - queueHead > 2 * options.threads {
        try writeOldestJob()
      }
    } else {
      job.run()
      queue.append(job)
      try writeOldestJob()
    }
  }

  /// Whole files being compressed and hashed together, maybe on another thread.
  final class EncodeBatch: @unchecked Sendable {
    struct Item {
      var record: Int32
      var bytes: [UInt8]
      var compression: Compression
      var stored: [UInt8] = []
      var size = 0
      var archived: XARChecksum?
      var extracted: XARChecksum?
      /// Whether the stored bytes are deflated: not when deflating made them no smaller.
      var deflated = false
      /// Whether they are stored because their sample did not shrink enough.
      var storedBySample = false
    }
    let algorithm: XARChecksumAlgorithm
    private(set) var items: [Item] = []
    private(set) var inputBytes = 0
    private let done = DispatchSemaphore(value: 0)

    init(algorithm: XARChecksumAlgorithm) { self.algorithm = algorithm }

    var count: Int { items.count }

    func add(record: Int32, bytes: [UInt8], compression: Compression) {
      items.append(Item(record: record, bytes: bytes, compression: compression))
      inputBytes += bytes.count
    }

    func start() {
      DispatchQueue.global().async {
        self.run()
        self.done.signal()
      }
    }

    func wait() { done.wait() }

    /// Item `index`, moved out: the batch keeps no reference to its buffers, so the writer
    /// can reuse them.
    func takeItem(_ index: Int) -> Item {
      var item = Item(record: 0, bytes: [], compression: .none)
      swap(&item, &items[index])
      return item
    }

    func run() {
      for index in items.indices {
        var item = items[index]
        item.size = item.bytes.count
        var hasher = XARHasher(algorithm)
        hasher.update(item.bytes)
        item.extracted = hasher.finalize()
        if case .sampledZlib = item.compression, !item.bytes.withUnsafeBytes({ DeflateSample.shrinks($0) }) {
          item.storedBySample = true
        }
        if !item.storedBySample, let level = item.compression.level {
          let deflater = WholeDeflater.pool.take(level: level)
          item.stored = deflater.compress(item.bytes)
          WholeDeflater.pool.give(deflater)
          if item.stored.count < item.size {
            item.deflated = true
            var a = XARHasher(algorithm)
            a.update(item.stored)
            item.archived = a.finalize()
          } else {
            // Deflate would make it no smaller (small or random bytes): stored as it is.
            item.stored = item.bytes
            item.archived = item.extracted
          }
        } else {
          item.stored = item.bytes
          item.archived = item.extracted  // the same bytes: hash once
        }
        // Deflated, the file's bytes are kept until written, for the writer to reuse
        // (`giveBack`); stored, they are the stored bytes themselves.
        if !item.deflated { item.bytes = [] }
        items[index] = item
      }
    }
  }

  /// Waits for the oldest queued batch and appends its files to the heap.
  func writeOldestJob() throws {
    guard queueHead < queue.count, let heap else { return }
    let job = queue[queueHead]
    queue[queueHead] = EncodeBatch(algorithm: options.checksum)  // drop our reference to the data
    queueHead += 1
    if options.threads > 1 { job.wait() }
    for index in 0..<job.count {
      let item = job.takeItem(index)
      try item.stored.withUnsafeBytes { try bufferedHeapWrite($0, heap) }
      try setData(
        item.record, offset: heapSize, length: UInt64(item.stored.count), size: UInt64(item.size),
        gzip: item.deflated, archived: item.archived, extracted: item.extracted)
      if item.storedBySample {
        filesStoredBySample += 1
        bytesStoredBySample += UInt64(item.size)
      } else if item.compression != .none && !item.deflated {
        filesStoredUnshrunk += 1
      }
      growHeap(by: UInt64(item.stored.count))
      giveBack(item.bytes)
      giveBack(item.stored)
    }
    if options.threads > 1 { queuedBytes -= job.inputBytes }
    if queueHead == queue.count {
      queue.removeAll(keepingCapacity: true)
      queueHead = 0
    }
  }

  /// Buffers smaller than this are left to malloc, which serves them from its heaps.
  static let spareBufferMinimum = 128 << 10
  /// The most bytes of buffers kept for later files: one whole file's worth (4 MiB, the largest
  /// a build gathers whole).
  static let spareBufferBytes = 4 << 20

  /// A buffer for a whole file's bytes (empty, `capacity` or more reserved): the smallest spare
  /// that is large enough, or a new one. A build reads hundreds of megabytes into such buffers;
  /// made new for each file, every byte of them was memory the kernel had to fault in and zero
  /// (build asks glibc to unmap freed blocks of 128 KiB and more), about a fifth of a build's
  /// CPU time on the benchmark's mixed files.
  package func wholeFileBuffer(capacity: Int) -> [UInt8] {
    // The spares are sorted largest first: the last that fits is the smallest that does.
    var buffer: [UInt8] = []
    if capacity >= XARWriter.spareBufferMinimum, let best = spareBuffers.lastIndex(where: { $0.capacity >= capacity }) {
      buffer = spareBuffers.remove(at: best)
      buffer.removeAll(keepingCapacity: true)
    }
    buffer.reserveCapacity(capacity)
    return buffer
  }

  /// Keeps a written file's buffer for a later one; the smallest go first past the limit.
  func giveBack(_ buffer: [UInt8]) {
    guard buffer.capacity >= XARWriter.spareBufferMinimum else { return }
    spareBuffers.append(buffer)
    spareBuffers.sort { $0.capacity > $1.capacity }
    var total = spareBuffers.reduce(0) { $0 + $1.capacity }
    // The largest is always kept: one reserved for a file of exactly 4 MiB is a little larger.
    while total > XARWriter.spareBufferBytes && spareBuffers.count > 1, let smallest = spareBuffers.popLast() {
      total -= smallest.capacity
    }
  }

  /// Writes every queued file, in order, and flushes the heap buffer.
  func writeQueuedJobs() throws {
    try submitBatch()
    while queueHead < queue.count { try writeOldestJob() }
    if let heap, !heapBuffer.isEmpty {
      try heapBuffer.withUnsafeBytes { try heap.write($0) }
      heapBuffer.removeAll(keepingCapacity: true)
    }
  }

  /// How much heap data is written before the kernel is asked to start writing it back.
  static let writebackStep: UInt64 = 16 << 20

  /// Counts `count` more bytes of data in the heap; every ``writebackStep`` bytes, starts their
  /// writeback.
  func growHeap(by count: UInt64) {
    heapSize += count
    if heapSize - UInt64(options.checksum.digestSize) - writebackStart >= XARWriter.writebackStep {
      startHeapWriteback()
    }
  }

  /// Starts the disk writes of the heap data written since the last call, without waiting for
  /// them: ``finish()`` must have it all on the disk before it publishes, and, when the writes
  /// start as the data comes in, they overlap with the rest of the build instead of following it.
  /// (Data still in the heap buffer is covered by the next call, or by the flush ``finish()``
  /// starts once all of it is written.)
  func startHeapWriteback() {
    let end = heapSize - UInt64(options.checksum.digestSize)  // the file holds the data only
    heap?.startWriteback(offset: writebackStart, length: end - writebackStart)
    writebackStart = end
  }

  func bufferedHeapWrite(_ bytes: UnsafeRawBufferPointer, _ heap: FileDescriptor) throws {
    let large = bytes.count >= XARWriter.heapBufferSize / 2
    if !heapBuffer.isEmpty && (large || heapBuffer.count + bytes.count > XARWriter.heapBufferSize) {
      try heapBuffer.withUnsafeBytes { try heap.write($0) }
      heapBuffer.removeAll(keepingCapacity: true)
    }
    if large {
      try heap.write(bytes)
    } else {
      heapBuffer.append(contentsOf: bytes)
    }
  }
}
