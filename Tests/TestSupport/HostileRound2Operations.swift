import Foundation
import HostedContent
import XAR

extension HostilePackage {
  /// Packages that make a command do more work, or write more, than validate allows.
  static let round2Operations: [HostilePackage] = {
    let zeros = [UInt8](repeating: 0, count: 2_000_000)
    let script = Array("#!/bin/sh\n".utf8) + [UInt8](repeating: 0x20, count: 2_000_000)
    return [
      // Entries the sink refuses are still decoded to their end (checksums): the bytes count
      // against --max-size like written ones (OneViewOperationTests runs them under a limit).
      xar(
        "refused entries carrying deflate bombs", "path-safety",
        (0..<3).map { .file("Contents/../bomb-\($0).bin", bytes: zeros) }, compress: true),
      // Files --keep-going skips are drained the same way.
      xar(
        "skipped scripts carrying deflate bombs", "no-executable",
        (0..<3).map { .file("Contents/tool-\($0).sh", bytes: script) }, compress: true),
    ]
  }()
}
