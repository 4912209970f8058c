import ArgumentParser
import EventStore
import Foundation
import MessagesModel
import Projections
import Replay

/// Opens the log read-only and finds a game (or conversation) by id prefix.
struct OpenedGame {
    let store: EventStore
    let replayer: Replayer
    let session: SessionID?

    init(options: GlobalOptions, id: String) throws {
        store = try options.openForReading()
        let index = try GameIndex(store: store)
        let (conversation, session) = try index.resolve(id)
        self.session = session
        replayer = try Replayer(store: store, conversation: conversation, streams: index.streams[conversation] ?? [])
    }

    func checkStep(_ step: Int) throws {
        guard (0...replayer.stepCount).contains(step) else {
            throw ValidationError("step \(step) is outside 0...\(replayer.stepCount) for this game.")
        }
    }
}

/// Text rendering of states, events and diffs.
enum StateText {
    static func render(_ state: ConversationState, replayer: Replayer, perspective: Perspective, focus: SessionID?) -> [String] {
        var lines: [String] = []
        let step = state.step
        var header = "step \(step)/\(replayer.stepCount)"
        if let event = replayer.event(at: step) {
            header += "  position \(event.position)  \(Timestamp(microsecondsSince1970: event.recordedAt))"
            header += "  \(describe(event, state))"
        } else {
            header += "  (before the first event)"
        }
        lines.append(header)
        lines.append("seen as \(perspective)")
        for game in state.orderedGames where focus == nil || game.session == focus {
            lines.append("")
            lines.append("game \(game.session.uuid.uuidString.prefix(8).lowercased()) · \(game.kind) · \(game.status.rawValue)")
            if let board = game.battleship {
                let cells = (0..<9).map { cell -> String in
                    board.hits.contains(cell) ? "hit" : board.misses.contains(cell) ? "miss" : board.ships.contains(cell) ? "ship" : "empty"
                }
                lines += Terminal.board(cells)
                lines.append("    hits \(board.hits.count)/2 · lives \(board.livesLeft)/3 · placer \(board.placer?.name ?? "?") · guesser \(board.guesser?.name ?? "?")")
            }
            if let board = game.tictactoe {
                lines += Terminal.board(board.cells.map { $0 == 1 ? "x" : $0 == -1 ? "o" : "empty" })
                let status = board.winner == 1 ? "X won" : board.winner == -1 ? "O won" : board.isDraw ? "draw" : "\(board.toMove == 1 ? "X" : "O") to move"
                lines.append("    \(status)")
            }
        }
        for view in state.orderedDevices {
            lines.append("")
            let name = view.localParticipant.flatMap { view.names[$0.uuid.uuidString] } ?? view.device.name
            let ui = view.isActive
                ? "active · \(view.style) · \(([view.screen.name] + view.screen.labels).joined(separator: " · "))"
                : "inactive"
            lines.append("device \(view.device) (\(name)): \(ui)")
            if view.isActive, let alert = view.screen.alert { lines.append("  alert: \(alert.title) \(alert.message)") }
            if view.isActive, view.screen.cells.count == 9 { lines += Terminal.board(view.screen.cells, indent: "  ") }
            for line in view.transcript {
                let who = line.bubble.isOutgoing ? "me" : view.resolve("$\(line.bubble.sender.uuid.uuidString)")
                switch line.bubble.content {
                case .summary: lines.append("  (\(line.shown))")
                default: lines.append("  \(who): \(line.shown)\(line.bubble.isOutgoing ? "  ✓ sent" : "  ↓ received")")
                }
            }
            if let staged = view.staged {
                let text: String
                switch staged {
                case .message(let m): text = view.resolve(m.caption ?? "message")
                case .text(let t): text = t
                case .sticker(let s): text = "sticker \(s.localizedDescription)"
                case .attachment(let url, let n): text = "attachment \(n ?? url)"
                }
                lines.append("  input field: \(text)  (pending)")
            }
        }
        return lines
    }

    static func describe(_ event: ReplayEvent, _ state: ConversationState) -> String {
        let device = event.event.context?.device.name ?? state.deviceOfStream[event.stream.uuidString]?.name ?? "?"
        var text = "\(device): \(event.event.type)"
        switch event.event {
        case .input(let action, _): text += " (\(action))"
        case .callback(let record, _):
            if let style = record.style { text += " (to \(style))" }
            if let message = record.message { text += " (\(message.caption ?? "message"))" }
        case .action(let record, _):
            if let error = record.error { text += " → error \(error.code.rawValue)" }
        default: break
        }
        return text
    }

    static func json(_ state: ConversationState, replayer: Replayer, perspective: Perspective) throws -> String {
        var object = state.seen(as: perspective).presentation()
        object["stepCount"] = replayer.stepCount
        object["perspective"] = perspective.description
        if let event = replayer.event(at: state.step) {
            object["event"] = ["position": event.position, "type": event.event.type,
                               "recordedAt": Timestamp(microsecondsSince1970: event.recordedAt).description]
        }
        return String(decoding: try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]), as: UTF8.self)
    }
}
