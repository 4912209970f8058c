/// Suggestions for a mistyped name: the candidates closest to it by edit distance.
enum Spelling {
    /// The candidates at the smallest edit distance from `word`, if it is at most a third
    /// of the word's length (at least 1): `gmaes` finds `games`, `callbak` finds `callback`.
    static func nearest(_ word: String, in candidates: [String]) -> [String] {
        let word = word.lowercased()
        let limit = max(1, word.count / 3)
        let scored = Set(candidates).map { ($0, distance(word, $0.lowercased())) }.filter { $0.1 <= limit }
        guard let best = scored.map(\.1).min() else { return [] }
        return scored.filter { $0.1 == best }.map(\.0).sorted()
    }

    /// Levenshtein distance, with a swap of two neighbours counting as one edit.
    static func distance(_ a: String, _ b: String) -> Int {
        let a = Array(a), b = Array(b)
        guard !a.isEmpty else { return b.count }
        guard !b.isEmpty else { return a.count }
        var table = [[Int]](repeating: [Int](repeating: 0, count: b.count + 1), count: a.count + 1)
        for i in 0...a.count { table[i][0] = i }
        for j in 0...b.count { table[0][j] = j }
        for i in 1...a.count {
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                table[i][j] = min(table[i - 1][j] + 1, table[i][j - 1] + 1, table[i - 1][j - 1] + cost)
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] { table[i][j] = min(table[i][j], table[i - 2][j - 2] + 1) }
            }
        }
        return table[a.count][b.count]
    }
}

/// `n` and the noun, singular for one: "1 warning", "2 warnings".
func counted(_ n: Int, _ singular: String, _ plural: String? = nil) -> String {
    "\(n) \(n == 1 ? singular : plural ?? singular + "s")"
}
