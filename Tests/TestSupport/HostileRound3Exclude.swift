import Foundation
import HostedContent
import XAR

extension HostilePackage {
  /// Projects and asset packs with ignore files, exclusions and export inputs.
  static let round3Exclude: [HostilePackage] = []
}
