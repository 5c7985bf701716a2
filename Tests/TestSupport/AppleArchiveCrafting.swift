/// Apple Archive bytes made by hand, field by field, for tests that need archives no honest
/// writer makes (the codec's writer refuses them): written from the format's description, not
/// through Sources/AppleArchive.
package enum CraftedAAR {
  /// `value` in `count` bytes, little-endian.
  package static func le(_ value: UInt64, _ count: Int) -> [UInt8] {
    (0..<count).map { UInt8(truncatingIfNeeded: value >> (8 * UInt64($0))) }
  }

  /// One entry: `AA01`, the header size, `TYP1`, `PATP`, `LNKP` (with `link`), `MOD2` (with
  /// `mode`), `DATB` (with `data`), any `extra` fields, then the data.
  package static func entry(
    _ type: Character, _ path: [UInt8], mode: UInt16? = nil, link: [UInt8]? = nil, data: [UInt8]? = nil,
    extra: [[UInt8]] = []
  ) -> [UInt8] {
    var fields: [UInt8] = Array("TYP1".utf8) + [type.asciiValue!]
    fields += Array("PATP".utf8) + le(UInt64(path.count), 2) + path
    if let link { fields += Array("LNKP".utf8) + le(UInt64(link.count), 2) + link }
    if let mode { fields += Array("MOD2".utf8) + le(UInt64(mode), 2) }
    for field in extra { fields += field }
    if let data { fields += Array("DATB".utf8) + le(UInt64(data.count), 4) }
    return Array("AA01".utf8) + le(UInt64(6 + fields.count), 2) + fields + (data ?? [])
  }

  /// As ``entry(_:_:mode:link:data:extra:)``, with a text path.
  package static func entry(
    _ type: Character, _ path: String, mode: UInt16? = nil, link: String? = nil, data: [UInt8]? = nil,
    extra: [[UInt8]] = []
  ) -> [UInt8] {
    entry(type, Array(path.utf8), mode: mode, link: link.map { Array($0.utf8) }, data: data, extra: extra)
  }

  /// A file entry holding `text`.
  package static func file(_ path: String, _ text: String, mode: UInt16 = 0o644) -> [UInt8] {
    entry("F", path, mode: mode, data: Array(text.utf8))
  }

  /// A folder entry.
  package static func folder(_ path: String, mode: UInt16 = 0o755) -> [UInt8] { entry("D", path, mode: mode) }

  /// A valid asset pack's Manifest.json selecting `Contents`.
  package static let manifest = file(
    "Manifest.json",
    #"{"assetPackID": "levels", "downloadPolicy": {"onDemand": {}}, "fileSelectors": [{"directory": "Contents"}], "platforms": ["iOS"]}"#
  )

  /// An archive: the root entry Apple's writers put first, a valid manifest, `Contents/`, then
  /// `entries`.
  package static func pack(_ entries: [[UInt8]], root: Bool = true) -> [UInt8] {
    (root ? folder("") : []) + manifest + folder("Contents") + entries.flatMap { $0 }
  }

  /// `raw` (an archive's entries) as one `pbz` block of `letter`, whose bytes are `compressed`.
  package static func framed(_ raw: [UInt8], letter: Character, compressed: [UInt8], blockSize: UInt64 = 4 << 20)
    -> [UInt8]
  {
    func be(_ value: UInt64) -> [UInt8] {
      (0..<8).reversed().map { UInt8(truncatingIfNeeded: value >> (8 * UInt64($0))) }
    }
    return Array("pbz".utf8) + [letter.asciiValue!] + be(blockSize) + be(UInt64(raw.count))
      + be(UInt64(compressed.count))
      + compressed
  }

  /// `raw` in `pbzz` blocks of `blockSize` bytes, each stored (raw size = compressed size): a
  /// file's data then runs across block boundaries wherever the sizes put it.
  package static func storedBlocks(_ raw: [UInt8], blockSize: Int) -> [UInt8] {
    func be(_ value: Int) -> [UInt8] { (0..<8).reversed().map { UInt8(truncatingIfNeeded: value >> (8 * $0)) } }
    var out = Array("pbzz".utf8) + be(blockSize)
    var start = 0
    while start < raw.count {
      let chunk = raw[start..<min(raw.count, start + blockSize)]
      out += be(chunk.count) + be(chunk.count) + chunk
      start += blockSize
    }
    return out
  }
}
