import EventStore
import GameKit
import MessagesModel
import Projections
import RecordedEvents

/// A device's events as its owner may see them, in log order: each conversation folded
/// from that device's events so far, and every message an event carries through the
/// game's player view (`log --as`, `export --device --redact`).
struct DeviceViews {
    let perspective: Perspective
    /// Show the messages of a game this gamelog does not register whole, rather than
    /// leave out what they carry.
    let unredacted: Bool
    private var states: [ConversationID: ConversationState] = [:]
    /// Kinds whose games no view could be computed for: their messages were left out.
    private(set) var unviewable: Set<String> = []

    init(_ perspective: Perspective, unredacted: Bool = false) {
        self.perspective = perspective
        self.unredacted = unredacted
    }

    /// Folds `event` (one of the device's own, in log order) and returns it as the device's owner may see it.
    mutating func view(_ event: RecordedEvent, stored: StoredEvent) -> RecordedEvent {
        guard case .device = perspective, let conversation = event.conversation else { return event }
        var state = states[conversation] ?? ConversationState(conversation: conversation, games: GamelogCLI.games)
        state.apply(ReplayEvent(position: stored.position, recordedAt: stored.recordedAt.microsecondsSince1970, stream: stored.stream, event: event))
        states[conversation] = state
        // Without the game no view can be computed: what its messages carry is left out.
        if state.plugin == nil, !state.kind.isEmpty, !unredacted {
            unviewable.insert(state.kind)
            return event.mappingMessages { message, _ in
                var bare = message
                bare.url = nil
                bare.layout = nil
                bare.summaryText = nil
                bare.accessibilityLabel = nil
                return bare
            }
        }
        return state.view(of: event, as: perspective)
    }

    /// Fails, after the output, when some messages were left out for want of their game.
    func finish(command: String) throws {
        guard !unviewable.isEmpty else { return }
        let kinds = unviewable.sorted().map(SafeText.line).joined(separator: ", ")
        throw CommandFailure("the messages of kind\(unviewable.count == 1 ? "" : "s") \(kinds) were left out: this gamelog does not register \(unviewable.count == 1 ? "that game" : "those games"), so no player's view of them can be computed. A gamelog built with GamelogCLI and the game shows them as the player saw them; `\(command) --unredacted` shows them whole (everything they carry, secrets included).")
    }
}
