import Foundation

/// Writing to the terminal: plain lines, progress bars, boards.
enum Terminal {
    static func standardError(_ line: String) {
        FileHandle.standardError.write(Data((line + "\n").utf8))
    }

    static var standardErrorIsTerminal: Bool { isatty(STDERR_FILENO) == 1 }
    static var standardOutputIsTerminal: Bool { isatty(STDOUT_FILENO) == 1 }

    /// A 3 x 3 board as text. Cells are names like `hit`, `x`, `empty`.
    static func board(_ cells: [String], indent: String = "    ") -> [String] {
        guard cells.count == 9 else { return [] }
        let symbol: [String: String] = [
            "empty": " ", "ship": "■", "hit": "X", "miss": "o", "x": "X", "o": "O",
        ]
        var lines: [String] = []
        for row in 0..<3 {
            let marks = (0..<3).map { symbol[cells[row * 3 + $0]] ?? "?" }
            lines.append(indent + " " + marks.joined(separator: " │ "))
            if row < 2 { lines.append(indent + "───┼───┼───") }
        }
        return lines
    }
}

/// A progress bar on standard error, drawn only when it is a terminal.
final class ProgressBar {
    private let total: Int
    private let label: String
    private let enabled: Bool
    private var lastDraw = Date.distantPast
    private let started = Date()

    init(total: Int, label: String) {
        self.total = total
        self.label = label
        enabled = Terminal.standardErrorIsTerminal
    }

    func update(_ done: Int, detail: String = "") {
        guard enabled, Date().timeIntervalSince(lastDraw) > 0.1 || done == total else { return }
        lastDraw = Date()
        let width = 30
        let fraction = total > 0 ? Double(done) / Double(total) : 1
        let filled = Int(fraction * Double(width))
        let bar = String(repeating: "█", count: filled) + String(repeating: "░", count: width - filled)
        let elapsed = Date().timeIntervalSince(started)
        FileHandle.standardError.write(Data("\r\(bar) \(done)/\(total) \(label) \(detail) \(String(format: "%.1fs", elapsed))\u{1B}[K".utf8))
    }

    func finish() {
        guard enabled else { return }
        FileHandle.standardError.write(Data("\n".utf8))
    }
}
