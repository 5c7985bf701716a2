import Foundation
import HostedContent
import XAR

extension HostilePackage {
  /// Packages read from standard input.
  static let round3Stdio: [HostilePackage] = []
}
