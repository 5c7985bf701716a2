// Fuzzes whole-package validation: the bytes as a package file (XAR, flat package, zip or tar
// by their magic), every rule, every checksum. Must give findings, never crash or hang.
import FuzzSupport
import HostedContent

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
  guard let scratchPath = writeScratch(data, size) else { return 0 }
  var options = ValidationOptions()
  options.maxSize = 64 << 20
  _ = try? Validation.run(path: scratchPath, options: options)
  return 0
}

runFuzzer { data, size in
  guard let data else { return 0 }
  return fuzz(data, size)
}
