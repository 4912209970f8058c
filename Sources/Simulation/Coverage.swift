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
    ///
    /// No row stands for what the spec rules out: transition callbacks and select,
    /// receive and send callbacks in transcript style, `contentSizeThatFits` outside it,
    /// or a transition to or from transcript style (it cannot be requested, and a live
    /// bubble gets no transition callbacks), nor a selection in expanded style (it covers
    /// the transcript). `requestPresentationStyle` and `dismiss`
    /// have no completion: what they did shows in the callbacks that follow.
    public static let rows: [String] = {
        var rows: [String] = []
        let styles: [PresentationStyle] = [.compact, .expanded, .transcript]
        for callback in Callback.allCases {
            // The expanded extension covers the transcript: a message can be selected from compact only.
            let selects = callback == .willSelect || callback == .didSelect
            for style in styles where !(selects && style == .expanded) && !(style == .transcript && Callback.suppressedInTranscript.contains(callback))
                && !(style != .transcript && Callback.transcriptOnly.contains(callback)) {
                rows.append("callback \(callback.rawValue) in \(style.description)")
            }
        }
        rows += ["transition compact -> expanded", "transition expanded -> compact"]
        for action in ["insert", "insertText", "insertSticker", "insertAttachment", "send", "sendText", "sendSticker",
                       "sendAttachment"] {
            rows.append("action \(action): accepted")
            rows.append("action \(action): refused")
        }
        rows += ["action requestPresentationStyle in transcript style (ignored)", "action dismiss in transcript style (does nothing)",
                 "action insert in transcript style: refused",
                 "action requestPresentationStyle transcript (it cannot be requested: ignored)"]
        rows += ["action insert(_:localizedChangeDescription:)", "action insert replacing a staged item",
                 "action requestPresentationStyle",
                 "action requestPresentationStyle ignored (already in that style or not active)", "action dismiss"]
        for code in MessagesErrorCode.allCases { rows.append("error \(code.rawValue) \(code.name)") }
        for action: UserAction in [.openConversation(ConversationID(UUID())), .leaveMessages, .quitMessages, .openExtension,
                                   .tapMessage(MessageID(UUID())), .viewLiveMessage(MessageID(UUID())), .touch(.button("")), .expand,
                                   .collapse, .tapSend, .deleteStaged, .dismissExtension, .tryAgain(MessageID(UUID()))] {
            rows.append("user \(action.kindName)")
        }
        rows += ["user switches the selection to another message", "user re-taps the selected message",
                 "conversation of 2 participants", "conversation of 3 participants", "conversation of 4 participants",
                 "message sent", "message arrived", "message sent with an error",
                 "message replaces the earlier one of its session (a summary line stays)",
                 "message pending in the input field when deleted (isPending)", "message no longer pending once sent (isPending false)",
                 "selected message read by its own extension",
                 "message url with no scheme", "message url with another scheme (refused)", "message url http or https", "message url data",
                 "message url over 5,000 characters",
                 "message with summaryText", "message with shouldExpire", "message with accessibilityLabel",
                 "message with a live layout"]
        for field in ["caption", "subcaption", "trailingCaption", "trailingSubcaption", "image", "mediaFileURL",
                      "imageTitle", "imageSubtitle"] {
            rows.append("message layout \(field)")
        }
        for event in NetworkEvent.allCases { rows.append("network \(event.rawValue)") }
        return rows
    }()

    mutating func add(_ row: String, _ n: Int = 1) {
        guard n > 0 else { return }
        counts[row, default: 0] += n
    }

    /// Counts one recorded event; `before` is its device's view just before it, `kind`
    /// the conversation's extension.
    mutating func count(_ event: RecordedEvent, before: DeviceView?, kind: String = "") {
        switch event {
        case .screen(let screen, _):
            // GAMES.md's screens and alerts, by the names the games give them.
            add("screen \(kind)/\(screen.name)")
            if let alert = screen.alert { add("alert \(alert.title)") }
        case .callback(let record, let context):
            add("callback \(record.callback.rawValue) in \(context.style.description)")
            // isPending as the spec has it: true while the message waits in the input field.
            if record.callback == .didCancelSending, record.message?.isPending == true {
                add("message pending in the input field when deleted (isPending)")
            }
            if record.callback == .didStartSending, record.message?.isPending == false {
                add("message no longer pending once sent (isPending false)")
            }
            // An extension is handed the selected message only when it is one of its own.
            if let selected = record.conversation?.selectedMessage,
               before?.transcript.contains(where: { $0.bubble.message?.id == selected.id }) == true {
                add("selected message read by its own extension")
            }
            if record.callback == .willTransition, let to = record.style {
                add("transition \(context.style.description) -> \(to.description)")
            }
        case .action(let record, let context):
            let name = record.action.name
            switch record.action {
            case .requestPresentationStyle(let style):
                add("action requestPresentationStyle")
                if style == .transcript { add("action requestPresentationStyle transcript (it cannot be requested: ignored)") }
                if !context.isActive || style == context.style || style == .transcript || context.style == .transcript {
                    add("action requestPresentationStyle ignored (already in that style or not active)")
                }
            case .dismiss:
                add("action dismiss")
            default:
                add("action \(name): \(record.error == nil ? "accepted" : "refused")")
            }
            if let error = record.error { add("error \(error.code.rawValue) \(error.code.name)") }
            if record.changeDescription != nil { add("action insert(_:localizedChangeDescription:)") }
            if context.style == .transcript {
                switch record.action {
                case .requestPresentationStyle: add("action requestPresentationStyle in transcript style (ignored)")
                case .dismiss: add("action dismiss in transcript style (does nothing)")
                case .insert, .insertText, .insertSticker, .insertAttachment:
                    if record.error != nil { add("action insert in transcript style: refused") }
                default: break
                }
            }
            if record.error == nil, before?.staged != nil, ["insert", "insertText", "insertSticker", "insertAttachment"].contains(name) {
                add("action insert replacing a staged item")
            }
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
            countReplacement(of: item, before: before)
            // GAMES.md's captions, whoever is named in them.
            if let caption = item.message?.caption { add("caption \(Self.withoutMentions(caption))") }
            if case .message(let message) = item, let error = message.error {
                add("message sent with an error")
                add("error \(error.code.rawValue) \(error.code.name)")
            }
        case .transcript(.arrived(let item, _), _):
            add("message arrived")
            countReplacement(of: item, before: before)
        default:
            break
        }
    }

    /// The session rule: a message of a session that already has one in the transcript
    /// takes the earlier one's place, which keeps a summary line.
    private mutating func countReplacement(of item: Item, before: DeviceView?) {
        guard let session = item.message?.session, let before,
              before.transcript.contains(where: { $0.bubble.message?.session == session }) else { return }
        add("message replaces the earlier one of its session (a summary line stays)")
    }

    private mutating func countFields(_ message: Message) {
        if let url = message.url {
            let lower = url.lowercased()
            if lower.hasPrefix("http://") || lower.hasPrefix("https://") { add("message url http or https") }
            else if lower.hasPrefix("data:") { add("message url data") }
            else if URLComponents(string: url)?.scheme != nil { add("message url with another scheme (refused)") }
            else { add("message url with no scheme") }
            if url.count > URLRules.maximumLength { add("message url over 5,000 characters") }
        }
        if case .live? = message.layout { add("message with a live layout") }
        if let layout = message.layout?.template {
            let fields: [(String, Bool)] = [
                ("caption", layout.caption != nil), ("subcaption", layout.subcaption != nil),
                ("trailingCaption", layout.trailingCaption != nil), ("trailingSubcaption", layout.trailingSubcaption != nil),
                ("image", layout.image != nil), ("mediaFileURL", layout.mediaFileURL != nil),
                ("imageTitle", layout.imageTitle != nil), ("imageSubtitle", layout.imageSubtitle != nil)]
            for (field, present) in fields where present { add("message layout \(field)") }
        }
        if message.summaryText != nil { add("message with summaryText") }
        if message.shouldExpire { add("message with shouldExpire") }
        if message.accessibilityLabel != nil { add("message with accessibilityLabel") }
    }

    /// Counts a conversation as its first recording starts.
    mutating func count(conversationOf participants: Int) {
        add("conversation of \(participants) participants")
    }

    /// Counts what the network did in a game.
    mutating func count(network events: [NetworkEvent: Int]) {
        for (event, n) in events { add("network \(event.rawValue)", n) }
    }

    /// Counts a game's outcome as the log shows it.
    mutating func count(game kind: String, status: GameStatus, won: Bool) {
        add("game \(kind) \(status.rawValue)")
        if status == .finished { add("game \(kind) finished \(won ? "with a winner" : "without one (a draw)")") }
    }

    /// A caption with each `$<uuid>` mention as `$`.
    static func withoutMentions(_ caption: String) -> String {
        caption.replacing(/\$[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}/, with: "$")
    }

    /// Every row with its count: the spec's rows first (0 where nothing happened), then
    /// any other row the run produced (the games' outcomes, say).
    public var table: [(row: String, count: Int)] {
        let known = Set(Self.rows)
        return Self.rows.map { ($0, counts[$0] ?? 0) }
            + counts.keys.filter { !known.contains($0) }.sorted().map { ($0, counts[$0]!) }
    }

}
