import ArgumentParser
import EventStore
import Fork
import Foundation
import MessagesModel
import Presentation
import Projections
import Replay

struct ReplayCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "replay",
        abstract: "Step through a game like a debugger.",
        discussion: """
            On a terminal: an interactive replayer (n/→ next, p/← previous, g jump to a step, \
            t jump to a time, m next message, k next event of a kind, d diff to the previous \
            step, v switch whose view (each device, then auditor), f fork here: branch into a new \
            log and type new steps as `gamelog fork --input` takes them, then replay the branch; \
            q quit). Without a terminal, or with --step or --json, it prints the state \
            at one step (default: the last) for scripts.
            """)

    @OptionGroup var options: GlobalOptions
    @Argument(help: "The game's id (or its conversation's), or a unique prefix.") var game: String
    @OptionGroup var view: ViewOption
    @Option(parsing: .unconditional, help: "Print the state at this step and exit.") var step: Int?
    @Flag(help: "Print JSON and exit.") var json = false

    func run() async throws {
        let (whole, seenAs) = try await view.openWhole(game, options)
        let opened = whole.seen(by: seenAs)
        if step != nil || json || !Terminal.standardOutputIsTerminal || isatty(STDIN_FILENO) != 1 {
            try opened.printState(at: step, as: seenAs, json: json)
            return
        }
        // The interactive replayer switches views itself: it keeps the whole game.
        try InteractiveReplay(opened: whole, game: game, perspective: seenAs).run()
    }
}

/// The full-screen replayer. Draws the state at the current step with a help line
/// that is always visible, and moves on single key presses.
final class InteractiveReplay {
    /// The game on screen: the one asked for, or after `f` the branch forked from it.
    var opened: OpenedGame
    /// Its id as given (a fork names its origin by it).
    var game: String
    var perspective: Perspective
    /// The steps on screen: the whole conversation's, or a device's own.
    var view: Replayer { opened.replayer.seen(by: perspective) }
    var step = 0
    var showDiff = false
    /// The first line of the state shown, when it is taller than the screen.
    var scroll = 0
    var message = ""
    private var saved = termios()

    init(opened: OpenedGame, game: String, perspective: Perspective) {
        self.opened = opened
        self.game = game
        self.perspective = perspective
    }

    /// The key bar: "q quit" first, so a narrow terminal keeps the way out.
    /// 79 columns: whole on an 80-column terminal. (n and p step too.)
    static let help = "q quit  ←→ step  ↑↓ scroll  g go  t time  m msg  k kind  d diff  v view  f fork"

    func run() throws {
        tcgetattr(STDIN_FILENO, &saved)
        var raw = saved
        raw.c_lflag &= ~tcflag_t(ICANON | ECHO)
        // Ctrl-C, a closed terminal or a kill must leave the terminal as it was, as `less`
        // does: the handler puts echo, line editing and the cursor back, then dies of the signal.
        terminalAsItWas = saved
        // A parent that blocks them (some launchers do) would leave them blocked here too.
        var handled = sigset_t()
        sigemptyset(&handled)
        for number in [SIGINT, SIGTERM, SIGHUP, SIGQUIT] {
            signal(number, restoreTerminalAndDie)
            sigaddset(&handled, number)
        }
        pthread_sigmask(SIG_UNBLOCK, &handled, nil)
        tcsetattr(STDIN_FILENO, TCSANOW, &raw)
        defer {
            tcsetattr(STDIN_FILENO, TCSANOW, &saved)
            write("\u{1B}[?25h\n")
            for number in [SIGINT, SIGTERM, SIGHUP, SIGQUIT] { signal(number, SIG_DFL) }
        }
        write("\u{1B}[?25l")
        while true {
            try draw()
            guard let key = readKeyRedrawingOnResize() else { return }
            message = ""
            let replayer = view
            switch key {
            case "q", "\u{04}": return
            case "?", "h": message = Self.help
            case "n", "right", " ": step = min(step + 1, replayer.stepCount)
            case "p", "left": step = max(step - 1, 0)
            case "d": showDiff.toggle()
            case "up": scroll = max(scroll - 1, 0)
            case "down": scroll += 1
            case "pageup": scroll = max(scroll - max(terminalSize().rows - 4, 1), 0)
            case "pagedown": scroll += max(terminalSize().rows - 4, 1)
            case "v":
                // Each device in turn, then the auditor's view of everything.
                let order = opened.replayer.devices.map(Perspective.device) + [.auditor]
                let index = order.firstIndex(of: perspective) ?? order.count - 1
                let before = view
                perspective = order[(index + 1) % order.count]
                // The same moment in the new view's own steps.
                step = before.step(step, in: view)
                message = "now seen as \(perspective)"
            case "m":
                if let next = replayer.nextMessage(after: step) { step = next } else { message = "no later message" }
            case "g":
                // Esc cancels a prompt quietly.
                guard let text = prompt("go to step (0...\(replayer.stepCount)): ") else { break }
                if let n = Int(text), (0...replayer.stepCount).contains(n) {
                    step = n
                } else {
                    message = "'\(text)' is not a step in 0...\(replayer.stepCount)"
                }
            case "t":
                guard let text = prompt("go to time (ISO 8601, e.g. 2026-01-01T00:00:10Z): ") else { break }
                if let time = try? parseTime(text) {
                    if let found = replayer.step(atOrAfter: time) { step = found } else { message = "no event at or after \(text)" }
                } else {
                    message = "'\(text)' is not a time: use ISO 8601 (2026-01-01T00:00:10Z) or microseconds since 1970"
                }
            case "k":
                if let kind = prompt("next event of kind (e.g. callback.didReceive): "), !kind.isEmpty {
                    if let found = replayer.nextStep(after: step, kind: kind) { step = found } else { message = "no later \(kind)" }
                }
            case "f":
                forkHere()
            default:
                message = "unknown key; \(Self.help)"
            }
        }
    }

    /// Branches the game at the current step into a new log, plays the steps typed at
    /// the prompt (as `gamelog fork --input` reads them), then shows the branch.
    private func forkHere() {
        guard let path = prompt("fork at step \(step) into (a new .sqlite file): "), !path.isEmpty else { return }
        guard URL(fileURLWithPath: path).standardizedFileURL != URL(fileURLWithPath: opened.store.location).standardizedFileURL else {
            message = "a fork never writes the log it comes from: name another file"
            return
        }
        do {
            let out = try EventStore(path: path, access: .readWrite)
            let fork = try GameFork(source: opened.replayer, sourceStore: opened.store, game: game, at: view.step(step, in: opened.replayer),
                                    into: out, seed: 1)
            var played = 0, note = ""
            while let line = prompt("\(note)step \(played + 1) of the branch (e.g. B touch cell 4, A send; Enter ends): "),
                  !line.trimmingCharacters(in: .whitespaces).isEmpty {
                if let (device, action) = fork.parse(line) {
                    do {
                        try fork.play(action, on: device)
                        played += 1
                        note = ""
                    } catch {
                        note = "\(error). "
                    }
                } else {
                    note = "'\(line)' is not a step. "
                }
            }
            let branch = fork.conversation.uuid.uuidString.lowercased()
            opened = try OpenedGame(store: out, id: branch)
            game = branch
            step = opened.replayer.stepCount
            perspective = .auditor
            message = "forked into \(path) with \(played) new steps: now replaying the branch \(branch.prefix(8))"
        } catch {
            message = "fork failed: \(error)"
        }
    }

    private func draw() throws {
        let (rows, columns) = terminalSize()
        lastSize = (rows, columns)
        let state = try view.state(at: step, as: perspective)
        var lines = StateText.render(state, step: step, replayer: view, perspective: perspective,
                                     focus: opened.session, origin: opened.origin)
        let room = max(rows - 2, 1)
        var diff: [String] = []
        if showDiff {
            diff.append("changes from step \(max(step - 1, 0)):")
            let changes = try view.diff(from: max(step - 1, 0), to: step, as: perspective)
            diff += changes.isEmpty ? ["  none"] : changes.map { "  " + $0.description }
            // On a short screen the diff asked for keeps its place: the state gives way,
            // down to its header line.
            diff = Array(diff.prefix(max(room - 2, 1)))
        }
        let stateRoom = max(room - diff.count - (diff.isEmpty ? 0 : 1), 1)
        if lines.count > stateRoom {
            // The header stays; the rest scrolls (↑↓, page up and down) and says where it is.
            let header = lines[0]
            let body = Array(lines.dropFirst())
            let visible = max(stateRoom - 2, 1)
            scroll = min(scroll, max(body.count - visible, 0))
            let shown = body[scroll..<min(scroll + visible, body.count)]
            let place = "… lines \(scroll + 1)-\(scroll + shown.count) of \(body.count) (↑↓ scroll)"
            lines = stateRoom > 2 ? [header] + shown + [place] : [header]
        } else {
            scroll = 0
        }
        if !diff.isEmpty { lines += [""] + diff }
        var screen = "\u{1B}[H\u{1B}[2J"
        // What the log says is made safe before it meets the screen's own escape sequences.
        for line in lines { screen += String(SafeText.line(line).prefix(columns)) + "\r\n" }
        screen += "\u{1B}[\(rows - 1);1H" + String(SafeText.line(message).prefix(columns))
        screen += "\u{1B}[\(rows);1H\u{1B}[7m" + String(Self.help.padding(toLength: columns, withPad: " ", startingAt: 0)) + "\u{1B}[0m"
        write(screen)
    }

    private var lastSize = (rows: 0, columns: 0)

    /// Waits for a key, redrawing whenever the terminal changes size meanwhile.
    private func readKeyRedrawingOnResize() -> String? {
        while true {
            var descriptor = pollfd(fd: STDIN_FILENO, events: Int16(POLLIN), revents: 0)
            let ready = poll(&descriptor, 1, 200)
            if ready > 0 { return readKey() }
            if ready < 0 && errno != EINTR { return nil }
            let size = terminalSize()
            if size != lastSize { try? draw() }
        }
    }

    private func readKey() -> String? {
        var byte: UInt8 = 0
        guard read(STDIN_FILENO, &byte, 1) == 1 else { return nil }
        if byte == 0x1B {
            var sequence = [UInt8](repeating: 0, count: 2)
            guard read(STDIN_FILENO, &sequence, 2) == 2 else { return "escape" }
            switch sequence[1] {
            case UInt8(ascii: "C"): return "right"
            case UInt8(ascii: "D"): return "left"
            case UInt8(ascii: "A"): return "up"
            case UInt8(ascii: "B"): return "down"
            case UInt8(ascii: "5"), UInt8(ascii: "6"):
                // Page up and down end with "~".
                var tilde: UInt8 = 0
                _ = read(STDIN_FILENO, &tilde, 1)
                return sequence[1] == UInt8(ascii: "5") ? "pageup" : "pagedown"
            default: return "escape"
            }
        }
        return String(UnicodeScalar(byte))
    }

    /// Reads a line at the bottom of the screen, echoing what is typed.
    private func prompt(_ text: String) -> String? {
        let (rows, _) = terminalSize()
        write("\u{1B}[\(rows - 1);1H\u{1B}[2K\(text)\u{1B}[?25h")
        defer { write("\u{1B}[?25l") }
        var typed = ""
        while true {
            var byte: UInt8 = 0
            guard read(STDIN_FILENO, &byte, 1) == 1 else { return nil }
            switch byte {
            case 0x0A, 0x0D: return typed
            case 0x1B: return nil
            case 0x7F, 0x08:
                if !typed.isEmpty {
                    typed.removeLast()
                    write("\u{08} \u{08}")
                }
            default:
                let character = String(UnicodeScalar(byte))
                typed += character
                write(character)
            }
        }
    }

    private func terminalSize() -> (rows: Int, columns: Int) {
        var size = winsize()
        if ioctl(STDOUT_FILENO, UInt(TIOCGWINSZ), &size) == 0, size.ws_row > 0 {
            return (Int(size.ws_row), Int(size.ws_col))
        }
        return (24, 80)
    }

    private func write(_ text: String) {
        FileHandle.standardOutput.write(Data(text.utf8))
    }
}

/// The terminal's settings before the replayer changed them, for the signal handler.
nonisolated(unsafe) private var terminalAsItWas = termios()

/// Puts the terminal back (settings, cursor) and dies of `number` as if untouched: only
/// async-signal-safe calls.
private func restoreTerminalAndDie(_ number: Int32) {
    tcsetattr(STDIN_FILENO, TCSANOW, &terminalAsItWas)
    let show: [UInt8] = Array("\u{1B}[?25h\n".utf8)
    _ = show.withUnsafeBytes { write(STDOUT_FILENO, $0.baseAddress, $0.count) }
    signal(number, SIG_DFL)
    raise(number)
}
