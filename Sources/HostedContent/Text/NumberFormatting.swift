import Foundation

/// `1234567` → `1,234,567`.
package func groupedDigits(_ value: UInt64) -> String {
  let digits = Array(String(value))
  var out = ""
  for (i, d) in digits.enumerated() {
    if i > 0 && (digits.count - i) % 3 == 0 { out += "," }
    out.append(d)
  }
  return out
}

/// A byte count for people: `12,345 bytes (12.3 kB)`.
package func describeBytes(_ value: UInt64) -> String {
  let units = ["kB", "MB", "GB", "TB"]
  var scaled = Double(value)
  var unit = -1
  while scaled >= 1000 && unit < units.count - 1 {
    scaled /= 1000
    unit += 1
  }
  let plain = "\(groupedDigits(value)) bytes"
  return unit < 0 ? plain : plain + " (" + String(format: "%.1f", scaled) + " " + units[unit] + ")"
}
