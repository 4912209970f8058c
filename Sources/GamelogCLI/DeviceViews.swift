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
    private var states: [ConversationID: ConversationState] = [:]

    init(_ perspective: Perspective) { self.perspective = perspective }

    /// Folds `event` (one of the device's own, in log order) and returns it as the device's owner may see it.
    mutating func view(_ event: RecordedEvent, stored: StoredEvent) -> RecordedEvent {
        guard case .device = perspective, let conversation = event.conversation else { return event }
        var state = states[conversation] ?? ConversationState(conversation: conversation, games: GamelogCLI.games)
        state.apply(ReplayEvent(position: stored.position, recordedAt: stored.recordedAt.microsecondsSince1970, stream: stored.stream, event: event))
        states[conversation] = state
        return state.view(of: event, as: perspective)
    }
}
