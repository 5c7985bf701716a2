// Fuzzes the XAR reader: open (header, TOC, checksum, entry checks) and read every entry's data
// to the end. Any input must give entries or a typed error; never a crash, hang or overrun.
import FuzzSupport
import XAR

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
  guard let scratchPath = writeScratch(data, size) else { return 0 }
  var limits = XARReader.Limits()
  limits.maxTOCBytes = 8 << 20
  guard let reader = try? XARReader(path: scratchPath, limits: limits) else { return 0 }
  var buffer = [UInt8](repeating: 0, count: 64 * 1024)
  for entry in reader.entries where entry.data != nil {
    let stream = reader.dataReader(for: entry)
    var total: UInt64 = 0
    while let n = try? buffer.withUnsafeMutableBytes({ try stream.read(into: $0) }), n > 0 {
      total += UInt64(n)
      precondition(total <= entry.size, "read past the declared size")
    }
  }
  return 0
}

runFuzzer { data, size in
  guard let data else { return 0 }
  return fuzz(data, size)
}
