import TextCoding
import XAR

/// Writes XML property lists in Apple's layout: the standard prolog and DOCTYPE, tabs for
/// indentation, `<true/>`/`<false/>`, dates in UTC, data in base64.
enum XMLPropertyListWriter {
  static func encode(_ value: PropertyList) -> [UInt8] {
    var out = """
      <?xml version="1.0" encoding="UTF-8"?>
      <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
      <plist version="1.0">

      """
    write(value, indent: 0, into: &out)
    out += "</plist>\n"
    return Array(out.utf8)
  }

  private static func write(_ value: PropertyList, indent: Int, into out: inout String) {
    let tabs = String(repeating: "\t", count: indent)
    switch value {
    case .string(let s): out += "\(tabs)<string>\(escape(s))</string>\n"
    case .integer(let i): out += "\(tabs)<integer>\(i)</integer>\n"
    case .unsignedInteger(let u): out += "\(tabs)<integer>\(u)</integer>\n"
    case .real(let r):
      let text = r == r.rounded() && abs(r) < 1e15 ? String(Int64(r)) : String(r)
      out += "\(tabs)<real>\(text)</real>\n"
    case .boolean(let b): out += "\(tabs)<\(b ? "true" : "false")/>\n"
    case .date(let d):
      let seconds = Int64(exactly: (d + appleReferenceOffset).rounded(.down)) ?? 0
      let stamp = XARTimestamp(secondsSinceEpoch: seconds)
      out += "\(tabs)<date>\(stamp.iso8601)</date>\n"
    case .data(let bytes):
      out += "\(tabs)<data>\n"
      let encoded = Array(Base64.encode(bytes))
      var i = 0
      while i < encoded.count {
        out += tabs + String(encoded[i..<min(i + 68, encoded.count)]) + "\n"
        i += 68
      }
      out += "\(tabs)</data>\n"
    case .array(let items):
      if items.isEmpty {
        out += "\(tabs)<array/>\n"
        return
      }
      out += "\(tabs)<array>\n"
      for item in items { write(item, indent: indent + 1, into: &out) }
      out += "\(tabs)</array>\n"
    case .dictionary(let pairs):
      if pairs.isEmpty {
        out += "\(tabs)<dict/>\n"
        return
      }
      out += "\(tabs)<dict>\n"
      for (key, item) in pairs {
        out += "\(tabs)\t<key>\(escape(key))</key>\n"
        write(item, indent: indent + 1, into: &out)
      }
      out += "\(tabs)</dict>\n"
    }
  }

  private static func escape(_ s: String) -> String { escapeXML(s) }

}
