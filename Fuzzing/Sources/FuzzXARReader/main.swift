// Fuzzes the XAR reader: open (header, TOC, checksum, entry checks) and read every entry's data
// to the end. Any input must give entries or a typed error; never a crash, hang or overrun.
import XAR

#if canImport(Glibc)
  import Glibc
#endif


@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
  let scratchPath = "/tmp/pkgtool-fuzz-\(getpid()).bin"
  let fd = open(scratchPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
  guard fd >= 0 else { return 0 }
  _ = write(fd, data, size)
  close(fd)
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


// SwiftPM links this file's top level as the program's entry: hand over to libFuzzer's driver.
@_silgen_name("LLVMFuzzerRunDriver")
func LLVMFuzzerRunDriver(
  _ argc: UnsafeMutablePointer<Int32>,
  _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>>,
  _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> Int32
) -> Int32

var fuzzArgc = CommandLine.argc
var fuzzArgv = CommandLine.unsafeArgv
exit(LLVMFuzzerRunDriver(&fuzzArgc, &fuzzArgv) { data, size in
  guard let data else { return 0 }
  return fuzz(data, size)
})
