import Crypto
import TextCoding

/// A hash algorithm XAR names in `style` attributes and in the header.
package enum XARChecksumAlgorithm: String, Sendable, CaseIterable {
  case none
  case sha1
  case md5
  case sha256
  case sha512

  /// Recognizes a `style` attribute value (`sha1`, `SHA1`, `md5`, `sha256`, `sha512`).
  package init?(styleName: String) {
    switch styleName.lowercased() {
    case "none": self = .none
    case "sha1", "sha-1": self = .sha1
    case "md5": self = .md5
    case "sha256", "sha-256": self = .sha256
    case "sha512", "sha-512": self = .sha512
    default: return nil
    }
  }

  /// The name written in `style` attributes.
  package var styleName: String { rawValue }

  /// The code in the header's checksum field.
  var headerCode: UInt32 {
    switch self {
    case .none: return 0
    case .sha1: return 1
    case .md5: return 2
    case .sha256, .sha512: return 3
    }
  }

  /// The digest size in bytes.
  package var digestSize: Int {
    switch self {
    case .none: return 0
    case .sha1: return 20
    case .md5: return 16
    case .sha256: return 32
    case .sha512: return 64
    }
  }
}

/// A digest with the algorithm that produced it.
package struct XARChecksum: Equatable, Hashable, Sendable, CustomStringConvertible {
  package var algorithm: XARChecksumAlgorithm
  package var digest: [UInt8]

  package init(algorithm: XARChecksumAlgorithm, digest: [UInt8]) {
    self.algorithm = algorithm
    self.digest = digest
  }

  /// Parses a hex digest as found in the TOC; nil if it is not hex of the right length.
  package init?(algorithm: XARChecksumAlgorithm, hex: String) {
    var text = hex
    let size = algorithm.digestSize
    let digest: [UInt8]? = text.withUTF8 { raw in
      func space(_ b: UInt8) -> Bool { b == 0x20 || b == 0x0A || b == 0x09 || b == 0x0D }
      var low = 0
      var high = raw.count
      while low < high && space(raw[low]) { low += 1 }
      while high > low && space(raw[high - 1]) { high -= 1 }
      guard high - low == size * 2 else { return nil }
      var valid = true
      let bytes = [UInt8](unsafeUninitializedCapacity: size) { buffer, count in
        for k in 0..<size {
          guard let h = Hex.value(raw[low + 2 * k]), let l = Hex.value(raw[low + 2 * k + 1]) else {
            valid = false
            break
          }
          buffer[k] = h << 4 | l
        }
        count = valid ? size : 0
      }
      return valid ? bytes : nil
    }
    guard let digest else { return nil }
    self.init(algorithm: algorithm, digest: digest)
  }

  /// The digest in lower-case hex.
  package var hex: String { hexString(digest) }

  package var description: String { "\(algorithm.styleName):\(hex)" }
}

/// An incremental hasher for any ``XARChecksumAlgorithm``.
package struct XARHasher {
  private enum State {
    case none
    case sha1(Insecure.SHA1)
    case md5(Insecure.MD5)
    case sha256(SHA256)
    case sha512(SHA512)
  }
  private var state: State
  package let algorithm: XARChecksumAlgorithm

  package init(_ algorithm: XARChecksumAlgorithm) {
    self.algorithm = algorithm
    switch algorithm {
    case .none: state = .none
    case .sha1: state = .sha1(Insecure.SHA1())
    case .md5: state = .md5(Insecure.MD5())
    case .sha256: state = .sha256(SHA256())
    case .sha512: state = .sha512(SHA512())
    }
  }

  package mutating func update(_ bytes: UnsafeRawBufferPointer) {
    // The hasher is taken out of `state`, which is left empty meanwhile, so that swift-crypto
    // finds its context referenced once and updates it in place: updated while `state` still
    // held it, the context was copied (a heap allocation) on every call.
    var current = State.none
    swap(&current, &state)
    switch consume current {
    case .none: break
    case .sha1(var h):
      h.update(bufferPointer: bytes)
      state = .sha1(h)
    case .md5(var h):
      h.update(bufferPointer: bytes)
      state = .md5(h)
    case .sha256(var h):
      h.update(bufferPointer: bytes)
      state = .sha256(h)
    case .sha512(var h):
      h.update(bufferPointer: bytes)
      state = .sha512(h)
    }
  }

  package mutating func update(_ bytes: [UInt8]) {
    bytes.withUnsafeBytes { update($0) }
  }

  package func finalize() -> XARChecksum {
    let digest: [UInt8]
    switch state {
    case .none: digest = []
    case .sha1(let h): digest = Array(h.finalize())
    case .md5(let h): digest = Array(h.finalize())
    case .sha256(let h): digest = Array(h.finalize())
    case .sha512(let h): digest = Array(h.finalize())
    }
    return XARChecksum(algorithm: algorithm, digest: digest)
  }
}

extension String {
  func trimmingASCIIWhitespace() -> String {
    func space(_ b: UInt8) -> Bool { b == 0x20 || b == 0x0A || b == 0x09 || b == 0x0D }
    if let first = utf8.first, let last = utf8.last, !space(first), !space(last) { return self }
    let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\n" || $0 == "\t" || $0 == "\r" }
    guard let first = firstIndex(where: { !isSpace($0) }) else { return "" }
    let last = lastIndex(where: { !isSpace($0) })!
    return String(self[first...last])
  }
}
