import Foundation
import HostedContent
import SystemIO
import TestSupport
import Testing

/// `PackageOpener.open(input, policy)`: what the policy allows decides the reader, in one place.
@Suite struct ReadPolicyTests {
  static func plainXAR(in dir: TemporaryDirectory) throws -> String {
    let path = dir.appending("p.pkg")
    try Data(ExamplePackages.xarBytes(RuleExample.baseNodes, compress: true)).write(to: URL(fileURLWithPath: path))
    return path
  }

  static func opened(_ path: String, _ change: (inout ReadPolicy) -> Void = { _ in }) throws -> EntrySource {
    var policy = ReadPolicy.rules()
    change(&policy)
    return try PackageOpener.open(.path(path), policy)
  }

  /// A plain XAR streams when streaming is allowed, unless digests must come in entry order
  /// (they could not be taken back) or the caller keeps going (a cut-off file is read whole).
  @Test func thePolicyDecidesWhetherAPlainXARStreams() throws {
    let dir = try TemporaryDirectory()
    let path = try Self.plainXAR(in: dir)
    #expect(try Self.opened(path) is StreamingXARPackageSource)
    #expect(try Self.opened(path) { $0.digestsInEntryOrder = true } is XARPackageSource)
    #expect(try Self.opened(path) { $0.keepGoing = true } is XARPackageSource)
    #expect(try Self.opened(path) { $0.streaming = false } is XARPackageSource)
    #expect(try PackageOpener.open(.path(path)) is XARPackageSource)
  }

  /// The decode threads, how far they decode ahead and the caller's light work reach the reader
  /// from the policy; nothing tunes a source after it is open.
  @Test func theDecodeSettingsReachTheReader() throws {
    let dir = try TemporaryDirectory()
    let path = try Self.plainXAR(in: dir)
    let streamed = try #require(
      try Self.opened(path) {
        $0.decodeThreads = 3
        $0.decodeAheadUpTo = ReadPolicy.partsLimitForChecking
        $0.callerWorkIsLight = true
      } as? StreamingXARPackageSource)
    #expect(streamed.decodeThreads == 3)
    #expect(streamed.prefetchLargeFilesUpTo == ReadPolicy.partsLimitForChecking)
    #expect(streamed.decodeOnCallerWhileParsing == (Machine.processorCount <= 2))
    let whole = try #require(
      try Self.opened(path) {
        $0.streaming = false
        $0.decodeAheadUpTo = .max
      } as? XARPackageSource)
    #expect(whole.prefetchLargeFilesUpTo == .max)
    #expect(try #require(try Self.opened(path) as? StreamingXARPackageSource).decodeOnCallerWhileParsing == false)
  }

  /// A file that is not a package throws, or becomes a source the rules judge.
  @Test func aFileThatIsNotAPackageThrowsOrIsJudged() throws {
    let dir = try TemporaryDirectory()
    let path = dir.appending("text.pkg")
    try Data("just some text".utf8).write(to: URL(fileURLWithPath: path))
    #expect(throws: PackageOpener.OpenError.self) { try PackageOpener.open(.path(path)) }
    let source = try PackageOpener.open(.path(path), .inspection())
    #expect(source.isUnreadable && source.format == .unknown)
    #expect(source.packageSize == 14)
    #expect(source.index?.unreadable?.contains("not 'xar!'") == true)
  }

  /// A content project is read as build reads it only when the policy says so.
  @Test func aProjectFolderIsAProjectWhenThePolicySaysSo() throws {
    let dir = try TemporaryDirectory()
    let folder = dir.appending("project")
    _ = try ExamplePackages.writeFolder(RuleExample.baseNodes, at: folder)
    let project = try PackageOpener.open(.path(folder), .inspection())
    #expect(project is ProjectSource && project.index?.isContentProject == true)
    let plain = try PackageOpener.open(.path(folder))
    #expect(plain is DirectorySource && plain.index?.isContentProject != true)
  }

  /// An input already open is read through its descriptor, whatever its path names meanwhile.
  @Test func anOpenInputIsReadThroughItsDescriptor() throws {
    let dir = try TemporaryDirectory()
    let path = try Self.plainXAR(in: dir)
    let file = try FileDescriptor.open(regularFile: path)
    try Data("not a package any more".utf8).write(to: URL(fileURLWithPath: dir.appending("other")))
    try FileManager.default.removeItem(atPath: path)
    try FileManager.default.moveItem(atPath: dir.appending("other"), toPath: path)
    let source = try PackageOpener.open(.file(file), .rules())
    #expect(source.format == .xar)
    #expect(source.index?.checksumStyle == "sha1")
  }
}
