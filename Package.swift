// swift-tools-version:6.0
import PackageDescription

let package = Package(
  name: "pkgtool",
  platforms: [.macOS(.v13)],
  products: [
    .executable(name: "pkgtool", targets: ["pkgtool"]),
    .library(name: "HostedContent", targets: ["HostedContent"]),
    .library(name: "XAR", targets: ["XAR"]),
  ],
  dependencies: [
    .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
    .package(url: "https://github.com/apple/swift-crypto", from: "3.0.0"),
  ],
  targets: [
    // C libraries, through pkg-config. Only a module map and a shim header each.
    .systemLibrary(
      name: "CLibXML2", path: "Sources/CLibXML2", pkgConfig: "libxml-2.0",
      providers: [.apt(["libxml2-dev"]), .brew(["libxml2"])]),
    .systemLibrary(
      name: "CZlib", path: "Sources/CZlib", pkgConfig: "zlib",
      providers: [.apt(["zlib1g-dev"]), .brew(["zlib"])]),
    .systemLibrary(
      name: "CArchive", path: "Sources/CArchive", pkgConfig: "libarchive",
      providers: [.apt(["libarchive-dev"]), .brew(["libarchive"])]),

    // The XAR format: TOC model, reader, writer. Knows nothing of plists or rules.
    .target(
      name: "XAR",
      dependencies: [
        "CLibXML2", "CZlib", "CArchive",
        .product(name: "Crypto", package: "swift-crypto"),
      ]),
    // The domain: ContentInfo, versions, entries, sources, sinks, rules, operations.
    .target(
      name: "HostedContent",
      dependencies: ["XAR", "CLibXML2", "CArchive", .product(name: "Crypto", package: "swift-crypto")]),
    // Commands: parse, call HostedContent, print, exit.
    .target(
      name: "PkgToolCLI",
      dependencies: [
        "HostedContent", "XAR",
        .product(name: "ArgumentParser", package: "swift-argument-parser"),
      ]),
    .executableTarget(name: "pkgtool", dependencies: ["PkgToolCLI"]),

    // Shared by the test targets: temporary folders, random trees, running bsdtar and pkgtool.
    .target(name: "TestSupport", dependencies: ["XAR", "HostedContent"], path: "Tests/TestSupport"),
    .testTarget(name: "XARTests", dependencies: ["XAR", "TestSupport"]),
    .testTarget(
      name: "HostedContentTests", dependencies: ["HostedContent", "XAR", "TestSupport"], exclude: ["Golden", "Schemas"]),
    .testTarget(
      name: "PkgToolCLITests", dependencies: ["HostedContent", "XAR", "TestSupport"], exclude: ["Golden"]),
  ],
  swiftLanguageModes: [.v5]
)
