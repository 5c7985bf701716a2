// What every fuzz target shares: running libFuzzer's driver from SwiftPM's entry point, and
// putting the input in a file for readers that take a path. Built without `-DFUZZING` (a normal
// `swift build`), a target replays the files named on its command line instead, once each.
#if canImport(Glibc)
  import Glibc
#endif

#if FUZZING
  // libFuzzer's C entry point keeps its C name.
  // swift-format-ignore: AlwaysUseLowerCamelCase
  @_silgen_name("LLVMFuzzerRunDriver")
  func LLVMFuzzerRunDriver(
    _ argc: UnsafeMutablePointer<Int32>,
    _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>>,
    _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> Int32
  ) -> Int32
#endif

/// Hands the process to libFuzzer, which calls `callback` with each input; without `FUZZING`,
/// calls it once with each file named on the command line.
public func runFuzzer(_ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> Int32) -> Never {
  #if FUZZING
    var argc = CommandLine.argc
    var argv = CommandLine.unsafeArgv
    exit(LLVMFuzzerRunDriver(&argc, &argv, callback))
  #else
    for path in CommandLine.arguments.dropFirst() {
      guard let bytes = readWhole(path) else {
        print("cannot read '\(path)'")
        exit(2)
      }
      _ = bytes.withUnsafeBufferPointer { callback($0.baseAddress ?? UnsafePointer(bitPattern: 1), $0.count) }
      print("replayed \(path)")
    }
    exit(0)
  #endif
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

private func readWhole(_ path: String) -> [UInt8]? {
  let fd = open(path, O_RDONLY)
  guard fd >= 0 else { return nil }
  defer { close(fd) }
  var bytes: [UInt8] = []
  var chunk = [UInt8](repeating: 0, count: 1 << 16)
  while true {
    let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
    if n < 0 { return nil }
    if n == 0 { return bytes }
    bytes += chunk[..<n]
  }
}
