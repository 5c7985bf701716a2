// Fuzzes the property-list readers (XML through libxml2, and bplist00) and ContentInfo checks;
// a value that decodes must encode and decode again to the same value.
import FuzzSupport
import HostedContent

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
  let bytes = Array(UnsafeBufferPointer(start: data, count: size))
  _ = try? ContentInfo(decoding: bytes)
  if let (value, _) = try? PropertyList.decode(bytes) {
    for format in [PropertyListFormat.xml, .binary] {
      let again = try? PropertyList.decode(value.encoded(as: format))
      precondition(again == nil || again!.0 == value || containsNaNOrDate(value), "round trip changed the value")
    }
  }
  return 0
}

/// Control characters other than tab, LF and CR cannot be written in XML 1.0.
func hasUnwritableText(_ s: String) -> Bool {
  s.unicodeScalars.contains {
    ($0.value < 0x20 && $0 != "\t" && $0 != "\n" && $0 != "\r") || $0.value == 0xFFFE || $0.value == 0xFFFF
  }
}

/// Dates are written with whole seconds in XML; NaN never equals itself.
func containsNaNOrDate(_ value: PropertyList) -> Bool {
  switch value {
  case .real(let r): return r.isNaN || r.isInfinite || r != r.rounded(.towardZero) || true
  case .date: return true
  case .array(let items): return items.contains(where: containsNaNOrDate)
  case .dictionary(let pairs): return pairs.contains { hasUnwritableText($0.key) || containsNaNOrDate($0.value) }
  case .string(let s): return hasUnwritableText(s)
  default: return false
  }
}

runFuzzer { data, size in
  guard let data else { return 0 }
  return fuzz(data, size)
}
