import Foundation
import HostedContent
import TestSupport
import Testing

/// Real archives that other tools wrote (Info-ZIP, 7-Zip, WinZip, macOS, CPython, Go, the xar
/// tool, productbuild), read by the real `pkgtool` binary in place from `../shared/interop`
/// (CI has the folder there too; nothing of it is copied into the repository). The truth is what
/// independent readers (bsdtar, 7-Zip, CPython's zipfile, Go's archive/zip) extract, recorded in
/// `expected.json`. Each archive is its own case, so a failure names the file.
///
/// None of these is a hosted-content package, so the layout rules (layout, content-info,
/// package-form on odd names, no-executable) report errors on them; only `archive-integrity`
/// and what is read matter here.
///
/// A file whose name does not end in `.zip` or `.pkg` (`.xps`, `.jar`, `.zipx`, none) is copied
/// at test time into a temporary folder under its own name plus `.zip` (or `.pkg` for a XAR), so
/// the `package-form` rule, which judges the name, does not stand between the reader and the
/// bytes; the bytes are the same.
@Suite(.serialized) struct InteropTests {
  /// One archive of the `zip` or `pkg` section.
  struct Case: CustomTestStringConvertible, Sendable {
    var section: String
    var name: String
    var kind: String
    /// Regular files and their SHA-256, as the independent readers extract them.
    var files: [String: String]
    /// Another listing the readers accept (a product archive's outer members instead of its payloads).
    var alternative: [String: String]?
    /// Names a reader may list or leave out (an entry some readers take as a folder).
    var optional: [String]
    /// False when the names are in a legacy code page: only the multiset of hashes is compared.
    var names: Bool
    var testDescription: String { "\(section)/\(name) (\(kind))" }
  }

  static let folder = repositoryRoot + "/../shared/interop"
  nonisolated(unsafe) static let expected: [String: Any]? = {
    guard let data = FileManager.default.contents(atPath: folder + "/expected.json") else { return nil }
    return try? JSONSerialization.jsonObject(with: data) as? [String: Any]
  }()
  static var available: Bool { expected != nil }

  static let archives: [Case] = {
    guard let expected else { return [] }
    var cases: [Case] = []
    for section in ["zip", "pkg"] {
      guard let entries = expected[section] as? [String: [String: Any]] else { continue }
      for (name, entry) in entries.sorted(by: { $0.key < $1.key }) {
        cases.append(
          Case(
            section: section, name: name, kind: entry["class"] as? String ?? "no_crash",
            files: entry["files"] as? [String: String] ?? [:], alternative: entry["alt_files"] as? [String: String],
            optional: entry["optional"] as? [String] ?? [], names: entry["names"] as? Bool ?? true))
      }
    }
    return cases
  }()

  static let goodXARs: [String] = {
    ((expected?["xar"] as? [String: Any])?["good"] as? [String: [String]])?.keys.sorted() ?? []
  }()
  static let hostileXARs: [String] = { (expected?["xar"] as? [String: Any])?["hostile"] as? [String] ?? [] }()

  @Test(.enabled(if: available, "../shared/interop is missing")) func theInteropFolderIsThere() {
    #expect(Self.archives.count >= 100)
    #expect(Self.goodXARs.count >= 10)
  }

  @Test(.enabled(if: available, "../shared/interop is missing"), arguments: archives)
  func archiveIsReadAsTheOtherReadersReadIt(_ archive: Case) throws {
    let scratch = try TemporaryDirectory("pkgtool-interop")
    let path = try Self.placed(archive, in: scratch)
    if let reason = Self.deliberateRefusals[archive.name] {
      let validate = try Self.run(["validate", path])
      #expect(validate.status == 1, "\(validate.output)")
      #expect(validate.stdout.contains(reason) && validate.stdout.contains("[archive-integrity]"), "\(validate.output)")
      try Self.expectRead(archive, at: path, in: scratch, refusalAllowed: true)
      return
    }
    switch archive.kind {
    case "read":
      try Self.expectRead(archive, at: path, in: scratch, refusalAllowed: false)
    case "read_or_refuse":
      try Self.expectRead(archive, at: path, in: scratch, refusalAllowed: true)
    case "refuse":
      let validate = try Self.run(["validate", path])
      #expect(validate.status == 1, "\(validate.output)")
      #expect(validate.stdout.contains("[archive-integrity]"), "\(validate.output)")
      Self.expectNamedReason(validate.output)
      try Self.expectNoCrash(["unpack", "--keep-going", path, "-o", scratch.appending("out")])
    default:
      try Self.expectNoCrash(["validate", path])
      try Self.expectNoCrash(["info", "--files", "--json", path])
      try Self.expectNoCrash(["unpack", "--keep-going", path, "-o", scratch.appending("out")])
    }
  }

  @Test(.enabled(if: available, "../shared/interop is missing"), arguments: goodXARs)
  func xarMadeByTheXarToolListsItsPaths(_ name: String) throws {
    let scratch = try TemporaryDirectory("pkgtool-interop")
    let path = scratch.appending((name as NSString).deletingPathExtension + ".pkg")
    try FileManager.default.copyItem(atPath: Self.folder + "/xar/" + name, toPath: path)
    let info = try Self.run(["info", "--files", "--json", path])
    #expect(info.status == 0, "\(info.output)")
    let json = try Self.json(info.stdout)
    let listed = Set((json["files"] as? [[String: Any]] ?? []).compactMap { $0["path"] as? String })
    let wanted = ((Self.expected?["xar"] as? [String: Any])?["good"] as? [String: [String]])?[name] ?? []
    #expect(Set(wanted).isSubset(of: listed), "listed \(listed.sorted())")
    #expect(Self.integrityFindings(json).isEmpty, "\(Self.integrityFindings(json))")
  }

  @Test(.enabled(if: available, "../shared/interop is missing"), arguments: hostileXARs)
  func hostileXARNeitherCrashesNorHangs(_ name: String) throws {
    let scratch = try TemporaryDirectory("pkgtool-interop")
    let path = scratch.appending((name as NSString).deletingPathExtension + ".pkg")
    try FileManager.default.copyItem(atPath: Self.folder + "/xar/" + name, toPath: path)
    try Self.expectNoCrash(["validate", path])
    try Self.expectNoCrash(["info", "--files", "--json", path])
    try Self.expectNoCrash(["unpack", "--keep-going", path, "-o", scratch.appending("out")])
  }

  /// Archives of class `read` that pkgtool refuses on purpose, each for the reason given: a
  /// reader that is not among those that agree on the truth reads them otherwise.
  static let deliberateRefusals: [String: String] = [
    // 'def' and 'jkl' carry the MS-DOS folder attribute without a trailing '/': bsdtar, 7-Zip and
    // Go make folders of them, CPython's zipfile and unzip empty files.
    "la-read_format_zip_msdos.zip": "MS-DOS folder attribute but no trailing '/'",
    // Six bytes of junk between two entries: a streaming reader (Java's ZipInputStream) stops
    // there and never sees the second entry.
    "la-compat_zip_2.zip": "belong to no entry",
    // 4,071 bytes after the last heap byte its TOC references (text: a copy of the TOC's XML,
    // uncompressed): bsdtar lists one file, 7-Zip two.
    "brew-container.xar": "after the last one the table of contents references",
  ]

  // MARK: - Checks

  /// `info --files --json` lists exactly the expected regular files with no archive-integrity
  /// finding, and `unpack --keep-going` writes only those bytes; with `refusalAllowed`, a clean
  /// refusal (exit 1, an archive-integrity finding that names its reason) passes instead.
  static func expectRead(_ archive: Case, at path: String, in scratch: TemporaryDirectory, refusalAllowed: Bool)
    throws
  {
    let info = try run(["info", "--files", "--json", path])
    #expect(info.status == 0 || info.status == 1, "\(info.output)")
    let json = try json(info.stdout)
    let integrity = integrityFindings(json)
    if refusalAllowed, info.status == 1, !integrity.isEmpty {
      for message in integrity { expectNamedReason(message) }
      let validate = try run(["validate", path])
      #expect(validate.status == 1 && validate.stdout.contains("[archive-integrity]"), "\(validate.output)")
      return
    }
    #expect(info.status == 0, "\(info.output)")
    #expect(integrity.isEmpty, "archive-integrity: \(integrity)")
    var listed: [String: String] = [:]
    var hashes: [String] = []
    for file in json["files"] as? [[String: Any]] ?? [] where file["kind"] as? String == "file" {
      let name = file["path"] as? String ?? "?"
      let hash = file["sha256"] as? String ?? "?"
      #expect(listed[name] == nil, "\(name) listed twice")
      listed[name] = hash
      hashes.append(hash)
    }
    for name in archive.optional { listed[name] = nil }
    if archive.names {
      #expect(listed == archive.files || listed == archive.alternative)
    } else {
      #expect(hashes.sorted() == archive.files.values.sorted())
    }

    let out = scratch.appending("out")
    let unpack = try run(["unpack", "--keep-going", path, "-o", out])
    #expect(unpack.status == 0 || unpack.status == 1, "\(unpack.output)")
    let written = try writtenFiles(out)
    var allowed = archive.files.values.sorted()
    for (name, hash) in written.sorted(by: { $0.key < $1.key }) where !archive.optional.contains(name) {
      if archive.names {
        #expect(
          archive.files[name] == hash || archive.alternative?[name] == hash,
          "unpack wrote \(name) (\(hash)), which no other reader extracts")
      } else if let index = allowed.firstIndex(of: hash) {
        allowed.remove(at: index)
      } else {
        Issue.record("unpack wrote \(name) (\(hash)), which no other reader extracts")
      }
    }
  }

  /// A refusal must say why: not libarchive's "Unrecognized archive format" for a real zip.
  static func expectNamedReason(_ message: String) {
    #expect(!message.contains("Unrecognized archive format"), "\(message)")
    #expect(!message.contains("(null)"), "\(message)")
  }

  static func expectNoCrash(_ arguments: [String]) throws {
    let result = try run(arguments)
    #expect(!result.timedOut, "pkgtool \(arguments.joined(separator: " ")) ran past 20 s")
    #expect(result.status == 0 || result.status == 1, "\(arguments): \(result.output)")
    #expect(!result.output.contains("Fatal error"), "\(result.output)")
  }

  static func integrityFindings(_ json: [String: Any]) -> [String] {
    (json["findings"] as? [[String: Any]] ?? []).filter { $0["rule"] as? String == "archive-integrity" }.map {
      $0["message"] as? String ?? ""
    }
  }

  static func json(_ text: String) throws -> [String: Any] {
    guard let object = try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any] else {
      throw TestFailure("not a JSON object: \(text.prefix(200))")
    }
    return object
  }

  /// The archive's path as pkgtool should see it: in place when its name ends in `.zip` or
  /// `.pkg`, else a copy named `NAME.zip` (`NAME.pkg` for a XAR) in `scratch`.
  static func placed(_ archive: Case, in scratch: TemporaryDirectory) throws -> String {
    let original = folder + "/" + archive.section + "/" + archive.name
    if archive.name.hasSuffix(".zip") || archive.name.hasSuffix(".pkg") { return original }
    let head = Array((FileManager.default.contents(atPath: original) ?? Data()).prefix(4))
    let path = scratch.appending(archive.name + (head == Array("xar!".utf8) ? ".pkg" : ".zip"))
    try FileManager.default.copyItem(atPath: original, toPath: path)
    return path
  }

  /// The regular files under `folder` and their SHA-256 (python3's hashlib, an independent hash).
  static func writtenFiles(_ folder: String) throws -> [String: String] {
    guard FileManager.default.fileExists(atPath: folder) else { return [:] }
    let script = """
      import hashlib, json, os, stat, sys
      root = sys.argv[1]; out = {}
      for d, _, names in os.walk(root):
          for n in names:
              p = os.path.join(d, n)
              if stat.S_ISREG(os.lstat(p).st_mode):
                  out[os.path.relpath(p, root)] = hashlib.sha256(open(p, 'rb').read()).hexdigest()
      print(json.dumps(out))
      """
    let result = try runProcess("/usr/bin/python3", ["-c", script, folder])
    guard result.status == 0,
      let map = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: String]
    else { throw TestFailure("hashing \(folder) failed: \(result.stderr)") }
    return map
  }

  struct Outcome {
    var status: Int32
    var stdout: String
    var stderr: String
    var timedOut: Bool
    var output: String { stdout + stderr }
  }

  /// Runs the built `pkgtool`, killing it after 20 s.
  static func run(_ arguments: [String]) throws -> Outcome {
    let scratch = try TemporaryDirectory("pkgtool-proc")
    let outPath = scratch.appending("out")
    let errPath = scratch.appending("err")
    _ = FileManager.default.createFile(atPath: outPath, contents: nil)
    _ = FileManager.default.createFile(atPath: errPath, contents: nil)
    let out = try FileHandle(forWritingTo: URL(fileURLWithPath: outPath))
    let err = try FileHandle(forWritingTo: URL(fileURLWithPath: errPath))
    let process = Process()
    process.executableURL = URL(fileURLWithPath: pkgtoolBinary)
    process.arguments = arguments
    process.standardOutput = out
    process.standardError = err
    process.standardInput = FileHandle.nullDevice
    try process.run()
    let deadline = Date().addingTimeInterval(20)
    var timedOut = false
    while process.isRunning {
      if Date() > deadline {
        process.terminate()
        timedOut = true
        break
      }
      usleep(10_000)
    }
    process.waitUntilExit()
    try out.close()
    try err.close()
    return Outcome(
      status: process.terminationReason == .uncaughtSignal
        ? 128 + process.terminationStatus : process.terminationStatus,
      stdout: String(decoding: try readFile(outPath), as: UTF8.self),
      stderr: String(decoding: try readFile(errPath), as: UTF8.self), timedOut: timedOut)
  }
}

/// Zips whose views (central directory, streaming, libarchive's seekable reader) must give one
/// verdict: bsdtar reading from a pipe is the streaming reader, CPython's zipfile the central one.
@Suite struct ZipViewsTests {
  /// A zip comment may be up to 65,535 bytes; libarchive's seekable reader looks for the end
  /// record in the last 16 KiB only, so it is shown the zip without its comment.
  @Test(arguments: [0, 16 * 1024, 65_535])
  func aZipWithALongCommentReadsLikeWithout(_ length: Int) throws {
    let dir = try TemporaryDirectory()
    let zip = dir.appending("book.zip")
    try ExamplePackages.writeZip(RuleExample.baseNodes, to: zip)
    var bytes = try readFile(zip)
    let end = bytes.count - 22
    bytes[end + 20] = UInt8(length & 0xFF)
    bytes[end + 21] = UInt8(length >> 8)
    bytes += [UInt8](repeating: UInt8(ascii: "c"), count: length)
    try writeFile(zip, bytes)
    let validate = try pkgtool(["validate", zip])
    #expect(validate.status == 0, "\(validate.stdout)\(validate.stderr)")
    let info = try pkgtool(["info", "--files", zip])
    #expect(info.status == 0 && info.stdout.contains("Contents/"), "\(info.stdout)\(info.stderr)")
  }

  /// A stored entry with a data descriptor whose data holds a descriptor and a local header: a
  /// streaming reader that ends the entry at the first matching descriptor reads a hidden entry
  /// CPython's zipfile does not list (bsdtar 3.6.2 happens not to split here); pkgtool refuses it.
  @Test func aStoredEntryWithADescriptorCannotHideAnEntryFromAStreamingReader() throws {
    let dir = try TemporaryDirectory()
    let package = HostilePackage.round2Zip.first { $0.name.contains("hiding an entry") }!
    let zip = dir.appending(package.fileName)
    try package.make(zip)
    let central = try runProcess(
      "/usr/bin/python3", ["-c", "import zipfile,sys; print(zipfile.ZipFile(sys.argv[1]).namelist())", zip])
    #expect(!central.stdout.contains("evil.sh"), "\(central.stdout)")
    let validate = try pkgtool(["validate", zip])
    #expect(validate.status == 1 && validate.stdout.contains("[archive-integrity]"), "\(validate.stdout)")
  }

  /// Every zip pkgtool reads gives bsdtar from a pipe exactly the central directory's entries.
  @Test(.enabled(if: InteropTests.available, "../shared/interop is missing"))
  func everyInteropZipPkgtoolReadsStreamsAsItsCentralDirectorySays() throws {
    var checked = 0
    for archive in InteropTests.archives where archive.section == "zip" {
      let path = InteropTests.folder + "/zip/" + archive.name
      guard try pkgtool(["info", "-q", path]).status == 0 || archive.name.hasSuffix(".xps") else { continue }
      let streaming = try runProcess("/bin/sh", ["-c", "\(bsdtarPath) -tf - < '\(path)'"])
      let central = try runProcess(
        "/usr/bin/python3",
        ["-c", "import zipfile,sys; print('\\n'.join(zipfile.ZipFile(sys.argv[1]).namelist()))", path])
      guard streaming.status == 0, central.status == 0 else { continue }
      #expect(
        streaming.stdout.split(separator: "\n").count == central.stdout.split(separator: "\n").count,
        "\(archive.name): streaming \(streaming.stdout) central \(central.stdout)")
      checked += 1
    }
    #expect(checked >= 40)
  }
}
