import AppleArchive
import Foundation
import SystemIO
import Testing

/// The two payloads Apple's own code wrote (Shortcuts exports, unwrapped from their AEA
/// containers), read in place from ../shared/interop/aar.
@Suite struct RealArchiveTests {
  /// The data's SHA-256 from interop/expected.json (bsdtar-free truth: aarpy and libNeoAppleArchive).
  @Test(
    .enabled(if: interopAvailable, "../shared/interop is missing"),
    arguments: [
      ("shortcut-contact-signed.aar", "462ab1f339eee25b0667c278fec736e09a31921935236cf49fad0303049fa78b", true),
      ("shortcut-iCloud-signed.aar", "7cf07c40a8af14edceef29e03ab551eaef38efc5b37550aaa62d1eca5a0c8836", false),
    ])
  func readsAppleWrittenPayload(name: String, sha256: String, hasFlagsAndCreation: Bool) throws {
    let path = interopFolder + "/" + name
    let reader = try AppleArchiveReader(file: try FileDescriptor.open(reading: path))
    #expect(reader.compression == .none)
    let entries = try readEverything(reader, chunk: 4_000)
    try #require(entries.count == 2)

    let root = entries[0].entry
    #expect(root.kind == .directory)
    #expect(root.path.isEmpty)
    #expect(root.mode == 0o755)
    #expect(root.dataSize == nil)
    #expect(root.payloadOffset == 0)
    let extra = hasFlagsAndCreation ? ["FLG1", "CTMT"] : []
    #expect(root.fieldKeys == ["TYP1", "PATP", "MOD2"] + extra + ["MTMT"])

    let wflow = entries[1].entry
    let data = try #require(entries[1].data)
    #expect(wflow.kind == .file)
    #expect(wflow.path == Array("Shortcut.wflow".utf8))
    #expect(wflow.mode == 0o644)
    #expect(wflow.dataSize == 145_199)
    #expect(wflow.fieldKeys == ["TYP1", "PATP", "MOD2"] + extra + ["MTMT", "DATB"])
    #expect(wflow.hashes.isEmpty)
    #expect(wflow.modificationTime != nil)
    #expect(data.count == 145_199)
    #expect(data.starts(with: Array("bplist00".utf8)))

    // Python's hashlib over the same bytes of the file: where the data starts is the header's end.
    let start = wflow.payloadOffset + UInt64(wflow.headerSize)
    let script =
      "import hashlib,sys; d=open(sys.argv[1],'rb').read(); print(hashlib.sha256(d[\(start):\(start + 145_199)]).hexdigest())"
    let python = try run("/usr/bin/env", ["python3", "-c", script, path])
    #expect(python.status == 0, "\(python.stderr)")
    let theirs = String(decoding: python.stdout, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    let ours = AppleArchiveError.hex(Array(SHA256Digest.of(data)))
    #expect(ours == theirs)
    #expect(ours == sha256)
    #expect(start + 145_199 == UInt64(try FileManager.default.attributesOfItem(atPath: path)[.size] as! Int))
  }

  /// The `.shortcut` originals are AEA containers: refused by name, never a crash.
  @Test(
    .enabled(if: interopAvailable, "../shared/interop is missing"),
    arguments: ["shortcut-contact-signed.shortcut", "shortcut-iCloud-signed.shortcut"])
  func refusesAEAContainer(name: String) throws {
    let file = try FileDescriptor.open(reading: interopFolder + "/" + name)
    let error = archiveError { _ = try AppleArchiveReader(file: file) }
    #expect(error?.reason == .encrypted)
    #expect(error?.description.contains("Apple Encrypted Archive") == true)
  }

  /// Our independent Python reader lists the Apple payloads as our reader does.
  @Test(
    .enabled(if: interopAvailable, "../shared/interop is missing"),
    arguments: ["shortcut-contact-signed.aar", "shortcut-iCloud-signed.aar"])
  func oracleAgreesOnApplePayload(name: String) throws {
    let path = interopFolder + "/" + name
    let ours = try OracleListing.ours(path)
    let theirs = try OracleListing.oracle(path)
    #expect(ours == theirs)
  }
}
