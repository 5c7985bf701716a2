import Foundation
import HostedContent
import SystemIO
import XAR

extension HostilePackage {
  /// Broken downloads: truncated packages and damaged tails, as `unpack --keep-going` meets them.
  /// Each is refused whole (archive-integrity) by validate and by a plain unpack.
  static let round3Recover: [HostilePackage] = [
    cutXAR("XAR cut inside its header") { _ in 20 },
    cutXAR("XAR cut inside its table of contents") { reader in 28 + reader.header.tocCompressedLength / 2 },
    cutXAR("XAR cut inside the checksum of its table of contents") { reader in reader.header.heapStart + 10 },
    cutXAR("XAR cut at an entry boundary") { reader in
      // Right after ContentInfo.plist's data: the plist is whole, the content file is not.
      let plist = reader.entries.first { $0.path == ContentInfo.fileName }!.data!
      return reader.header.heapStart + plist.offset + plist.length
    },
    cutXAR("XAR cut inside a file's data") { reader in
      let file = reader.entries.first { $0.path == "Contents/data.txt" }!.data!
      return reader.header.heapStart + file.offset + file.length / 2
    },
    cutXAR("XAR cut one byte short") { reader in reader.fileSize - 1 },
    HostilePackage("XAR whose last file's heap bytes are damaged", "archive-integrity") { path in
      var bytes = ExamplePackages.xarBytes(Self.broken, compress: true)
      for i in (bytes.count - 300)..<bytes.count { bytes[i] ^= 0x55 }
      try Data(bytes).write(to: URL(fileURLWithPath: path))
    },
    HostilePackage("zip cut before its central directory", "archive-integrity") { path in
      try ExamplePackages.writeZip(Self.broken, to: path)
      try Self.truncate(path) { $0 / 2 }
    }.named("hostile.zip"),
    HostilePackage("zip whose end record is cut off", "archive-integrity") { path in
      try ExamplePackages.writeZip(Self.broken, to: path)
      try Self.truncate(path) { $0 - 10 }
    }.named("hostile.zip"),
    HostilePackage("tar cut inside a file", "archive-integrity") { path in
      try ExamplePackages.writeTar(Self.broken, to: path)
      try Self.truncate(path) { $0 / 2 }
    },
    HostilePackage("flat package cut inside its Payload", "archive-integrity") { path in
      try flat("flat package to cut", "none").make(path)
      let reader = try XARReader(path: path)
      let payload = reader.entries.first { $0.path.hasSuffix("/Payload") }!.data!
      try Self.truncate(path) { _ in reader.header.heapStart + payload.offset + payload.length / 2 }
    },
  ]

  /// A package of several files, big enough that a cut lands in the middle of one.
  static let broken: [Node] =
    base + [
      .file("Contents/data.txt", String(repeating: "payload ", count: 4000)),
      .file("Contents/more/a.txt", String(repeating: "alpha ", count: 900)),
      .file("Contents/more/b.txt", String(repeating: "beta ", count: 900)),
    ]

  /// A plain XAR of ``broken`` cut at the offset `at` computes from its whole reader.
  static func cutXAR(_ name: String, at cut: @escaping @Sendable (XARReader) -> UInt64) -> HostilePackage {
    HostilePackage(name, "archive-integrity") { path in
      try Data(ExamplePackages.xarBytes(broken, compress: true)).write(to: URL(fileURLWithPath: path))
      let offset = cut(try XARReader(path: path))
      try truncate(path) { _ in offset }
    }
  }

  /// Cuts the file at `path` to the length `length` computes from its size.
  static func truncate(_ path: String, to length: (UInt64) -> UInt64) throws {
    let size = UInt64(try FileManager.default.attributesOfItem(atPath: path)[.size] as! Int)
    let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
    try handle.truncate(atOffset: length(size))
    try handle.close()
  }
}
