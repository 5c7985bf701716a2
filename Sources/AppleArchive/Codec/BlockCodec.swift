import CLZMA
import LZFSE
import Zlib

// The one file of this module that calls liblzma (and zlib, through the Zlib target): one whole
// block in, one whole block out.

/// Decodes and encodes one block of the `pbz*` framing.
enum BlockCodec {
  /// Decodes `input`, a whole compressed block, to exactly `rawSize` bytes.
  static func decode(
    _ input: [UInt8], rawSize: Int, compression: AppleArchiveCompression, block: Int
  ) throws(AppleArchiveError) -> [UInt8] {
    switch compression {
    case .none: return input
    case .zlib: return try inflate(input, rawSize: rawSize, block: block)
    case .lzma: return try unxz(input, rawSize: rawSize, block: block)
    case .lzfse:
      let out: [UInt8]
      do {
        out = try LZFSE.decode(input, limit: rawSize)
      } catch {
        throw AppleArchiveError(.corruptBlock(block: block, algorithm: "LZFSE", message: error.description))
      }
      guard out.count == rawSize else {
        throw AppleArchiveError(.blockSizeMismatch(block: block, declared: UInt64(rawSize), actual: UInt64(out.count)))
      }
      return out
    }
  }

  /// Encodes one block; the caller stores it instead when this is not shorter.
  static func encode(_ input: [UInt8], compression: AppleArchiveCompression) -> [UInt8] {
    switch compression {
    case .none: return input
    case .zlib: return deflate(input)
    case .lzma: return xz(input)
    case .lzfse: return LZFSE.encode(input)
    }
  }

  // MARK: zlib

  private static func inflate(_ input: [UInt8], rawSize: Int, block: Int) throws(AppleArchiveError) -> [UInt8] {
    guard input.count >= 2, ZlibInflater.isPlainZlibHeader(input[0], input[1]) else {
      throw AppleArchiveError(.notZlibStream(block: block, found: Array(input.prefix(2))))
    }
    let inflater = ZlibInflater(acceptsGzip: false)
    // One byte more than declared: a block that decodes to more stops there.
    var out = [UInt8](repeating: 0, count: rawSize + 1)
    let step: Result<(used: Int, made: Int), ZlibError> = input.withUnsafeBytes { inBuf in
      out.withUnsafeMutableBytes { outBuf in
        do {
          return .success(try inflater.inflateStep(inBuf, into: outBuf))
        } catch let error as ZlibError {
          return .failure(error)
        } catch {
          return .failure(ZlibError(message: "\(error)"))
        }
      }
    }
    let used: Int
    let made: Int
    switch step {
    case .success(let counts): (used, made) = counts
    case .failure(let error):
      throw AppleArchiveError(.corruptBlock(block: block, algorithm: "zlib", message: error.message))
    }
    guard inflater.finished else {
      if made > rawSize {
        throw AppleArchiveError(.blockSizeMismatch(block: block, declared: UInt64(rawSize), actual: nil))
      }
      throw AppleArchiveError(
        .corruptBlock(block: block, algorithm: "zlib", message: "the stream ends early (after \(made) bytes)"))
    }
    guard made == rawSize else {
      throw AppleArchiveError(.blockSizeMismatch(block: block, declared: UInt64(rawSize), actual: UInt64(made)))
    }
    guard used == input.count else {
      throw AppleArchiveError(.junkAfterBlockStream(block: block, count: input.count - used))
    }
    out.removeLast()
    return out
  }

  /// A zlib stream at level 5, Apple's level for `pbzz`.
  private static func deflate(_ input: [UInt8]) -> [UInt8] {
    ZlibDeflater.compress(input, level: 5)
  }

  // MARK: xz

  private static func unxz(_ input: [UInt8], rawSize: Int, block: Int) throws(AppleArchiveError) -> [UInt8] {
    var memlimit: UInt64 = 256 << 20
    var inPos = 0
    var outPos = 0
    var out = [UInt8](repeating: 0, count: rawSize + 1)
    let status = input.withUnsafeBufferPointer { inBuf in
      out.withUnsafeMutableBufferPointer { outBuf in
        lzma_stream_buffer_decode(
          &memlimit, 0, nil, inBuf.baseAddress, &inPos, inBuf.count, outBuf.baseAddress, &outPos, outBuf.count)
      }
    }
    switch status {
    case LZMA_OK:
      guard outPos == rawSize else {
        if outPos > rawSize {
          throw AppleArchiveError(.blockSizeMismatch(block: block, declared: UInt64(rawSize), actual: nil))
        }
        throw AppleArchiveError(.blockSizeMismatch(block: block, declared: UInt64(rawSize), actual: UInt64(outPos)))
      }
      guard inPos == input.count else {
        throw AppleArchiveError(.junkAfterBlockStream(block: block, count: input.count - inPos))
      }
      out.removeLast()
      return out
    case LZMA_BUF_ERROR:
      // The whole stream is given, so only a full output buffer stops it here (liblzma does not
      // say how far it got: out_pos moves only on success).
      throw AppleArchiveError(.blockSizeMismatch(block: block, declared: UInt64(rawSize), actual: nil))
    case LZMA_DATA_ERROR:
      throw AppleArchiveError(
        .corruptBlock(block: block, algorithm: "xz", message: "the stream is damaged or ends early"))
    case LZMA_FORMAT_ERROR:
      throw AppleArchiveError(.corruptBlock(block: block, algorithm: "xz", message: "no xz stream header"))
    case LZMA_MEMLIMIT_ERROR:
      throw AppleArchiveError(
        .corruptBlock(block: block, algorithm: "xz", message: "it needs more than 256 MiB to decode"))
    default:
      throw AppleArchiveError(.corruptBlock(block: block, algorithm: "xz", message: "liblzma error \(status.rawValue)"))
    }
  }

  /// An xz stream at preset 6 with a CRC-64 check (xz's defaults; Apple's `pbzx` uses preset 6).
  private static func xz(_ input: [UInt8]) -> [UInt8] {
    let bound = lzma_stream_buffer_bound(input.count)
    var outPos = 0
    var out = [UInt8](repeating: 0, count: bound)
    let status = input.withUnsafeBufferPointer { inBuf in
      out.withUnsafeMutableBufferPointer { outBuf in
        lzma_easy_buffer_encode(
          6, LZMA_CHECK_CRC64, nil, inBuf.baseAddress, inBuf.count, outBuf.baseAddress, &outPos, bound)
      }
    }
    precondition(status == LZMA_OK, "lzma_easy_buffer_encode failed: \(status.rawValue)")
    out.removeSubrange(outPos...)
    return out
  }
}
