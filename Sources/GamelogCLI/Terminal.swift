import EventStore
import Foundation

/// Everything the commands print, made safe first: a log's names, captions and URLs
/// were chosen by whoever wrote it, and a terminal obeys the escape sequences in them
/// (retitling the window, erasing lines, faking output). Control characters become
/// U+FFFD; line feeds stay. JSON output is unchanged by this: its encoders already
/// write control characters as escapes.
func print(_ items: Any..., separator: String = " ", terminator: String = "\n") {
    Swift.print(SafeText.lines(items.map { "\($0)" }.joined(separator: separator)), terminator: terminator)
}

/// Writing to the terminal: plain lines, progress bars, boards.
enum Terminal {
    static func standardError(_ line: String) {
        FileHandle.standardError.write(Data((SafeText.lines(line) + "\n").utf8))
    }

    static var standardErrorIsTerminal: Bool { isatty(STDERR_FILENO) == 1 }
    static var standardOutputIsTerminal: Bool { isatty(STDOUT_FILENO) == 1 }
}

/// A progress bar on standard error, drawn only when it is a terminal.
/// Sendable so a task can report while the command waits for it: one reporter at a time.
final class ProgressBar: @unchecked Sendable {
    private var total: Int
    private var drawn = false
    private let label: String
    private let enabled: Bool
    private var lastDraw = Date.distantPast
    private let started = Date()

    init(total: Int, label: String) {
        self.total = total
        self.label = label
        enabled = Terminal.standardErrorIsTerminal
    }

    /// Also sets the total, for work whose size is learnt as it starts.
    func update(_ done: Int, total: Int) {
        self.total = total
        guard total > 0 else { return }
        update(done)
    }

    func update(_ done: Int, detail: String = "") {
        guard enabled, Date().timeIntervalSince(lastDraw) > 0.1 || done == total else { return }
        lastDraw = Date()
        drawn = true
        let width = 30
        let fraction = total > 0 ? Double(done) / Double(total) : 1
        let filled = Int(fraction * Double(width))
        let bar = String(repeating: "█", count: filled) + String(repeating: "░", count: width - filled)
        let elapsed = Date().timeIntervalSince(started)
        FileHandle.standardError.write(Data("\r\(bar) \(done)/\(total) \(label) \(detail) \(String(format: "%.1fs", elapsed))\u{1B}[K".utf8))
    }

    func finish() {
        guard enabled, drawn || total > 0 else { return }
        FileHandle.standardError.write(Data("\n".utf8))
    }
}
