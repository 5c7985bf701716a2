// swift-tools-version:6.0
// libFuzzer targets, built apart from the main package with sanitizers on:
//   scripts/fuzz.sh [SECONDS]
import PackageDescription

let package = Package(
  name: "pkgtool-fuzzing",
  platforms: [.macOS(.v13)],
  dependencies: [.package(name: "pkgtool", path: "..")],
  targets: [
    .target(name: "FuzzSupport"),
    .executableTarget(name: "FuzzXARReader", dependencies: ["FuzzSupport", .product(name: "XAR", package: "pkgtool")]),
    .executableTarget(name: "FuzzPropertyList", dependencies: ["FuzzSupport", .product(name: "HostedContent", package: "pkgtool")]),
    .executableTarget(name: "FuzzValidate", dependencies: ["FuzzSupport", .product(name: "HostedContent", package: "pkgtool")]),
    .executableTarget(name: "FuzzArchive", dependencies: ["FuzzSupport", .product(name: "HostedContent", package: "pkgtool"), .product(name: "XAR", package: "pkgtool")]),
  ],
  swiftLanguageModes: [.v5]
)
