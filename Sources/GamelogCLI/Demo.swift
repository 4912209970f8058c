import ArgumentParser
import EventStore
import BattleshipGame
import Foundation
import Projections
import GameKit
import Games
import MessagesHost
import MessagesModel
import Recorder
import Simulation
import TicTacToeGame

struct Demo: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo",
        abstract: "Play one Battleship and one Tic-tac-toe game between two devices, record them, and tell the story.")

    @OptionGroup var options: GlobalOptions

    @Flag(help: "Pin recorded times (start 2026-01-01, 0.25 s a step); with --insecure-test-keys two runs write identical logs.")
    var fixedClock = false
    @OptionGroup var signing: SigningOptions

    func run() throws {
        let store = try options.openForWriting()
        let before = try store.count().events
        let clock: any RecordingClock = fixedClock ? FixedClock() : SystemClock()
        // Ids come from the seed; with the system clock each run is a new recording.
        let seed: UInt64 = fixedClock ? 2026 : UInt64(Date().timeIntervalSince1970 * 1_000_000)
        let signer = try signing.signer(logPath: store.path)
        let recorder = Recorder(store: store, clock: clock, seed: seed, keys: signer.key)
        let simulator = Simulator(recorder: recorder, games: GamelogCLI.games, seed: seed)
        simulator.flushEveryStep = true
        simulator.didStep = narrate

        print("Battleship: Alice (device A) hides two ships; Bob (device B) hunts them.\n")
        let battleship = try simulator.play(BattleshipPlugin().kind, script: BattleshipPlugin.demoScript)
        summarize(battleship)

        print("\nTic-tac-toe: Alice (device A) plays X, Bob (device B) plays O.\n")
        let tictactoe = try simulator.play(TicTacToePlugin().kind, script: TicTacToePlugin.demoScript)
        summarize(tictactoe)

        try signer.check()
        let after = try store.count().events
        let report = try store.verifyIntegrity()
        print("""

            Recorded \(after - before) events in \(store.path) (\(after) in all); hash chain \(report.isSound ? "intact" : "BROKEN"); \(signer.summary).
            Next: `gamelog log --db \(store.path)` lists them; `gamelog verify --db \(store.path)` checks them.
            """)
    }

    private func narrate(_ device: DeviceID, _ step: PlayerStep, _ host: MessagesHost) {
        let owner = device == "A" ? "Alice" : "Bob"
        var line = "\(device) \(owner.rightPad(5)) › \(describe(step, device, host))"
        if let active = host.activeInstance(on: device) {
            let screen = active.extension.screen
            line += "   [\(active.style) · \(screen.name)\(screen.labels.isEmpty ? "" : " · " + screen.labels.joined(separator: " · "))]"
            print(line)
            if let alert = screen.alert { print("      alert: \(alert.title) \(alert.message)") }
            if case .act(.touch(.cell)) = step {
                let columns = GamelogCLI.games.plugin(for: active.info.kind)?.boardColumns ?? 0
                BoardPicture.grid(screen.cells, columns: columns).forEach { print($0) }
            }
        } else {
            print(line)
        }
        if case .act(.tapSend) = step, let conversation = host.currentConversation(of: device),
           let sent = host.latestMessage(on: device, in: conversation) {
            print("      sent: \"\(host.display(sent.caption ?? "", on: device))\"  url: \(sent.url ?? "none")")
        }
        if case .deliver = step, let delivery = host.lastDelivery, case .message = delivery.item,
           let message = host.latestMessage(on: device, in: delivery.conversation) {
            print("      arrived: \"\(host.display(message.caption ?? "", on: device))\"")
        }
    }

    private func describe(_ step: PlayerStep, _ device: DeviceID, _ host: MessagesHost) -> String {
        switch step {
        case .act(.openConversation): return "opens the conversation"
        case .deliver: return "receives a message"
        default: return step.description
        }
    }

    private func summarize(_ report: GameReport) {
        print("\n  Result: \(report.outcome)")
        if !report.board.isEmpty {
            print("  Final board:")
            BoardPicture.grid(report.board, columns: report.boardColumns).forEach { print($0) }
        }
        for (device, lines) in report.transcripts.sorted(by: { $0.key < $1.key }) {
            print("  Transcript on \(device):")
            lines.forEach { print("    \($0)") }
        }
        // One number per thing counted: the conversation's events are `state`'s steps; a
        // game's are what `games` counts and `log --game` lists (the conversation's other
        // events are another game's, or no game's, such as opening the conversation).
        let games = report.games.filter { $0.status != .abandoned }
        let ofGames = games.map { "\($0.events) of them game \($0.session.uuid.uuidString.prefix(8).lowercased())'s" }
        print("  \(report.steps.count) player actions; \(report.eventsWritten) events recorded in the conversation (the steps of `gamelog state`)"
              + (ofGames.isEmpty ? "." : ", \(ofGames.joined(separator: ", ")) (`gamelog log --game`)."))
    }
}
