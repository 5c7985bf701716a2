// swift-tools-version:6.0
import PackageDescription

// scripts/fuzz.sh sets PKGTOOL_FUZZING: the project's own targets are then instrumented for
// libFuzzer and AddressSanitizer, and the fuzz targets link libFuzzer. Build tools (the rule
// registry's generator) are left alone: they must run during the build.
let fuzzing = Context.environment["PKGTOOL_FUZZING"] != nil
let instrumented: [SwiftSetting] = fuzzing ? [.unsafeFlags(["-sanitize=fuzzer,address"]), .define("FUZZING")] : []
let fuzzerLinked: [LinkerSetting] = fuzzing ? [.unsafeFlags(["-sanitize=fuzzer,address", "-use-ld=lld"])] : []
// PKGTOOL_CORE_ONLY leaves the server out of the manifest: its targets, its tests and the packages
// only it needs (Hummingbird, SwiftNIO, swift-certificates, ...) are then neither resolved nor
// built. scripts/demo.sh builds that way, and scripts/test.sh tests the core that way first.
// The core never depends on the server, so the two manifests agree on every core target.
let coreOnly = Context.environment["PKGTOOL_CORE_ONLY"] != nil

let package = Package(
  name: "pkgtool",
  platforms: [.macOS(.v13)],
  products: [
    // The core: the command every content pipeline runs, and the library an app or tool links.
    .executable(name: "pkgtool", targets: ["pkgtool"]),
    .library(name: "HostedContent", targets: ["HostedContent"]),
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
      name: "CDeflate", path: "Sources/CDeflate", pkgConfig: "libdeflate",
      providers: [.apt(["libdeflate-dev"]), .brew(["libdeflate"])]),
    .systemLibrary(
      name: "CArchive", path: "Sources/CArchive", pkgConfig: "libarchive",
      providers: [.apt(["libarchive-dev"]), .brew(["libarchive"])]),
    .systemLibrary(
      name: "CLZMA", path: "Sources/CLZMA", pkgConfig: "liblzma",
      providers: [.apt(["liblzma-dev"]), .brew(["xz"])]),

    // The system layer: descriptors, folder handles, atomic files, temporary names, renames,
    // locks, SystemError. Every POSIX call of the project goes through here.
    .target(name: "SystemIO", swiftSettings: instrumented),
    // libarchive, wrapped once: an archive reader (zip, tar, cpio, raw streams and their
    // filters), the zip writer, and LibArchiveError (the call, libarchive's code, its message).
    .target(name: "ArchiveIO", dependencies: ["CArchive"], swiftSettings: instrumented),
    // zlib, wrapped once: streaming deflate and inflate, Adler-32, joining deflate streams
    // (libdeflate's Adler-32 checks the streams it inflates raw).
    .target(name: "Zlib", dependencies: ["CZlib", "CDeflate"], swiftSettings: instrumented),
    // Bytes as text and text for display, for every layer: Base64, hex, and the one escape of
    // control characters in what is shown.
    .target(name: "TextCoding", swiftSettings: instrumented),
    // libxml2, wrapped once: the pull reader and the event parser (no entities, no DTD, no
    // network, bounded), and the reference text writer. The XAR TOC and property lists use it.
    .target(name: "XML", dependencies: ["CLibXML2"], swiftSettings: instrumented),
    // The XAR format: TOC model, reader, writer. Knows nothing of plists or rules.
    .target(
      name: "XAR",
      dependencies: [
        "SystemIO", "ArchiveIO", "XML", "TextCoding", "Zlib", "CDeflate",
        .product(name: "Crypto", package: "swift-crypto"),
      ],
      swiftSettings: instrumented),
    // LZFSE, our own Swift code (encoder and decoder): Apple Archive's default compression.
    // Optimised even in debug builds, so the tests can check 100 MB against the reference.
    .target(name: "LZFSE", swiftSettings: instrumented + [.unsafeFlags(["-O"])]),
    // The Apple Archive format: entry headers and blobs, the pbz* framing. Knows nothing of
    // plists or rules.
    .target(
      name: "AppleArchive",
      dependencies: [
        "SystemIO", "LZFSE", "Zlib", "CLZMA", "TextCoding", .product(name: "Crypto", package: "swift-crypto"),
      ],
      swiftSettings: instrumented),
    // The domain: ContentInfo, versions, entries, sources, sinks, rules, operations. Its rules
    // are registered at build time from the files in Rules/ (RuleRegistry).
    .target(
      name: "HostedContent",
      dependencies: [
        "SystemIO", "ArchiveIO", "Zlib", "XML", "TextCoding", "XAR", "AppleArchive",
        .product(name: "Crypto", package: "swift-crypto"),
      ],
      swiftSettings: instrumented,
      plugins: ["RuleRegistry"]),
    .plugin(name: "RuleRegistry", capability: .buildTool(), dependencies: ["RuleRegistryGenerator"]),
    .executableTarget(name: "RuleRegistryGenerator", path: "Plugins/RuleRegistryGenerator"),
    // Commands: parse, call HostedContent, print, exit.
    .target(
      name: "PkgToolCLI",
      dependencies: [
        "HostedContent", "SystemIO", "TextCoding",
        .product(name: "ArgumentParser", package: "swift-argument-parser"),
      ]),
    .executableTarget(name: "pkgtool", dependencies: ["PkgToolCLI"]),

    // libFuzzer targets: scripts/fuzz.sh builds them with PKGTOOL_FUZZING set (instrumented, into
    // .build-fuzz/); in a normal build each replays the files named on its command line.
    .target(name: "FuzzSupport", path: "Fuzzing/Sources/FuzzSupport", swiftSettings: instrumented),
    .executableTarget(
      name: "FuzzXARReader", dependencies: ["FuzzSupport", "XAR"], path: "Fuzzing/Sources/FuzzXARReader",
      swiftSettings: instrumented, linkerSettings: fuzzerLinked),
    .executableTarget(
      name: "FuzzAppleArchiveReader", dependencies: ["FuzzSupport", "AppleArchive"],
      path: "Fuzzing/Sources/FuzzAppleArchiveReader", swiftSettings: instrumented, linkerSettings: fuzzerLinked),
    .executableTarget(
      name: "FuzzPropertyList", dependencies: ["FuzzSupport", "HostedContent"],
      path: "Fuzzing/Sources/FuzzPropertyList",
      swiftSettings: instrumented, linkerSettings: fuzzerLinked),
    .executableTarget(
      name: "FuzzValidate", dependencies: ["FuzzSupport", "HostedContent"], path: "Fuzzing/Sources/FuzzValidate",
      swiftSettings: instrumented, linkerSettings: fuzzerLinked),
    .executableTarget(
      name: "FuzzArchive", dependencies: ["FuzzSupport", "HostedContent", "XAR"], path: "Fuzzing/Sources/FuzzArchive",
      swiftSettings: instrumented, linkerSettings: fuzzerLinked),

    // docs/catalog.md's client example (Foundation and swift-crypto only): built with the package
    // so that the documented code compiles, and run by CatalogClientExampleTests.
    .executableTarget(
      name: "catalog-client-example", dependencies: [.product(name: "Crypto", package: "swift-crypto")],
      path: "Examples/CatalogClient"),

    // Shared by the test targets: temporary folders, random trees, running bsdtar and pkgtool.
    .target(
      name: "TestSupport", dependencies: ["SystemIO", "Zlib", "XAR", "HostedContent"], path: "Tests/TestSupport"),
    .testTarget(name: "XARTests", dependencies: ["SystemIO", "Zlib", "CZlib", "XML", "XAR", "TestSupport"]),
    .testTarget(name: "LZFSETests", dependencies: ["LZFSE", "TestSupport"]),
    .testTarget(name: "AppleArchiveTests", dependencies: ["AppleArchive", "LZFSE", "SystemIO", "TestSupport"]),
    .testTarget(
      name: "HostedContentTests", dependencies: ["SystemIO", "HostedContent", "XAR", "AppleArchive", "TestSupport"],
      exclude: ["Golden", "Schemas"]),
    .testTarget(
      name: "PkgToolCLITests", dependencies: ["SystemIO", "HostedContent", "XAR", "AppleArchive", "TestSupport"],
      exclude: ["Golden"]),
  ],
  swiftLanguageModes: [.v6]
)

// The server: `pkgtool serve` runs `pkgtool-serve`, installed beside `pkgtool` (as git runs
// git-NAME). Only these targets depend on HTTP, X.509 or server packages.
if !coreOnly {
  package.products += [
    .executable(name: "pkgtool-serve", targets: ["pkgtool-serve"]),
    // What another server or a CDN's edge function checks with, without the HTTP server: the
    // purchase proof (TransactionVerifier) and the signed download URLs (URLSigner).
    .library(name: "PurchaseProof", targets: ["PurchaseProof"]),
  ]
  package.dependencies += [
    // Purchase proof: X.509 chains, as Apple's own server library checks them.
    .package(url: "https://github.com/apple/swift-certificates", from: "1.21.0"),
    .package(url: "https://github.com/apple/swift-asn1", from: "1.1.0"),
    // The HTTP server, its lifecycle and its log.
    .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.0"),
    .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.6.0"),
    .package(url: "https://github.com/apple/swift-log", from: "1.6.0"),
    .package(url: "https://github.com/apple/swift-nio", from: "2.81.0"),
    .package(url: "https://github.com/apple/swift-http-types", from: "1.3.0"),
    // The request parts Hummingbird's HTTP/1 pipeline passes (NIOHTTPTypes), for the
    // first-request timeout's channel handler.
    .package(url: "https://github.com/apple/swift-nio-extras", from: "1.34.1"),
    // The state store: SQLite embedded (sqlite-nio builds its own SQLite: no system package),
    // PostgreSQL when several instances share it; both on the server's SwiftNIO. NIOSSL for
    // postgres://...?sslmode=require (postgres-nio builds it anyway).
    .package(url: "https://github.com/vapor/sqlite-nio", from: "1.13.2"),
    .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.2"),
    .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.25.0"),
    // /metrics: swift-prometheus' registry (counters and gauges that are swift-metrics
    // handlers), in Prometheus' text format.
    .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.1.0"),
  ]
  package.targets += [
    // The proofs the gate checks: a purchase (a StoreKit 2 signed transaction, a JWS, and its
    // X.509 chain) and a download grant (a signed URL).
    .target(
      name: "PurchaseProof",
      dependencies: [
        "HostedContent", "SystemIO", "TextCoding", .product(name: "Crypto", package: "swift-crypto"),
        .product(name: "X509", package: "swift-certificates"),
        .product(name: "SwiftASN1", package: "swift-asn1"),
      ],
      swiftSettings: instrumented),
    // Test data with the App Store's shape, never Apple's: a certificate chain (root, WWDR-like
    // intermediate, leaf, Apple's marker extensions) and the transactions and notifications its
    // keys sign. `pkgtool storekit-test` and the server's tests use it; a target of its own so that
    // PurchaseProof, which servers link to check purchases, carries no maker of trusted-looking data.
    .target(
      name: "StoreKitTesting",
      dependencies: [
        "PurchaseProof", "HostedContent", "SystemIO", "TextCoding", .product(name: "Crypto", package: "swift-crypto"),
        .product(name: "X509", package: "swift-certificates"),
        .product(name: "SwiftASN1", package: "swift-asn1"),
      ]),
    // The gate over HTTP: the catalog's packages, the download check, the byte ranges; and its
    // state store (State/: SQLite or PostgreSQL).
    .target(
      name: "ContentServer",
      dependencies: [
        "HostedContent", "PurchaseProof", "SystemIO", .product(name: "Crypto", package: "swift-crypto"),
        .product(name: "Hummingbird", package: "hummingbird"),
        .product(name: "HummingbirdCore", package: "hummingbird"),
        .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
        .product(name: "UnixSignals", package: "swift-service-lifecycle"),
        .product(name: "Logging", package: "swift-log"),
        .product(name: "NIOCore", package: "swift-nio"),
        .product(name: "NIOPosix", package: "swift-nio"),
        .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
        .product(name: "NIOSSL", package: "swift-nio-ssl"),
        .product(name: "SQLiteNIO", package: "sqlite-nio"),
        .product(name: "PostgresNIO", package: "postgres-nio"),
        .product(name: "HTTPTypes", package: "swift-http-types"), "TextCoding",
        .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
        .product(name: "Prometheus", package: "swift-prometheus"),
      ]),
    // The `serve` and `storekit-test` commands: parse, start the gate or write test data, exit as
    // every pkgtool command does.
    .target(
      name: "ServeCLI",
      dependencies: [
        "PkgToolCLI", "HostedContent", "PurchaseProof", "ContentServer", "StoreKitTesting", "SystemIO",
        .product(name: "X509", package: "swift-certificates"),
        .product(name: "ArgumentParser", package: "swift-argument-parser"),
        .product(name: "Logging", package: "swift-log"),
      ]),
    .executableTarget(name: "pkgtool-serve", dependencies: ["ServeCLI"]),
    // bench/serve.sh's in-process measure of the state store (record and lookup times, SQLite or
    // PostgreSQL): a benchmark, not a product; nothing installs it.
    .executableTarget(
      name: "pkgtool-state-bench",
      dependencies: ["ContentServer", .product(name: "Logging", package: "swift-log")],
      path: "bench/StateStoreBench"),
    // libFuzzer target for the purchase proof (JWS, transaction and notification payloads);
    // scripts/fuzz.sh builds it with the server's packages.
    .executableTarget(
      name: "FuzzSignedData",
      dependencies: [
        "FuzzSupport", "PurchaseProof", .product(name: "Crypto", package: "swift-crypto"),
        .product(name: "X509", package: "swift-certificates"),
      ],
      path: "Fuzzing/Sources/FuzzSignedData", swiftSettings: instrumented, linkerSettings: fuzzerLinked),
    .testTarget(
      name: "ContentServerTests",
      dependencies: [
        "SystemIO", "HostedContent", "PurchaseProof", "ContentServer", "StoreKitTesting", "TestSupport", "TextCoding",
        .product(name: "X509", package: "swift-certificates"),
        .product(name: "SwiftASN1", package: "swift-asn1"),
        .product(name: "Crypto", package: "swift-crypto"),
        .product(name: "Logging", package: "swift-log"),
        .product(name: "SQLiteNIO", package: "sqlite-nio"),
      ]),
  ]
}
