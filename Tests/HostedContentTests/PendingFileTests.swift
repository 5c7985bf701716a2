import Foundation
import SystemIO
import TestSupport
import Testing

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// ``PendingFile``: made beside its target, registered as it is made, committed whole or
/// discarded, on real files in a temporary folder.
@Suite struct PendingFileTests {
  /// The names in `folder`, sorted.
  static func names(_ folder: TemporaryDirectory) throws -> [String] {
    try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted()
  }

  /// The temporaries in `folder` (names of ``TemporaryName``'s scheme).
  static func temporaries(_ folder: TemporaryDirectory) throws -> [String] {
    try names(folder).filter { TemporaryName.target(of: Substring($0)) != nil }
  }

  @Test func commitRenamesTheFilledTemporaryIntoPlace() throws {
    let folder = try TemporaryDirectory()
    let target = folder.appending("out.bin")
    let pending = try PendingFile(beside: target, mode: 0o644)
    #expect(!FileManager.default.fileExists(atPath: target))
    let temporaries = try Self.temporaries(folder)
    #expect(temporaries.count == 1)
    #expect(temporaries.first?.hasPrefix(TemporaryName.prefix(of: "out.bin")) == true)
    try pending.descriptor.write(Array("whole".utf8))
    try pending.commit(replace: true)
    #expect(try readFile(target) == Array("whole".utf8))
    #expect(try Self.names(folder) == ["out.bin"])
  }

  @Test func commitWithReplaceReplacesAnExistingFile() throws {
    let folder = try TemporaryDirectory()
    let target = folder.appending("out.bin")
    try writeFile(target, "old")
    let pending = try PendingFile(beside: target)
    try pending.descriptor.write(Array("new".utf8))
    try pending.commit(replace: true)
    #expect(try readFile(target) == Array("new".utf8))
    #expect(try Self.names(folder) == ["out.bin"])
  }

  @Test func commitWithoutReplaceRefusesAnExistingFileAndNamesTheTarget() throws {
    let folder = try TemporaryDirectory()
    let target = folder.appending("out.bin")
    try writeFile(target, "old")
    let pending = try PendingFile(beside: target)
    try pending.descriptor.write(Array("new".utf8))
    #expect {
      try pending.commit(replace: false)
    } throws: { error in
      guard let error = error as? SystemError else { return false }
      return error.code == EEXIST && error.path == target
    }
    #expect(try readFile(target) == Array("old".utf8))
    pending.discard()
    #expect(try Self.names(folder) == ["out.bin"])
  }

  @Test func commitWithoutReplaceLinksIntoAFreeName() throws {
    let folder = try TemporaryDirectory()
    let target = folder.appending("key")
    let pending = try PendingFile(beside: target, mode: 0o600)
    try pending.descriptor.write(Array("secret".utf8))
    try pending.commit(replace: false)
    #expect(try readFile(target) == Array("secret".utf8))
    #expect(try Self.names(folder) == ["key"])
  }

  @Test func discardRemovesTheTemporaryAndLeavesTheTargetAlone() throws {
    let folder = try TemporaryDirectory()
    let target = folder.appending("out.bin")
    try writeFile(target, "old")
    let pending = try PendingFile(beside: target)
    try pending.descriptor.write(Array("half".utf8))
    pending.discard()
    pending.discard()  // a second time does nothing
    #expect(try Self.names(folder) == ["out.bin"])
    #expect(try readFile(target) == Array("old".utf8))
  }

  @Test func deinitDiscardsWhatWasNeitherCommittedNorDiscarded() throws {
    let folder = try TemporaryDirectory()
    do {
      let pending = try PendingFile(beside: folder.appending("out.bin"))
      try pending.descriptor.write(Array("half".utf8))
      #expect(try Self.temporaries(folder).count == 1)
    }
    #expect(try Self.names(folder).isEmpty)
  }

  @Test func theTemporaryIsRegisteredAsItIsMadeAndForgottenOnceCommitted() throws {
    let folder = try TemporaryDirectory()
    let pending = try PendingFile(beside: folder.appending("out.bin"))
    let temporary = try #require(try Self.temporaries(folder).first)
    #expect(Interruption.isRegistered(folder.appending(temporary)))
    #expect(pending.descriptor.path == folder.appending(temporary))
    try pending.commit(replace: true)
    #expect(!Interruption.isRegistered(folder.appending(temporary)))
  }

  @Test func throughAFolderHandleTheSameHolds() throws {
    let folder = try TemporaryDirectory()
    let handle = try DirectoryHandle(path: folder.path)
    try PendingFile.write(Array("one".utf8), to: "record.json", in: handle)
    try PendingFile.write(Array("two".utf8), to: "record.json", in: handle)
    #expect(try readFile(folder.appending("record.json")) == Array("two".utf8))
    let pending = try PendingFile(in: handle, for: "other.json")
    let temporary = try #require(try Self.temporaries(folder).first)
    #expect(Interruption.isRegistered(folder.appending(temporary)))
    pending.discard()
    #expect(try Self.names(folder) == ["record.json"])
  }

  @Test func aMissingFolderIsNamedNotTheTemporary() throws {
    let folder = try TemporaryDirectory()
    let target = folder.appending("missing/out.bin")
    #expect {
      _ = try PendingFile(beside: target)
    } throws: { error in
      guard let error = error as? SystemError else { return false }
      return error.path == target && error.code == ENOENT && "\(error)".contains("does not exist")
    }
  }

  @Test func switchSymlinkReplacesALinkInOneStep() throws {
    let folder = try TemporaryDirectory()
    let handle = try DirectoryHandle(path: folder.path)
    try PendingFile.switchSymlink("current", to: "1.0", in: handle)
    try PendingFile.switchSymlink("current", to: "1.1", in: handle)
    #expect(try handle.readLink("current") == "1.1")
    #expect(try Self.names(folder) == ["current"])
  }

  /// A flush started in the background (``FileDescriptor/startFlush()``) is waited for, and a
  /// failure reaches the caller with the file's name: here a pipe, which cannot be flushed.
  @Test func aBackgroundFlushIsWaitedForAndReportsItsFailure() throws {
    let folder = try TemporaryDirectory()
    let target = folder.appending("out.bin")
    let pending = try PendingFile(beside: target)
    try pending.descriptor.write([UInt8](repeating: 7, count: 1 << 20))
    let flush = pending.descriptor.startFlush()
    try pending.descriptor.write(Array("tail".utf8))  // written while it runs
    try flush.wait()
    try flush.wait()  // a second wait returns at once
    try pending.commit(replace: true)
    #expect(try readFile(target).count == (1 << 20) + 4)

    var ends: [Int32] = [0, 0]
    #expect(pipe(&ends) == 0)
    let reading = FileDescriptor(owning: ends[0], path: "the pipe")
    let writing = FileDescriptor(owning: ends[1], path: "the pipe")
    let failing = reading.startFlush()
    #expect {
      try failing.wait()
    } throws: { error in
      guard let error = error as? SystemError else { return false }
      return error.code == EINVAL && error.path == "the pipe"
    }
    withExtendedLifetime(writing) {}
  }
}
