/// Seconds since 1970-01-01T00:00:00Z, written in the TOC as `YYYY-MM-DDTHH:MM:SSZ`.
///
/// Conversions are done by arithmetic on the proleptic Gregorian calendar, with no locale and no
/// time zone, so they are the same on every machine.
package struct XARTimestamp: Equatable, Hashable, Comparable, Sendable, CustomStringConvertible {
  package var secondsSinceEpoch: Int64

  package init(secondsSinceEpoch: Int64) { self.secondsSinceEpoch = secondsSinceEpoch }

  package static func < (a: XARTimestamp, b: XARTimestamp) -> Bool {
    a.secondsSinceEpoch < b.secondsSinceEpoch
  }

  /// The ISO 8601 form used in the TOC, in UTC.
  package var iso8601: String {
    let days = secondsSinceEpoch.floorDiv(86_400)
    let secondOfDay = secondsSinceEpoch - days * 86_400
    let (y, m, d) = civilDate(fromDays: days)
    func pad(_ v: Int64, _ width: Int) -> String {
      let s = String(v)
      return String(repeating: "0", count: max(0, width - s.count)) + s
    }
    return "\(pad(y, 4))-\(pad(m, 2))-\(pad(d, 2))T\(pad(secondOfDay / 3600, 2)):"
      + "\(pad(secondOfDay / 60 % 60, 2)):\(pad(secondOfDay % 60, 2))Z"
  }

  package var description: String { iso8601 }

  /// Parses `YYYY-MM-DDTHH:MM:SS` with an optional fraction and an optional `Z`; nil otherwise.
  package init?(iso8601 text: String) {
    let bytes = Array(text.utf8)
    guard bytes.count >= 19, bytes[4] == UInt8(ascii: "-"), bytes[7] == UInt8(ascii: "-"),
      bytes[10] == UInt8(ascii: "T"), bytes[13] == UInt8(ascii: ":"),
      bytes[16] == UInt8(ascii: ":")
    else { return nil }
    func number(_ range: Range<Int>) -> Int64? {
      var value: Int64 = 0
      for i in range {
        guard bytes[i] >= 48, bytes[i] <= 57 else { return nil }
        value = value * 10 + Int64(bytes[i] - 48)
      }
      return value
    }
    guard let y = number(0..<4), let mo = number(5..<7), let d = number(8..<10),
      let h = number(11..<13), let mi = number(14..<16), let s = number(17..<19),
      (1...12).contains(mo), (1...31).contains(d), h < 24, mi < 60, s < 61
    else { return nil }
    var rest = bytes[19...]
    if rest.first == UInt8(ascii: ".") {
      rest = rest.dropFirst().drop { $0 >= 48 && $0 <= 57 }
    }
    if rest.first == UInt8(ascii: "Z") { rest = rest.dropFirst() }
    guard rest.isEmpty else { return nil }
    secondsSinceEpoch = daysFromCivil(y, mo, d) * 86_400 + h * 3600 + mi * 60 + s
  }
}

extension Int64 {
  fileprivate func floorDiv(_ d: Int64) -> Int64 {
    let q = self / d
    return (self % d != 0 && (self < 0) != (d < 0)) ? q - 1 : q
  }
}

// Howard Hinnant's days-from-civil algorithms.
private func daysFromCivil(_ year: Int64, _ month: Int64, _ day: Int64) -> Int64 {
  let y = month <= 2 ? year - 1 : year
  let era = (y >= 0 ? y : y - 399) / 400
  let yoe = y - era * 400
  let doy = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
  let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
  return era * 146_097 + doe - 719_468
}

private func civilDate(fromDays days: Int64) -> (Int64, Int64, Int64) {
  let z = days + 719_468
  let era = (z >= 0 ? z : z - 146_096) / 146_097
  let doe = z - era * 146_097
  let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365
  let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
  let mp = (5 * doy + 2) / 153
  let d = doy - (153 * mp + 2) / 5 + 1
  let m = mp < 10 ? mp + 3 : mp - 9
  return (yoe + era * 400 + (m <= 2 ? 1 : 0), m, d)
}
