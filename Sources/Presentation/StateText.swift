import EventStore
import Foundation
import GameKit
import MessagesModel
import Projections
import RecordedEvents
import Replay

/// Text and JSON renderings of a state at a step, shared by the command line and the
/// web viewer, so both say the same.
public enum StateText {
    public static func render(_ state: ConversationState, step: Int, replayer: Replayer, perspective: Perspective,
                       focus: SessionID?, origin: ForkOrigin? = nil) -> [String] {
        var lines: [String] = []
        var header = "step \(step)/\(replayer.stepCount)"
        if var event = replayer.event(at: step) {
            if perspective.sees(event) {
                if let seen = replayer.viewedEvent(at: step, as: perspective) { event.event = seen }
                header += "  position \(event.position)  \(Timestamp(microsecondsSince1970: event.recordedAt))"
                header += "  \(describe(event, state))"
            } else {
                header += "  device \(event.device?.name ?? "?") acted"
            }
        } else {
            header += "  (before the first event)"
        }
        lines.append(header)
        lines.append(seenAs(perspective, replayer: replayer, state: state))
        if state.plugin == nil, !state.kind.isEmpty {
            lines.append("no game shown: kind \(state.kind) is not registered in this gamelog, so its board, moves and winner are unknown here (a gamelog built with GamelogCLI and that game shows them)")
        }
        if let origin {
            let head = Hex.string(Array(origin.sourceHead.prefix(6)))
            let here = step <= origin.branchStep ? "re-enacted" : "the branch"
            lines.append("fork of \(origin.sourceGame) at its step \(origin.sourceStep) (source head \(head)…): steps 1...\(origin.branchStep) "
                         + "re-enact it, the branch begins at step \(origin.branchStep + 1); this step is \(here)")
        }
        for game in state.orderedGames where focus == nil || game.session == focus {
            lines.append("")
            let title = state.plugin?.title ?? game.kind
            lines.append("game \(game.session.uuid.uuidString.prefix(8).lowercased()) · \(title) · \(game.status.words)")
            if let plugin = state.plugin {
                let picture = plugin.picture(of: game.board)
                lines += BoardPicture.grid(picture.cells, columns: picture.columns)
                lines += picture.lines.map { "    " + $0 }
            }
            lines.append("    " + GameCatalog.result(game, in: state))
        }
        let columns = state.plugin?.boardColumns ?? 0
        for view in state.orderedDevices {
            lines.append("")
            let name = view.ownerName ?? view.device.name
            let ui = view.isActive
                ? "active · \(view.style) · \(([view.screen.name] + view.screen.labels).joined(separator: " · "))"
                : "inactive"
            lines.append("device \(view.device) (\(name)): \(ui)")
            if view.isActive, let alert = view.screen.alert { lines.append("  alert: \(alert.title) \(alert.message)") }
            if view.isActive { lines += BoardPicture.grid(view.screen.cells, columns: columns, indent: "  ") }
            for line in view.transcript {
                let who = line.bubble.isOutgoing ? "me" : view.resolve("$\(line.bubble.sender.uuid.uuidString)")
                switch line.bubble.content {
                case .summary: lines.append("  (\(line.shown))")
                default: lines.append("  \(who): \(line.shown)\(line.bubble.isOutgoing ? "  ✓ sent" : "  ↓ received")")
                }
            }
            if let staged = view.staged {
                lines.append("  input field: \(view.resolve(staged.plainText))  (pending)")
            }
        }
        return lines
    }

    /// Whose view this is, and which recordings it stands on.
    public static func seenAs(_ perspective: Perspective, replayer: Replayer, state: ConversationState) -> String {
        switch perspective {
        case .auditor:
            // Whose recordings the whole log lacks, not only this step.
            let missing = (try? replayer.state(at: replayer.stepCount).missingRecordings) ?? state.missingRecordings
            return "seen as auditor: every event of recordings from \(replayer.devices.map(\.name).joined(separator: ", "))"
                + (missing.isEmpty ? "" : "; no recording from \(missing.joined(separator: ", "))'s device")
        case .device(let device):
            return "seen as device \(device): only what it showed or received"
        }
    }

    public static func describe(_ event: ReplayEvent, _ state: ConversationState) -> String {
        let device = event.device?.name ?? "?"
        var text = "\(device): \(event.event.type)"
        switch event.event {
        case .input(let action, _): text += " (\(action))"
        case .callback(let record, _):
            if let style = record.style { text += " (to \(style))" }
            if let message = record.message { text += " (\(message.caption ?? "message"))" }
            if let offered = record.availableSize, let taken = record.contentSize { text += " (\(offered) offered, \(taken) taken)" }
        case .action(let record, _):
            if let error = record.error { text += " → error \(error.code.rawValue)" }
        default: break
        }
        return text
    }

    public static func json(_ state: ConversationState, step: Int, replayer: Replayer, perspective: Perspective) throws -> String {
        var object = state.presentation()
        object["step"] = .integer(Int64(step))
        object["stepCount"] = .integer(Int64(replayer.stepCount))
        object["perspective"] = .string(perspective.description)
        object["missingRecordings"] = .array(state.missingRecordings.map { .string($0) })
        if let event = replayer.event(at: step) {
            let device = JSONValue.string(event.device?.name ?? "")
            if perspective.sees(event) {
                object["event"] = .object(["position": .integer(event.position), "type": .string(event.event.type), "device": device,
                                           "recordedAt": .string(Timestamp(microsecondsSince1970: event.recordedAt).description)])
            } else {
                object["event"] = .object(["device": device, "hidden": .bool(true)])
            }
        }
        return JSONStyle.text(.object(object))
    }
}
