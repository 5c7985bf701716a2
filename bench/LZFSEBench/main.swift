// Per-core throughput of pkgtool's LZFSE encoder, for bench/lzfse_encoder.py (which builds this
// file together with Sources/LZFSE into one optimised program, and times the reference's C code
// over the same blocks).
//
// usage: lzfse-bench INPUT BLOCK_SIZE OUT
// Encodes INPUT in blocks of BLOCK_SIZE bytes, one after the other on this thread, and writes
// the encoded blocks to OUT (each preceded by its size as 8 bytes, little-endian). Prints one
// JSON line: bytes in, bytes out, and the thread's CPU seconds spent encoding.

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

func fail(_ message: String) -> Never {
  fputs("lzfse-bench: \(message)\n", stderr)
  exit(2)
}

func readWhole(_ path: String) -> [UInt8] {
  guard let file = fopen(path, "rb") else { fail("cannot open '\(path)'") }
  defer { fclose(file) }
  var bytes: [UInt8] = []
  var chunk = [UInt8](repeating: 0, count: 1 << 20)
  while true {
    let n = fread(&chunk, 1, chunk.count, file)
    if n == 0 { break }
    bytes += chunk[0..<n]
  }
  return bytes
}

func cpuSeconds() -> Double {
  var now = timespec()
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now)
  return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
}

let arguments = CommandLine.arguments
guard arguments.count == 4, let blockSize = Int(arguments[2]), blockSize > 0 else {
  fail("usage: lzfse-bench INPUT BLOCK_SIZE OUT")
}
let input = readWhole(arguments[1])
guard let output = fopen(arguments[3], "wb") else { fail("cannot create '\(arguments[3])'") }
var seconds = 0.0
var written = 0
var start = 0
while start < input.count {
  let block = Array(input[start..<min(input.count, start + blockSize)])
  let begun = cpuSeconds()
  let encoded = LZFSE.encode(block)
  seconds += cpuSeconds() - begun
  var size = UInt64(encoded.count).littleEndian
  fwrite(&size, 8, 1, output)
  _ = encoded.withUnsafeBytes { fwrite($0.baseAddress, 1, $0.count, output) }
  written += encoded.count
  start += blockSize
}
fclose(output)
print("{\"in\": \(input.count), \"out\": \(written), \"seconds\": \(seconds)}")
