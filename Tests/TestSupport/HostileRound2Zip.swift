import Foundation
import HostedContent
import XAR

extension HostilePackage {
  /// Zips that two readers (central directory, streaming, unzip) would read differently.
  static let round2Zip: [HostilePackage] = []
}
