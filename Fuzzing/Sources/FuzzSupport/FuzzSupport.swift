// What every fuzz target shares: running libFuzzer's driver from SwiftPM's entry point, and
// putting the input in a file for readers that take a path.
#if canImport(Glibc)
  import Glibc
#endif

@_silgen_name("LLVMFuzzerRunDriver")
func LLVMFuzzerRunDriver(
  _ argc: UnsafeMutablePointer<Int32>,
  _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>>,
  _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> Int32
) -> Int32

/// Hands the process to libFuzzer, which calls `callback` with each input.
public func runFuzzer(_ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> Int32) -> Never {
  var argc = CommandLine.argc
  var argv = CommandLine.unsafeArgv
  exit(LLVMFuzzerRunDriver(&argc, &argv, callback))
}

/// Writes the input to a per-process scratch file and returns its path (nil if it cannot).
public func writeScratch(_ data: UnsafePointer<UInt8>, _ size: Int) -> String? {
  let path = "/tmp/pkgtool-fuzz-\(getpid()).bin"
  let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
  guard fd >= 0 else { return nil }
  _ = write(fd, data, size)
  close(fd)
  return path
}
