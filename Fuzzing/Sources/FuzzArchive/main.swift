// Fuzzes the readers libarchive sits behind: the input as a file (a zip or a tar by its magic,
// with the zip's two indexes cross-checked first), and as the Payload of a flat package (a cpio
// or tar stream, gzip'd or not). Must give findings, never crash or hang.
import FuzzSupport
import HostedContent
import XAR

#if canImport(Glibc)
  import Glibc
#endif

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
  guard let scratchPath = writeScratch(data, size) else { return 0 }
  var options = ValidationOptions()
  options.maxSize = 64 << 20
  _ = try? Validation.run(path: scratchPath, options: options)

  let flat = "/tmp/pkgtool-fuzz-\(getpid())-flat.pkg"
  unlink(flat)
  let bytes = Array(UnsafeBufferPointer(start: data, count: size))
  do {
    let writer = try XARWriter(path: flat)
    try writer.addFile(
      "Distribution", attributes: .init(mode: 0o644), compression: .none, bytes: Array("<installer-gui-script/>".utf8))
    try writer.addDirectory("c.pkg", attributes: .init(mode: 0o755))
    try writer.addFile("c.pkg/Payload", attributes: .init(mode: 0o644), compression: .none, bytes: bytes)
    try writer.finish()
    _ = try? Validation.run(path: flat, options: options)
  } catch {}
  return 0
}

runFuzzer { data, size in
  guard let data else { return 0 }
  return fuzz(data, size)
}
