/// Levenshtein distance, for "did you mean".
func editDistance(_ a: String, _ b: String) -> Int {
  let x = Array(a)
  let y = Array(b)
  if x.isEmpty { return y.count }
  if y.isEmpty { return x.count }
  var previous = Array(0...y.count)
  for i in 1...x.count {
    var current = [i] + Array(repeating: 0, count: y.count)
    for j in 1...y.count {
      current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (x[i - 1] == y[j - 1] ? 0 : 1))
    }
    previous = current
  }
  return previous[y.count]
}
