import Foundation

/// The part of a file a `Range` header asks for (RFC 9110, section 14), for a file of `size`
/// bytes. One range is served as 206; a header this server does not serve a part for (several
/// ranges, another unit, bad syntax) is ignored and the whole file is sent, as the RFC allows.
enum ByteRange: Equatable {
  /// Send the whole file (200).
  case whole
  /// Send these bytes (206).
  case part(ClosedRange<Int64>)
  /// Nothing of the file is in the range (416).
  case unsatisfiable

  init(header: String?, size: Int64) {
    guard let header else {
      self = .whole
      return
    }
    let text = header.trimmingCharacters(in: .whitespaces)
    guard text.lowercased().hasPrefix("bytes="), text.utf8.count <= 200 else {
      self = .whole
      return
    }
    let spec = text.dropFirst(6).trimmingCharacters(in: .whitespaces)
    guard !spec.contains(","), let dash = spec.firstIndex(of: "-") else {
      self = .whole
      return
    }
    let first = spec[..<dash].trimmingCharacters(in: .whitespaces)
    let last = spec[spec.index(after: dash)...].trimmingCharacters(in: .whitespaces)
    func number(_ s: String) -> Int64? {
      guard !s.isEmpty, s.utf8.count <= 18, s.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") })
      else { return nil }
      return Int64(s)
    }
    if first.isEmpty {
      // bytes=-N: the last N bytes.
      guard let count = number(last) else {
        self = .whole
        return
      }
      guard count > 0, size > 0 else {
        self = .unsatisfiable
        return
      }
      self = .part(max(0, size - count)...(size - 1))
      return
    }
    guard let start = number(first) else {
      self = .whole
      return
    }
    var end = size - 1
    if !last.isEmpty {
      guard let value = number(last), value >= start else {
        self = .whole
        return
      }
      end = min(value, size - 1)
    }
    guard start < size else {
      self = .unsatisfiable
      return
    }
    self = .part(start...end)
  }
}
