import Foundation
import HostedContent
import XAR

extension HostilePackage {
  /// Names that are one name on APFS (case folding, normalization) but two to a naive reader.
  static let round2Names: [HostilePackage] = []
}
