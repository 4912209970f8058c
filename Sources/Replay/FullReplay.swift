import EventStore
import Foundation
import MessagesModel
import Projections
import RecordedEvents

/// One pass over the whole log in position order that folds every conversation
/// while its events go by and hands each one over as soon as it is finished: memory
/// holds the conversations in progress at one point of the log (and a few bytes per
/// recording), not the log.
///
/// A conversation is finished at its last event, known up front from each stream's
/// last position (``EventStore/scanStreamHeads(_:)``). A conversation whose events
/// are not in time order in the log (logs merged from devices one after the other)
/// is folded again afterwards in time order, as ``Replayer`` does, so the two always
/// agree.
public enum FullReplay {
    /// A conversation folded to its last event.
    public struct Finished {
        public let state: ConversationState
        public let events: Int
        /// Microseconds since 1970 of its first and last events.
        public let span: (first: Int64, last: Int64)
        public let streams: Set<UUID>
    }

    /// What the pass did.
    public struct Statistics: Sendable {
        /// Events read from the log.
        public var events = 0
        /// The most conversations held in memory at once.
        public var mostOpenConversations = 0
        /// Conversations folded a second time, in time order, after the pass.
        public var refoldedConversations = 0
    }

    /// A conversation being folded.
    private final class Open {
        var state: ConversationState
        var count = 0
        var first: Int64
        var last: Int64
        var lastKey: (recordedAt: Int64, position: Int64) = (.min, 0)
        var inTimeOrder = true
        init(_ conversation: ConversationID, at time: Int64) {
            state = ConversationState(conversation: conversation)
            first = time
            last = time
        }
    }

    /// Folds the whole log once, calling `finished` with each conversation when its
    /// last event has been folded.
    /// - Parameters:
    ///   - verify: check the hash chain while reading (as `scan` does).
    ///   - progress: called now and then with the events read so far.
    @discardableResult
    public static func run(store: EventStore, verify: Bool = true, progress: ((Int) -> Void)? = nil,
                           finished: (Finished) throws -> Void) throws -> Statistics {
        var statistics = Statistics()
        var conversationOfStream: [UUID: ConversationID] = [:]
        var streamsOf: [ConversationID: Set<UUID>] = [:]
        var lastPosition: [ConversationID: Int64] = [:]
        try store.scanStreamHeads { head in
            // Streams that are not recordings hold no game.
            guard head.first.type == "recording.started" else { return }
            guard case .recordingStarted(let info)? = try? RecordedEvent.decode(
                type: head.first.type, typeVersion: head.first.typeVersion, payload: head.first.payload) else {
                throw ReplayError.undecodableEvent(position: head.first.position, detail: "a recording.started payload")
            }
            conversationOfStream[head.first.stream] = info.conversation
            streamsOf[info.conversation, default: []].insert(head.first.stream)
            lastPosition[info.conversation] = max(lastPosition[info.conversation] ?? 0, head.lastPosition)
        }

        func hand(_ entry: Open) throws {
            let conversation = entry.state.conversation
            try finished(Finished(state: entry.state, events: entry.count, span: (entry.first, entry.last),
                                  streams: streamsOf[conversation] ?? []))
        }
        var open: [ConversationID: Open] = [:]
        var later: [ConversationID] = []
        try store.scan(verify: verify) { stored in
            statistics.events += 1
            if statistics.events % 16_384 == 0 { progress?(statistics.events) }
            guard let conversation = conversationOfStream[stored.stream] else { return }
            let event: RecordedEvent
            do {
                event = try RecordedEvent.decode(type: stored.type, typeVersion: stored.typeVersion, payload: stored.payload)
            } catch {
                throw ReplayError.undecodableEvent(position: stored.position, detail: String(describing: error))
            }
            let time = stored.recordedAt.microsecondsSince1970
            let entry: Open
            if let existing = open[conversation] {
                entry = existing
            } else {
                entry = Open(conversation, at: time)
                open[conversation] = entry
                statistics.mostOpenConversations = max(statistics.mostOpenConversations, open.count)
            }
            if (time, stored.position) < entry.lastKey { entry.inTimeOrder = false }
            entry.lastKey = (time, stored.position)
            entry.state.apply(ReplayEvent(position: stored.position, recordedAt: time, stream: stored.stream, event: event))
            entry.count += 1
            entry.first = min(entry.first, time)
            entry.last = max(entry.last, time)
            if stored.position >= lastPosition[conversation] ?? .max {
                open[conversation] = nil
                if entry.inTimeOrder { try hand(entry) } else { later.append(conversation) }
            }
        }
        progress?(statistics.events)
        // Conversations whose last event never came by (a cut-off log) end here.
        for (_, entry) in open.sorted(by: { $0.value.state.position < $1.value.state.position }) {
            if entry.inTimeOrder { try hand(entry) } else { later.append(entry.state.conversation) }
        }
        for conversation in later {
            let events = try Replayer.load(from: store, streams: streamsOf[conversation] ?? [])
            let entry = Open(conversation, at: events.first?.recordedAt ?? 0)
            for event in events { entry.state.apply(event) }
            entry.count = events.count
            entry.last = events.last?.recordedAt ?? 0
            try hand(entry)
            statistics.refoldedConversations += 1
        }
        return statistics
    }
}
