import EventStore
import Foundation
import GameKit
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

    typealias Decoded = (ConversationID, ReplayEvent)

    /// The event as projections see it, with its conversation; nil for events of
    /// streams that are not recordings.
    /// - Parameter constants: the constants made so far, kept only for a chunk: made for
    ///   every recording of a long log at once, they would grow with it.
    private static func decode(_ stored: StoredEvent, _ recordings: [UUID: Recording],
                               _ constants: inout [UUID: StreamConstants]) throws -> Decoded? {
        guard let recording = recordings[stored.stream] else { return nil }
        var streamConstants: StreamConstants?
        if stored.typeVersion == 2 {
            streamConstants = constants[stored.stream] ?? recording.constants
            constants[stored.stream] = streamConstants
        }
        return (recording.conversation, try ReplayEvent(stored, constants: streamConstants, keepingHash: false))
    }

    /// What the pass knows of a recording from its first event: a few ids per recording.
    struct Recording: Sendable {
        var conversation: ConversationID
        var device: DeviceID
        var localParticipant: ParticipantID
        var remoteParticipants: [ParticipantID]

        /// What its compact payloads leave out.
        var constants: StreamConstants {
            StreamConstants(device: device, conversation: conversation, localParticipant: localParticipant,
                            remoteParticipants: remoteParticipants)
        }
    }

    /// Decoded chunks on their way from the decoding threads to the folding one.
    private final class Mailbox: @unchecked Sendable {
        // Guarded by `condition`.
        private let condition = NSCondition()
        private var ready: [Int: Result<(Int, [Decoded], [Error]), Error>] = [:]
        private var ahead: [Int]
        private var cancelled = false

        init(lanes: Int) { ahead = Array(repeating: 0, count: lanes) }

        /// Blocks while `lane` is two chunks ahead; false once the pass is over.
        func waitForRoom(lane: Int) -> Bool {
            condition.lock()
            defer { condition.unlock() }
            while ahead[lane] >= 2 && !cancelled { condition.wait() }
            if !cancelled { ahead[lane] += 1 }
            return !cancelled
        }

        func put(_ chunk: Int, _ result: Result<(Int, [Decoded], [Error]), Error>) {
            condition.lock()
            ready[chunk] = result
            condition.broadcast()
            condition.unlock()
        }

        func take(_ chunk: Int, lane: Int) -> Result<(Int, [Decoded], [Error]), Error> {
            condition.lock()
            defer { condition.unlock() }
            while ready[chunk] == nil { condition.wait() }
            ahead[lane] -= 1
            condition.broadcast()
            return ready.removeValue(forKey: chunk)!
        }

        func cancel() {
            condition.lock()
            cancelled = true
            condition.broadcast()
            condition.unlock()
        }
    }

    /// A conversation being folded.
    private final class Open {
        var state: ConversationState
        var count = 0
        var first: Int64
        var last: Int64
        var lastKey: (recordedAt: Int64, position: Int64) = (.min, 0)
        var inTimeOrder = true
        /// Messages sent so far, and whether one arrived before a send was seen.
        var sent = Set<MessageID>()
        var early = false
        /// Its events so far, to fold again in causal order if it turns out to need it
        /// without reading them again; nil once the pass's budget for them ran out.
        var kept: [ReplayEvent]? = []
        init(_ conversation: ConversationID, games: GameRegistry, at time: Int64) {
            state = ConversationState(conversation: conversation, games: games)
            first = time
            last = time
        }
    }

    /// Folds the whole log once, calling `finished` with each conversation when its
    /// last event has been folded.
    /// - Parameters:
    ///   - games: the games whose boards are folded.
    ///   - verify: check the hash chain while reading (as `scan` does).
    ///   - lanes: threads that read and decode (default: up to two, one per core);
    ///     1 reads on the calling thread.
    ///   - chunkSize: events per unit of work handed from a decoding thread.
    ///   - progress: called now and then with the events read so far.
    ///   - keepingAtMost: how many events the open conversations may keep in all, to fold
    ///     one again in causal order without reading it again (past it, it is read again).
    @discardableResult
    public static func run(store: EventStore, verify: Bool = true, lanes: Int? = nil, chunkSize: Int = 4_096,
                           keepingAtMost keptBudget: Int = 50_000,
                           games: GameRegistry, progress: ((Int) -> Void)? = nil,
                           skippingDamaged damaged: ((Error) -> Void)? = nil,
                           as perspective: Perspective = .auditor,
                           finished: (Finished) throws -> Void) throws -> Statistics {
        var statistics = Statistics()
        var conversationOfStream: [UUID: Recording] = [:]
        var streamsOf: [ConversationID: Set<UUID>] = [:]
        var lastPosition: [ConversationID: Int64] = [:]
        try store.scanStreamHeads { head in
            // Streams that are not recordings hold no game.
            guard head.first.type == RecordedEvent.TypeName.recordingStarted else { return }
            guard case .recordingStarted(let info)? = try? RecordedEvent.decode(
                type: head.first.type, typeVersion: head.first.typeVersion, payload: head.first.payload) else {
                throw ReplayError.undecodableEvent(position: head.first.position, detail: "a recording.started payload")
            }
            conversationOfStream[head.first.stream] = Recording(conversation: info.conversation, device: info.device,
                                                                localParticipant: info.localParticipant,
                                                                remoteParticipants: info.remoteParticipants)
            streamsOf[info.conversation, default: []].insert(head.first.stream)
            lastPosition[info.conversation] = max(lastPosition[info.conversation] ?? 0, head.lastPosition)
        }

        func hand(_ entry: Open) throws {
            let conversation = entry.state.conversation
            try finished(Finished(state: entry.state.playerView(for: perspective), events: entry.count,
                                  span: (entry.first, entry.last), streams: streamsOf[conversation] ?? []))
        }
        var open: [ConversationID: Open] = [:]
        var later: [ConversationID] = []
        // Events kept by open conversations, at most this many in all: a log merged from
        // phones one after another has every conversation open at once, and memory must
        // stay that of the conversations' states, not of the log.
        var keptEvents = 0
        /// Folds a conversation again from its events in the replayer's order, from those the
        /// pass kept or, once their budget ran out, read again from the store.
        func refold(_ conversation: ConversationID, _ events: [ReplayEvent]) throws {
            let entry = Open(conversation, games: games, at: events.first?.recordedAt ?? 0)
            for event in events where perspective.sees(event) { entry.state.apply(event) }
            entry.count = events.count
            entry.last = events.last?.recordedAt ?? 0
            try hand(entry)
            statistics.refoldedConversations += 1
        }
        func fold(_ conversation: ConversationID, _ event: ReplayEvent) throws {
            let entry: Open
            if let existing = open[conversation] {
                entry = existing
            } else {
                entry = Open(conversation, games: games, at: event.recordedAt)
                open[conversation] = entry
                statistics.mostOpenConversations = max(statistics.mostOpenConversations, open.count)
            }
            if (event.recordedAt, event.position) < entry.lastKey { entry.inTimeOrder = false }
            // An arrival before its send (clocks of different phones): the fold is redone
            // in causal order, as the replayer reads it.
            switch event.event {
            case .transcript(.sent(let item), _): if let id = item.message?.id { entry.sent.insert(id) }
            case .transcript(.arrived(let item, _), _): if let id = item.message?.id, !entry.sent.contains(id) { entry.early = true }
            default: break
            }
            entry.lastKey = (event.recordedAt, event.position)
            // A device's view folds its own events only.
            if perspective.sees(event) { entry.state.apply(event) }
            entry.count += 1
            entry.first = min(entry.first, event.recordedAt)
            entry.last = max(entry.last, event.recordedAt)
            if entry.kept != nil {
                if keptEvents < keptBudget {
                    entry.kept!.append(event)
                    keptEvents += 1
                } else {
                    keptEvents -= entry.kept!.count
                    entry.kept = nil
                }
            }
            if event.position >= lastPosition[conversation] ?? .max {
                open[conversation] = nil
                keptEvents -= entry.kept?.count ?? 0
                if entry.inTimeOrder && !entry.early {
                    try hand(entry)
                } else if let kept = entry.kept {
                    try refold(conversation, Replayer.inReplayOrder(kept))
                } else {
                    later.append(conversation)
                }
            }
        }
        let decoders = lanes ?? min(2, max(1, ProcessInfo.processInfo.activeProcessorCount))
        let last = try store.lastPosition()
        if decoders < 2 || last < 4 * chunkSize {
            var constants: [UUID: StreamConstants] = [:]
            try store.scan(verify: verify, skippingDamaged: damaged) { stored in
                statistics.events += 1
                if statistics.events % 16_384 == 0 {
                    progress?(statistics.events)
                    constants.removeAll(keepingCapacity: true)
                }
                let decoded: Decoded?
                do {
                    decoded = try decode(stored, conversationOfStream, &constants)
                } catch let error where damaged != nil {
                    damaged?(error)
                    return
                }
                if let decoded { try fold(decoded.0, decoded.1) }
            }
        } else {
            // Reading, checking and decoding take most of the time and need no order,
            // so threads do them chunk by chunk, each on its own connection, while this
            // thread folds the chunks in log order. Each decoder runs at most two
            // chunks ahead, so memory stays bounded however long the log.
            let chunks = Int((last + Int64(chunkSize) - 1) / Int64(chunkSize))
            let mailbox = Mailbox(lanes: decoders)
            let path = store.path, streams = conversationOfStream, size = chunkSize, skipping = damaged != nil
            for lane in 0..<decoders {
                let thread = Thread {
                    // A failure is handed over as its chunk, so the folding thread
                    // meets errors in log order, as a single scan would.
                    let reader: EventStore
                    do {
                        reader = try EventStore(path: path, access: .readOnly)
                    } catch {
                        _ = mailbox.waitForRoom(lane: lane)
                        return mailbox.put(lane, .failure(error))
                    }
                    for chunk in stride(from: lane, to: chunks, by: decoders) {
                        guard mailbox.waitForRoom(lane: lane) else { return }
                        var items: [Decoded] = []
                        items.reserveCapacity(size)
                        var read = 0
                        var skipped: [Error] = []
                        var constants: [UUID: StreamConstants] = [:]
                        let first = Int64(chunk) * Int64(size) + 1
                        do {
                            try reader.scan(EventQuery(positions: first...(first + Int64(size) - 1)), verify: verify,
                                            skippingDamaged: skipping ? { skipped.append($0) } : nil) { stored in
                                read += 1
                                do {
                                    if let decoded = try decode(stored, streams, &constants) { items.append(decoded) }
                                } catch where skipping {
                                    skipped.append(error)
                                }
                            }
                        } catch {
                            return mailbox.put(chunk, .failure(error))
                        }
                        mailbox.put(chunk, .success((read, items, skipped)))
                    }
                }
                thread.stackSize = 1 << 20
                thread.start()
            }
            defer { mailbox.cancel() }
            for chunk in 0..<chunks {
                let (read, items, skipped) = try mailbox.take(chunk, lane: chunk % decoders).get()
                skipped.forEach { damaged?($0) }
                for (conversation, event) in items { try fold(conversation, event) }
                let before = statistics.events
                statistics.events += read
                if before / 16_384 != statistics.events / 16_384 { progress?(statistics.events) }
            }
        }
        progress?(statistics.events)
        // Conversations whose last event never came by (a cut-off log) end here.
        for (_, entry) in open.sorted(by: { $0.value.state.position < $1.value.state.position }) {
            if entry.inTimeOrder && !entry.early {
                try hand(entry)
            } else if let kept = entry.kept {
                try refold(entry.state.conversation, Replayer.inReplayOrder(kept))
            } else {
                later.append(entry.state.conversation)
            }
        }
        for conversation in later {
            try refold(conversation, try Replayer.load(from: store, streams: streamsOf[conversation] ?? []))
        }
        return statistics
    }
}
