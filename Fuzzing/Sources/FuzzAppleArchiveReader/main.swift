// Fuzzes the Apple Archive reader: detect the container, then every entry's header and its data
// read to the end. Any input must give entries or an AppleArchiveError; never a crash, hang or
// overrun. Limits are lowered so one input cannot take seconds (16 MiB decoded, 1 MiB blocks).
import AppleArchive
import FuzzSupport

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
  var limits = AppleArchiveLimits()
  limits.maxDecodedTotal = 16 << 20
  limits.maxBlockSize = 1 << 20
  let bytes = Array(UnsafeBufferPointer(start: data, count: size))
  guard let reader = try? AppleArchiveReader(bytes: bytes, limits: limits) else { return 0 }
  var buffer = [UInt8](repeating: 0, count: 4_096)
  while let entry = try? reader.next() {
    var total: UInt64 = 0
    while let n = try? buffer.withUnsafeMutableBytes({ try reader.readData(into: $0) }), n > 0 {
      total += UInt64(n)
      precondition(total <= entry.dataSize ?? 0, "read past the declared data size")
    }
  }
  return 0
}

runFuzzer { data, size in
  guard let data else { return 0 }
  return fuzz(data, size)
}
