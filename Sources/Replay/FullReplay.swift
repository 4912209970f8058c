import EventLog
import EventStore
import Foundation
import GameKit
import MessagesModel
import Projections
import RecordedEvents

/// One pass over the whole log in position order that folds every conversation
/// once its last event has gone by and hands each one over then: memory holds the
/// events of the conversations in progress at one point of the log (a budget of
/// them) and a few bytes per recording, not the log.
///
/// A conversation is finished at its last event, known up front from each stream's
/// last position (``EventStore/scanStreamHeads(_:)``). Its events are folded in the
/// replayer's order (time, then arrivals after their sends: ``Replayer/inReplayOrder(_:)``),
/// so the two always agree, also for logs merged from phones whose clocks differ.
///
/// Both cores work: threads read, check and decode chunks of the log, the calling
/// thread sorts events to their conversations, and finished conversations are folded
/// on other threads and handed back in the order they finished in the log.
public enum FullReplay {
    /// A conversation folded to its last event.
    public struct Finished: Sendable {
        public let state: ConversationState
        public let events: Int
        /// Microseconds since 1970 of its first and last events.
        public let span: (first: Int64, last: Int64)
        public let streams: Set<UUID>
        /// The devices its events came from, in order, as a replayer of the same events
        /// lists them (``Replayer/devices``); nil where the pass folded its events as they
        /// came and kept none (a log larger than the pass keeps at once).
        public let devices: [DeviceID]?
    }

    /// What the pass did.
    public struct Statistics: Sendable {
        /// Events read from the log.
        public var events = 0
        /// The most conversations held in memory at once.
        public var mostOpenConversations = 0
        /// Conversations whose events the log holds out of the replayer's order (clocks of
        /// different phones, logs merged one after another): folded in its order instead.
        public var reorderedConversations = 0
        /// Conversations read again from the store after the pass because they had more
        /// events than the pass could keep (`keepingAtMost`) and turned out out of order.
        public var rereadConversations = 0

        @available(*, deprecated, renamed: "reorderedConversations",
                   message: "conversations are folded once now; those out of the log's order are counted as reordered")
        public var refoldedConversations: Int { reorderedConversations }
    }

    typealias Decoded = (ConversationID, ReplayEvent)

    /// The event as projections see it, with its conversation; nil for events of
    /// streams that are not recordings.
    /// - Parameter constants: the constants made so far (at most ``constantsKept``).
    /// - Parameter memo: values read lately, by their bytes (one decoding thread's).
    private static func decode(_ stored: StoredEvent, _ recordings: [UUIDKey: Recording],
                               _ constants: inout [UUIDKey: StreamConstants], memo: DecodingMemo) throws -> Decoded? {
        let key = UUIDKey(stored.stream)
        guard let recording = recordings[key] else { return nil }
        var streamConstants: StreamConstants?
        if stored.typeVersion == 2 {
            // Made when a recording is first met, and kept a while (``constantsKept``).
            if let known = constants[key] {
                streamConstants = known
            } else {
                streamConstants = recording.constants
                constants[key] = streamConstants
            }
        }
        return (recording.conversation, try ReplayEvent(stored, constants: streamConstants, keepingHash: false, memo: memo))
    }

    /// Recordings' constants a decoding thread keeps at most: made again for each chunk,
    /// they were a twentieth of its work; kept for every recording of a long log, they
    /// would grow with it.
    static let constantsKept = 2_048

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

    /// The recordings whose first events are in one of `parts` stretches of the log, with
    /// the positions of their last events, in order of first event.
    private static func heads(_ part: Int, of parts: Int, _ reader: EventStore) throws -> [(UUID, Recording, Int64)] {
        var out: [(UUID, Recording, Int64)] = []
        try reader.scanStreamHeads(part: part, of: parts) { head in
            // Streams that are not recordings hold no game.
            guard head.first.type == RecordedEvent.TypeName.recordingStarted else { return }
            guard case .recordingStarted(let info)? = try? RecordedEvent.decode(
                type: head.first.type, typeVersion: head.first.typeVersion, payload: head.first.payload) else {
                throw ReplayError.undecodableEvent(position: head.first.position, detail: "a recording.started payload")
            }
            out.append((head.first.stream, Recording(conversation: info.conversation, device: info.device,
                                                     localParticipant: info.localParticipant,
                                                     remoteParticipants: info.remoteParticipants), head.lastPosition))
        }
        return out
    }

    /// Between the calling thread and the decoding threads before the first chunk: the
    /// second decoding thread reads the second stretch of the recordings' heads on its
    /// connection while the calling thread reads the first (reading a head inflates its
    /// block, and a recording begins in most blocks: alone, a fifth of a pass on one core),
    /// and every decoding thread waits for the recordings they make.
    private final class Handoff: @unchecked Sendable {
        // Guarded by `condition`.
        private let condition = NSCondition()
        private var second: Result<[(UUID, Recording, Int64)], Error>?
        private var recordings: Result<[UUIDKey: Recording], Error>?

        func put(second part: Result<[(UUID, Recording, Int64)], Error>) {
            condition.lock()
            second = part
            condition.broadcast()
            condition.unlock()
        }

        func takeSecond() -> Result<[(UUID, Recording, Int64)], Error> {
            condition.lock()
            defer { condition.unlock() }
            while second == nil { condition.wait() }
            // Handed over, not kept: learnt, the heads are the pass's dictionaries, and
            // their list held a recording's worth of memory each until the pass ended.
            defer { second = .success([]) }
            return second!
        }

        /// Lets the decoding threads go (the first call counts).
        func go(_ result: Result<[UUIDKey: Recording], Error>) {
            condition.lock()
            if recordings == nil { recordings = result }
            condition.broadcast()
            condition.unlock()
        }

        /// The recordings, or nil when the pass stopped before its first chunk.
        func waitToGo() -> [UUIDKey: Recording]? {
            condition.lock()
            defer { condition.unlock() }
            while recordings == nil { condition.wait() }
            return try? recordings!.get()
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

    /// A conversation in progress, seen by the calling thread only.
    private final class Open {
        let conversation: ConversationID
        var count = 0
        var first: Int64
        var last: Int64
        var lastKey: (recordedAt: Int64, position: Int64) = (.min, 0)
        var inTimeOrder = true
        /// Messages sent so far, and those that arrived before any send of them was seen.
        var sent = Set<MessageID>()
        var arrivedFirst = Set<MessageID>()
        /// Its events so far, folded when it ends; nil once the pass's budget for kept
        /// events ran out, and then ``state`` folds as the events come.
        var kept: [ReplayEvent]? = []
        var state: ConversationState?
        /// The position of its last event in the log (`.max` when unknown).
        var lastPosition: Int64 = .max
        init(_ conversation: ConversationID, at time: Int64) {
            self.conversation = conversation
            first = time
            last = time
        }
        /// Whether the log's order is the replayer's: in time order, and no message arrives
        /// before its send (one the log does not hold, as in one phone's log, may).
        var inReplayOrder: Bool { inTimeOrder && arrivedFirst.isDisjoint(with: sent) }
    }

    /// Finished conversations folded on other threads, handed back in the order they
    /// were submitted, so the caller sees the same sequence as with one thread.
    private final class Folds: @unchecked Sendable {
        // Guarded by `condition`.
        private let condition = NSCondition()
        private var done: [Int: (Finished, held: Int)] = [:]
        private var submitted = 0
        private var handed = 0
        private let parallel: Bool
        /// Conversations submitted and not handed yet, at most: the events they hold are
        /// what the pass's memory grows with.
        private let inFlight: Int
        /// At the priority of the thread that runs the pass: a background pass's folds
        /// stay in the background.
        private let queue: DispatchQueue

        init(parallel: Bool, inFlight: Int = 64) {
            self.parallel = parallel
            self.inFlight = inFlight
            queue = ThreadPriority.queueAtCallersPriority()
        }

        /// Folds `work` on another thread (or this one, without parallelism); `held` is how
        /// many events it holds until it is handed over.
        func submit(holding held: Int, _ work: @escaping @Sendable () -> Finished) {
            let ticket = nextTicket()
            guard parallel else { return put(ticket, (work(), held)) }
            queue.async { self.put(ticket, (work(), held)) }
        }

        /// A conversation folded on this thread, handed in its turn.
        func submit(folded: Finished) {
            put(nextTicket(), (folded, 0))
        }

        private func nextTicket() -> Int {
            condition.lock()
            defer { condition.unlock() }
            submitted += 1
            return submitted - 1
        }

        private func put(_ ticket: Int, _ finished: (Finished, held: Int)) {
            condition.lock()
            done[ticket] = finished
            condition.broadcast()
            condition.unlock()
        }

        /// Hands over the folds ready in order, with the events each held; waits while too
        /// many are in flight, or for every one with `all`.
        func hand(all: Bool = false, _ body: (Finished, _ held: Int) throws -> Void) throws {
            while true {
                condition.lock()
                while done[handed] == nil && (all ? handed < submitted : submitted - handed > inFlight) {
                    condition.wait()
                }
                guard let next = done.removeValue(forKey: handed) else {
                    condition.unlock()
                    return
                }
                handed += 1
                condition.unlock()
                try body(next.0, next.held)
            }
        }
    }

    /// Folds the whole log once, calling `finished` with each conversation when its
    /// last event has been folded.
    /// - Parameters:
    ///   - games: the games whose boards are folded.
    ///   - verify: check the hash chain while reading (as `scan` does).
    ///   - lanes: threads that read and decode (default: one per core, at most eight);
    ///     1 reads and folds on the calling thread.
    ///   - chunkSize: events per unit of work handed from a decoding thread.
    ///   - progress: called now and then with the events read so far.
    ///   - keepingAtMost: how many events the open conversations may keep in all until
    ///     they end (past it, a conversation folds as its events come, and one that turns
    ///     out out of order is read again after the pass).
    ///   - finished: called on the calling thread, in the order conversations end in the log.
    @discardableResult
    public static func run(store: EventStore, verify: Bool = true, lanes: Int? = nil, chunkSize: Int = 4_096,
                           keepingAtMost keptBudget: Int = 50_000,
                           games: GameRegistry, progress: ((Int) -> Void)? = nil,
                           skippingDamaged damaged: ((Error) -> Void)? = nil,
                           as perspective: Perspective = .auditor,
                           finished: (Finished) throws -> Void) throws -> Statistics {
        var statistics = Statistics()
        var conversationOfStream: [UUIDKey: Recording] = [:]
        var streamsOf: [ConversationID: Set<UUID>] = [:]
        var lastPosition: [ConversationID: Int64] = [:]
        func learn(_ heads: [(UUID, Recording, Int64)]) {
            for (stream, recording, last) in heads {
                conversationOfStream[UUIDKey(stream)] = recording
                streamsOf[recording.conversation, default: []].insert(stream)
                lastPosition[recording.conversation] = max(lastPosition[recording.conversation] ?? 0, last)
            }
        }

        // One decoder per core (the folds share the cores through Dispatch), at most eight:
        // each holds its own connection and up to two chunks of decoded events.
        let decoders = lanes ?? min(8, max(1, ProcessInfo.processInfo.activeProcessorCount))
        let last = try store.lastPosition()
        let parallel = decoders >= 2 && last >= 4 * Int64(chunkSize)
        let folds = Folds(parallel: parallel)
        var open: [ConversationID: Open] = [:]
        var later: [ConversationID] = []
        // Events kept by open conversations and by finished ones not handed over yet, at
        // most this many in all: a log merged from phones one after another has every
        // conversation open at once, and memory must stay that of the conversations'
        // states, not of the log.
        var keptEvents = 0
        // Whether a conversation ended since the last hand-over: the one-thread pass asks
        // after every event, and most events end nothing.
        var ended = false
        func handReady(all: Bool = false) throws {
            ended = false
            try folds.hand(all: all) { done, held in
                keptEvents -= held
                try finished(done)
            }
        }

        /// A conversation at its end (or the log's): folded from the events it kept, handed
        /// as folded while they came, or left to read again.
        func end(_ entry: Open) {
            ended = true
            if !entry.inReplayOrder { statistics.reorderedConversations += 1 }
            if let kept = entry.kept {
                entry.kept = nil
                let inOrder = entry.inReplayOrder, conversation = entry.conversation
                let count = entry.count, span = (entry.first, entry.last), streams = streamsOf[conversation] ?? []
                folds.submit(holding: kept.count) {
                    let events = inOrder ? kept : Replayer.inReplayOrder(kept)
                    return Finished(state: ConversationState.folding(conversation, events, games: games, as: perspective),
                                    events: count, span: span, streams: streams, devices: Replayer.devices(of: events))
                }
            } else if let state = entry.state, entry.inReplayOrder {
                folds.submit(folded: Finished(state: state.playerView(for: perspective), events: entry.count,
                                              span: (entry.first, entry.last), streams: streamsOf[entry.conversation] ?? [], devices: nil))
            } else {
                later.append(entry.conversation)
            }
        }
        func route(_ conversation: ConversationID, _ event: consuming ReplayEvent) {
            let entry: Open
            if let existing = open[conversation] {
                entry = existing
            } else {
                entry = Open(conversation, at: event.recordedAt)
                // Looked up once, not at each of its events.
                entry.lastPosition = lastPosition[conversation] ?? .max
                open[conversation] = entry
                statistics.mostOpenConversations = max(statistics.mostOpenConversations, open.count)
            }
            if (event.recordedAt, event.position) < entry.lastKey { entry.inTimeOrder = false }
            // An arrival before its send (clocks of different phones): the replayer reads
            // it in causal order, and so is it folded (known only at the end: the send
            // may come later in the log, or not at all).
            switch event.event {
            case .transcript(.sent(let item), _): if let id = Replayer.messageThatLeft(item) { entry.sent.insert(id) }
            case .transcript(.arrived(let item, _), _): if let id = item.message?.id, !entry.sent.contains(id) { entry.arrivedFirst.insert(id) }
            default: break
            }
            entry.lastKey = (event.recordedAt, event.position)
            entry.count += 1
            entry.first = min(entry.first, event.recordedAt)
            entry.last = max(entry.last, event.recordedAt)
            let ends = event.position >= entry.lastPosition
            if entry.kept != nil, keptEvents < keptBudget {
                keptEvents += 1
                // Its last use: moved into the list, not copied.
                entry.kept!.append(event)
            } else {
                if entry.kept != nil {
                    // Out of budget: fold what it kept in log order and go on as events come;
                    // if that order turns out not to be the replayer's, it is read again
                    // after the pass.
                    keptEvents -= entry.kept!.count
                    entry.state = ConversationState.folding(conversation, entry.kept!.lazy.filter(perspective.sees), games: games)
                    entry.kept = nil
                }
                // Folding as events come is right only in log order: once out of time order, the
                // conversation is read again after the pass (an early arrival is judged at its end).
                if entry.inTimeOrder, perspective.sees(event), entry.state != nil {
                    entry.state!.apply(event)
                }
            }
            if ends {
                open[conversation] = nil
                end(entry)
            }
        }
        if !parallel {
            learn(try heads(0, of: 1, store))
            var constants: [UUIDKey: StreamConstants] = [:]
            let memo = DecodingMemo()
            try store.scan(verify: verify, skippingDamaged: damaged) { stored in
                statistics.events += 1
                if statistics.events % 16_384 == 0 {
                    progress?(statistics.events)
                    if constants.count > Self.constantsKept { constants.removeAll(keepingCapacity: true) }
                }
                let decoded: Decoded?
                do {
                    decoded = try decode(stored, conversationOfStream, &constants, memo: memo)
                } catch let error where damaged != nil {
                    damaged?(error)
                    return
                }
                if let decoded { route(decoded.0, decoded.1) }
                if ended { try handReady() }
            }
        } else {
            // Reading, checking and decoding take most of the time and need no order,
            // so threads do them chunk by chunk, each on its own connection, while this
            // thread sorts the chunks' events to their conversations in log order. Each
            // decoder runs at most two chunks ahead, so memory stays bounded however long
            // the log. (Threads, not tasks: the pass is synchronous for its callers, and
            // a decoder blocks while it is ahead, which tasks must not do.)
            let chunks = Int((last + Int64(chunkSize) - 1) / Int64(chunkSize))
            let mailbox = Mailbox(lanes: decoders)
            let handoff = Handoff()
            let path = store.path, size = chunkSize, skipping = damaged != nil
            for lane in 0..<decoders {
                let thread = Thread {
                    // A failure is handed over as its chunk, so the folding thread
                    // meets errors in log order, as a single scan would.
                    let reader: EventStore
                    do {
                        reader = try EventStore(path: path, access: .readOnly)
                        // Its chunks meet the same recordings again and again; this pass is
                        // short and reads through this store only.
                        reader.keepStreamNames()
                    } catch {
                        if lane == 1 { handoff.put(second: .failure(error)) }
                        _ = mailbox.waitForRoom(lane: lane)
                        return mailbox.put(lane, .failure(error))
                    }
                    // On this thread and connection, which go on to decode: memory freed by
                    // the heads' reading is the decoding's to reuse (on a thread of its own,
                    // it stayed in that thread's arena: 8 MB more at 901k events).
                    if lane == 1 { handoff.put(second: Result { try heads(1, of: 2, reader) }) }
                    guard let streams = handoff.waitToGo() else { return }
                    let memo = DecodingMemo()
                    // Kept from chunk to chunk (a recording goes on in the next), up to a bound.
                    var constants: [UUIDKey: StreamConstants] = [:]
                    for chunk in stride(from: lane, to: chunks, by: decoders) {
                        guard mailbox.waitForRoom(lane: lane) else { return }
                        var items: [Decoded] = []
                        items.reserveCapacity(size)
                        var read = 0
                        var skipped: [Error] = []
                        if constants.count > Self.constantsKept { constants.removeAll(keepingCapacity: true) }
                        let first = Int64(chunk) * Int64(size) + 1
                        do {
                            try reader.scan(EventQuery(positions: first...(first + Int64(size) - 1)), verify: verify,
                                            skippingDamaged: skipping ? { skipped.append($0) } : nil) { stored in
                                read += 1
                                do {
                                    if let decoded = try decode(stored, streams, &constants, memo: memo) { items.append(decoded) }
                                } catch where skipping {
                                    skipped.append(error)
                                }
                            }
                        } catch {
                            return mailbox.put(chunk, .failure(error))
                        }
                        // Reversed here, on this core: the folding thread pops its events off
                        // the end, moving each out rather than copying it (a copy retained every
                        // reference of the event, and the chunk's release released them again).
                        items.reverse()
                        mailbox.put(chunk, .success((read, items, skipped)))
                    }
                }
                thread.stackSize = 1 << 20
                thread.start()
            }
            defer {
                handoff.go(.failure(CancellationError()))
                mailbox.cancel()
            }
            // The first stretch of heads here, the second on the second decoding thread; the
            // first's error first, as one reader would meet it.
            do {
                // Both lists dropped once learnt (see ``Handoff/takeSecond()``).
                let first = Result { try heads(0, of: 2, store) }
                let second = handoff.takeSecond()
                learn(try first.get())
                learn(try second.get())
            }
            handoff.go(.success(conversationOfStream))
            for chunk in 0..<chunks {
                var (read, items, skipped) = try mailbox.take(chunk, lane: chunk % decoders).get()
                skipped.forEach { damaged?($0) }
                while let (conversation, event) = items.popLast() { route(conversation, event) }
                try handReady()
                let before = statistics.events
                statistics.events += read
                if before / 16_384 != statistics.events / 16_384 { progress?(statistics.events) }
            }
        }
        progress?(statistics.events)
        // Conversations whose last event never came by (a cut-off log) end here.
        for (_, entry) in open.sorted(by: { $0.value.lastKey.position < $1.value.lastKey.position }) { end(entry) }
        try handReady(all: true)
        for conversation in later {
            let events = try Replayer.load(from: store, streams: streamsOf[conversation] ?? [])
            let times = events.lazy.map(\.recordedAt)
            try finished(Finished(state: ConversationState.folding(conversation, events, games: games, as: perspective),
                                  events: events.count, span: (times.min() ?? 0, times.max() ?? 0),
                                  streams: streamsOf[conversation] ?? [], devices: Replayer.devices(of: events)))
            statistics.rereadConversations += 1
        }
        return statistics
    }
}
