import Foundation
import HostedContent
import XAR
import Zlib

/// Builds rule examples (and other test trees) into real packages and folders, without the
/// normalization `pkgtool build` applies, so hostile shapes survive.
package enum ExamplePackages {
  /// A XAR holding exactly `nodes` (in order), with correct checksums. Parents missing from
  /// `nodes` appear as folders. A path ending in `#2` is stored a second time under its name.
  package static func xarBytes(_ nodes: [RuleExample.Node], compress: Bool = false) -> [UInt8] {
    final class Element {
      var name: String
      var xml = ""
      var children: [Element] = []
      init(_ name: String) { self.name = name }
    }
    let root = Element("")
    var heap: [UInt8] = []
    var ids: [String: Int] = [:]
    var nextID = 1
    func find(_ parent: Element, _ name: String, create: Bool) -> Element {
      if let existing = parent.children.last(where: { $0.name == name }), !create { return existing }
      let element = Element(name)
      parent.children.append(element)
      return element
    }
    for node in nodes {
      var path = node.path
      var duplicate = false
      if path.hasSuffix("#2") {
        path.removeLast(2)
        duplicate = true
      }
      let parts = path.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
      var parent = root
      var prefix = ""
      for part in parts.dropLast() {
        prefix = prefix.isEmpty ? part : prefix + "/" + part
        let existing = parent.children.last { $0.name == part }
        if let existing {
          parent = existing
        } else {
          let dir = find(parent, part, create: true)
          dir.xml = "<file id=\"\(nextID)\"><name>\(escape(part))</name><type>directory</type><mode>0755</mode>"
          ids[prefix] = nextID
          nextID += 1
          parent = dir
        }
      }
      let name = parts.last!
      let element = find(parent, name, create: true)
      _ = duplicate
      let id = nextID
      nextID += 1
      if ids[path] == nil { ids[path] = id }
      var xml = "<file id=\"\(id)\">" + nameElement(name)
      let mode = "<mode>\(String(node.mode, radix: 8))</mode>"
      switch node.content {
      case .directory: xml += "<type>directory</type>\(mode)"
      case .symlink(let target): xml += "<type>symlink</type><link type=\"file\">\(escape(target))</link>\(mode)"
      case .fifo: xml += "<type>fifo</type>\(mode)"
      case .characterDevice: xml += "<type>character special</type>\(mode)"
      case .hardLink(let target):
        xml += "<type link=\"\(ids[target] ?? 999_999)\">hardlink</type>\(mode)"
      case .file(let bytes):
        xml += "<type>file</type>\(mode)"
        if !bytes.isEmpty {
          let stored = compress ? ZlibDeflater.compress(bytes, level: 6) : bytes
          xml += CraftedXAR.dataElement(
            stored: stored, plain: bytes, offset: 20 + heap.count,
            encoding: compress ? "application/x-gzip" : "application/octet-stream")
          heap += stored
        }
      }
      element.xml = xml
    }
    func render(_ element: Element) -> String {
      element.xml + element.children.map(render).joined() + "</file>"
    }
    return CraftedXAR(toc: CraftedXAR.document(root.children.map(render).joined(separator: "\n")), heap: heap).bytes()
  }

  /// `<name>`, base64-encoded when the name holds characters XML cannot carry.
  static func nameElement(_ name: String) -> String {
    if name.unicodeScalars.contains(where: {
      $0.value < 0x20 || $0.value == 0x7F || $0.value == 0xFFFE || $0.value == 0xFFFF
    }) {
      return "<name enctype=\"base64\">\(Data(name.utf8).base64EncodedString())</name>"
    }
    return "<name>\(escape(name))</name>"
  }

  /// Escapes text for the TOC; control characters go in as character references where XML
  /// allows them and are otherwise dropped by the caller's choice of names.
  static func escape(_ s: String) -> String {
    var out = ""
    for c in s.unicodeScalars {
      switch c {
      case "&": out += "&amp;"
      case "<": out += "&lt;"
      case ">": out += "&gt;"
      default:
        if c.value < 0x20 && c != "\t" && c != "\n" {
          out += "&#x\(String(c.value, radix: 16));"
        } else {
          out.unicodeScalars.append(c)
        }
      }
    }
    return out
  }

  /// A tar holding exactly `nodes`, written by Python's tarfile (an independent writer that
  /// allows any name, hard links anywhere, devices and FIFOs).
  package static func writeTar(_ nodes: [RuleExample.Node], to path: String) throws {
    var members: [[String: Any]] = []
    for node in nodes {
      var m: [String: Any] = [
        "name": node.path.hasSuffix("#2") ? String(node.path.dropLast(2)) : node.path, "mode": Int(node.mode),
      ]
      switch node.content {
      case .file(let bytes):
        m["type"] = "file"
        m["data"] = Data(bytes).base64EncodedString()
      case .directory: m["type"] = "dir"
      case .symlink(let t):
        m["type"] = "symlink"
        m["target"] = t
      case .hardLink(let t):
        m["type"] = "hardlink"
        m["target"] = t
      case .fifo: m["type"] = "fifo"
      case .characterDevice: m["type"] = "chr"
      }
      members.append(m)
    }
    let json = String(decoding: try JSONSerialization.data(withJSONObject: members), as: UTF8.self)
    let script = """
      import tarfile, json, base64, io, sys
      members = json.loads(sys.stdin.read())
      with tarfile.open(\(pythonString(path)), "w", format=tarfile.GNU_FORMAT) as tar:
          for m in members:
              info = tarfile.TarInfo(m["name"]); info.mode = m["mode"]; info.mtime = 946684800
              data = None
              t = m["type"]
              if t == "file":
                  data = base64.b64decode(m["data"]); info.size = len(data)
              elif t == "dir": info.type = tarfile.DIRTYPE
              elif t == "symlink": info.type = tarfile.SYMTYPE; info.linkname = m["target"]
              elif t == "hardlink": info.type = tarfile.LNKTYPE; info.linkname = m["target"]
              elif t == "fifo": info.type = tarfile.FIFOTYPE
              elif t == "chr": info.type = tarfile.CHRTYPE; info.devmajor = 1; info.devminor = 3
              tar.addfile(info, io.BytesIO(data) if data is not None else None)
      """
    let result = try runProcess("/usr/bin/env", ["python3", "-c", script], stdin: json)
    guard result.status == 0 else { throw TestFailure("python tarfile failed: \(result.stderr)") }
  }

  /// A zip holding exactly `nodes`, written by Python's zipfile (deflated, Unix modes kept).
  package static func writeZip(_ nodes: [RuleExample.Node], to path: String) throws {
    var members: [[String: Any]] = []
    for node in nodes {
      var m: [String: Any] = [
        "name": node.path.hasSuffix("#2") ? String(node.path.dropLast(2)) : node.path, "mode": Int(node.mode),
      ]
      switch node.content {
      case .file(let bytes):
        m["type"] = "file"
        m["data"] = Data(bytes).base64EncodedString()
      case .directory: m["type"] = "dir"
      case .symlink(let t):
        m["type"] = "symlink"
        m["data"] = Data(t.utf8).base64EncodedString()
      default: continue
      }
      members.append(m)
    }
    let json = String(decoding: try JSONSerialization.data(withJSONObject: members), as: UTF8.self)
    let script = """
      import zipfile, json, base64, sys, warnings
      warnings.simplefilter("ignore")
      members = json.loads(sys.stdin.read())
      with zipfile.ZipFile(\(pythonString(path)), "w", zipfile.ZIP_DEFLATED) as z:
          for m in members:
              name = m["name"] + ("/" if m["type"] == "dir" else "")
              info = zipfile.ZipInfo(name, date_time=(2000, 1, 1, 0, 0, 0))
              kind = {"file": 0o100000, "dir": 0o040000, "symlink": 0o120000}[m["type"]]
              info.external_attr = (kind | m["mode"]) << 16
              info.create_system = 3
              if m["type"] == "dir": info.external_attr |= 0x10
              info.compress_type = zipfile.ZIP_DEFLATED
              z.writestr(info, base64.b64decode(m.get("data", "")))
      """
    let result = try runProcess("/usr/bin/env", ["python3", "-c", script], stdin: json)
    guard result.status == 0 else { throw TestFailure("python zipfile failed: \(result.stderr)") }
  }

  static func pythonString(_ s: String) -> String {
    "\"" + s.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
  }

  /// Creates `nodes` under `root` on disk. Returns false if a node cannot exist in a folder.
  @discardableResult
  package static func writeFolder(_ nodes: [RuleExample.Node], at root: String) throws -> Bool {
    try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
    for node in nodes {
      if node.path.hasSuffix("#2") { return false }
      let full = root + "/" + node.path
      let parent = (full as NSString).deletingLastPathComponent
      try FileManager.default.createDirectory(atPath: parent, withIntermediateDirectories: true)
      switch node.content {
      case .directory:
        if mkdir(full, 0o755) != 0 && errno != EEXIST { throw TestFailure("mkdir \(full)") }
        chmod(full, mode_t(node.mode))
      case .file(let bytes):
        try Data(bytes).write(to: URL(fileURLWithPath: full))
        chmod(full, mode_t(node.mode))
      case .symlink(let target):
        guard symlink(target, full) == 0 else { throw TestFailure("symlink \(full)") }
      case .hardLink(let target):
        guard link(root + "/" + target, full) == 0 else { return false }
      case .fifo:
        guard mkfifo(full, 0o644) == 0 else { return false }
      case .characterDevice:
        guard mknod(full, S_IFCHR | 0o644, makedev(1, 3)) == 0 else { return false }
      }
    }
    return true
  }

  /// Writes `example` as a package file in `directory` and returns its path (damage applied).
  package static func package(for example: RuleExample, in directory: String) throws -> String {
    let path = directory + "/" + example.packageFileName
    switch example.packageFormat {
    case .tar: try writeTar(example.nodes, to: path)
    case .zip: try writeZip(example.nodes, to: path)
    default: try Data(xarBytes(example.nodes)).write(to: URL(fileURLWithPath: path))
    }
    if let damage = example.damage {
      var bytes = try readFile(path)
      switch damage {
      case .truncate(let keeping): bytes = Array(bytes.prefix(keeping))
      case .flipLastByte: bytes[bytes.count - 1] ^= 0xFF
      case .replace(let replacement): bytes = replacement
      }
      try Data(bytes).write(to: URL(fileURLWithPath: path))
    }
    return path
  }

  /// A folder holding a previous version, for `--against`.
  package static func previousVersion(product: String, version: String, in directory: String) throws -> String {
    let path = directory + "/previous"
    try writeFolder(
      [
        .file(
          ContentInfo.fileName,
          String(
            decoding: ContentInfo(productIdentifier: product, contentVersion: ContentVersion(version)!).encoded(),
            as: UTF8.self)),
        .directory("Contents"),
      ], at: path)
    return path
  }
}

/// Linux's encoding of a device number (for the small numbers tests use).
func makedev(_ major: UInt32, _ minor: UInt32) -> dev_t { dev_t((major << 8) | minor) }

/// The project `Book` (com.example.book) in `dir`, built as `book 1.0.pkg` and, one chapter and
/// one `bump` later, `book 1.1.pkg`: two versions of a product, for the catalog tests.
package func makeTwoBookPackages(in dir: TemporaryDirectory) throws {
  func run(_ arguments: [String]) throws {
    let result = try pkgtool(arguments, in: dir.path)
    guard result.status == 0 else {
      throw SetupFailure("pkgtool \(arguments.joined(separator: " ")) exited \(result.status): \(result.stderr)")
    }
  }
  try run(["init", "Book", "--product-id", "com.example.book", "-q"])
  try writeFile(dir.appending("Book/Contents/chapter1.txt"), "Once upon a time.\n")
  try run(["build", "Book", "-q", "-o", "book 1.0.pkg"])
  try run(["bump", "Book", "-q"])
  try writeFile(dir.appending("Book/Contents/chapter2.txt"), "The end.\n")
  try run(["build", "Book", "-q", "-o", "book 1.1.pkg"])
}

/// A test's setup that could not be made.
package struct SetupFailure: Error, CustomStringConvertible {
  package var description: String
  package init(_ description: String) { self.description = description }
}
