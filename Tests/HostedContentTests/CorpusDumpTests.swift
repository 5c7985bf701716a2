import Foundation
import HostedContent
import TestSupport
import Testing

/// Writes the packages test support makes (every hostile package, every rule example built into a
/// package) into the folder `PKGTOOL_DUMP_CORPUS` names, for scripts/differential.sh, which runs
/// two builds of pkgtool over them. Does nothing without the variable.
@Suite struct CorpusDumpTests {
  @Test func dumpTheCorpus() throws {
    guard let folder = ProcessInfo.processInfo.environment["PKGTOOL_DUMP_CORPUS"] else { return }
    let hostile = folder + "/hostile"
    let examples = folder + "/examples"
    for path in [hostile, examples] {
      try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }
    for (i, package) in HostilePackage.all.enumerated() {
      let dir = String(format: "%@/%03d", hostile, i)
      try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
      try package.make(dir + "/" + package.fileName)
    }
    for description in RuleCatalog.descriptions {
      for (i, example) in (description.triggering + description.nonTriggering).enumerated()
      where example.appliesToPackages && example.previous == nil {
        let dir = try TemporaryDirectory()
        let made = try ExamplePackages.package(for: example, in: dir.path)
        let target = "\(examples)/\(description.id)-\(i)"
        try FileManager.default.createDirectory(atPath: target, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: made, toPath: target + "/" + (made as NSString).lastPathComponent)
      }
    }
  }
}
