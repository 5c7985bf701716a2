// Fuzzes whole-package validation: the bytes as a package file (XAR, flat package, zip or tar
// by their magic), every rule, every checksum. Must give findings, never crash or hang.
import HostedContent

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
  var options = ValidationOptions()
  options.maxSize = 64 << 20
  _ = try? Validation.run(path: scratchPath, options: options)
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
