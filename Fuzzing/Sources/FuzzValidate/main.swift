// Fuzzes whole-package validation: the bytes as a package file (XAR, flat package, zip or tar
// by their magic), every rule, every checksum. Must give findings, never crash or hang.
import HostedContent

#if canImport(Glibc)
  import Glibc
#endif

let scratchPath = "/tmp/pkgtool-fuzz-validate-\(getpid()).pkg"

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
  let fd = open(scratchPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
  guard fd >= 0 else { return 0 }
  _ = write(fd, data, size)
  close(fd)
  var options = ValidationOptions()
  options.maxSize = 64 << 20
  _ = try? Validation.run(path: scratchPath, options: options)
  return 0
}
