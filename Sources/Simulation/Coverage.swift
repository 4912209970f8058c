import Foundation
import MessagesHost
import MessagesModel
import Projections
import RecordedEvents

/// How often each behaviour of the Messages model and the games occurred in a run, as
/// the recorded events show it (and, for the network, as the host counted it: what the
/// network does leaves no event of its own).
///
/// ``rows`` lists every behaviour ../shared/spec/MESSAGES.md and GAMES.md describe that a
/// log can show, so a behaviour a run never produced is a row with 0, not a missing line.
public struct Coverage: Sendable, Equatable {
    public private(set) var counts: [String: Int] = [:]

    public init() {}

    /// Every row the table prints, in order.
    public static let rows: [String] = {
        var rows: [String] = []
        let styles: [PresentationStyle] = [.compact, .expanded, .transcript]
        for callback in Callback.allCases {
            for style in styles where !(style == .transcript && Callback.suppressedInTranscript.contains(callback)) {
                rows.append("callback \(callback.rawValue) in \(style.description)")
            }
        }
        rows.append("callback contentSizeThatFits in transcript")
        for (from, to) in [(PresentationStyle.compact, PresentationStyle.expanded), (.expanded, .compact),
                           (.transcript, .expanded), (.expanded, .transcript)] {
            rows.append("transition \(from.description) -> \(to.description)")
        }
        for action in ["insert", "insertText", "insertSticker", "insertAttachment", "send", "sendText", "sendSticker",
                       "sendAttachment", "requestPresentationStyle", "dismiss"] {
            rows.append("action \(action): accepted")
            rows.append("action \(action): refused")
        }
        for code in MessagesErrorCode.allCases { rows.append("error \(code.rawValue) \(code.name)") }
        for action: UserAction in [.openConversation(ConversationID(UUID())), .leaveMessages, .quitMessages, .openExtension,
                                   .tapMessage(MessageID(UUID())), .viewLiveMessage(MessageID(UUID())), .touch(.button("")), .expand,
                                   .collapse, .tapSend, .deleteStaged, .dismissExtension] {
            rows.append("user \(action.kindName)")
        }
        rows += ["user switches the selection to another message", "user re-taps the selected message",
                 "message sent", "message arrived", "message sent with an error",
                 "message url with no scheme", "message url http or https", "message url data",
                 "message with summaryText", "message with shouldExpire", "message with accessibilityLabel"]
        for event in NetworkEvent.allCases { rows.append("network \(event.rawValue)") }
        return rows
    }()

    mutating func add(_ row: String, _ n: Int = 1) {
        guard n > 0 else { return }
        counts[row, default: 0] += n
    }

    /// Counts one recorded event; `before` is its device's view just before it.
    mutating func count(_ event: RecordedEvent, before: DeviceView?) {
        switch event {
        case .callback(let record, let context):
            add("callback \(record.callback.rawValue) in \(context.style.description)")
            if record.callback == .willTransition, let to = record.style {
                add("transition \(context.style.description) -> \(to.description)")
            }
        case .action(let record, _):
            let name = record.action.name
            add("action \(name): \(record.error == nil ? "accepted" : "refused")")
            if let error = record.error { add("error \(error.code.rawValue) \(error.code.name)") }
            if case .insert(let message) = record.action { countFields(message) }
            if case .send(let message) = record.action { countFields(message) }
        case .input(let action, _):
            add("user \(action.kindName)")
            if case .tapMessage(let id) = action, let before, before.isActive {
                if before.selectedMessage == id { add("user re-taps the selected message") }
                else if before.selectedMessage != nil { add("user switches the selection to another message") }
            }
        case .transcript(.sent(let item), _):
            add("message sent")
            if case .message(let message) = item, let error = message.error {
                add("message sent with an error")
                add("error \(error.code.rawValue) \(error.code.name)")
            }
        case .transcript(.arrived, _):
            add("message arrived")
        default:
            break
        }
    }

    private mutating func countFields(_ message: Message) {
        if let url = message.url {
            let lower = url.lowercased()
            if lower.hasPrefix("http://") || lower.hasPrefix("https://") { add("message url http or https") }
            else if lower.hasPrefix("data:") { add("message url data") }
            else { add("message url with no scheme") }
        }
        if message.summaryText != nil { add("message with summaryText") }
        if message.shouldExpire { add("message with shouldExpire") }
        if message.accessibilityLabel != nil { add("message with accessibilityLabel") }
    }

    /// Counts what the network did in a game.
    mutating func count(network events: [NetworkEvent: Int]) {
        for (event, n) in events { add("network \(event.rawValue)", n) }
    }

    /// Counts a game's outcome as the log shows it.
    mutating func count(game kind: String, status: GameStatus) {
        add("game \(kind) \(status.rawValue)")
    }

    /// Every row with its count: the spec's rows first (0 where nothing happened), then
    /// any other row the run produced (the games' outcomes, say).
    public var table: [(row: String, count: Int)] {
        let known = Set(Self.rows)
        return Self.rows.map { ($0, counts[$0] ?? 0) }
            + counts.keys.filter { !known.contains($0) }.sorted().map { ($0, counts[$0]!) }
    }

}
