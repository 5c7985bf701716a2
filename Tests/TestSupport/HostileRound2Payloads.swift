import Foundation
import HostedContent
import XAR

extension HostilePackage {
  /// Flat-package payloads (cpio, tar, pax; gzip, bzip2, xz) and plists that cost more than their bytes.
  static let round2Payloads: [HostilePackage] = []
}
