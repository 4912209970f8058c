import EventLog
import EventStore
import Foundation
import GameKit
import MessagesModel
import Projections
import RecordedEvents
import StoredEvents

/// One pass over the whole log in position order that folds every conversation
/// once its last event has gone by and hands each one over then: memory holds the
/// events of the conversations in progress at one point of the log (a budget of
/// them) and a few bytes per recording, not the log.
///
/// A conversation is finished at its last event, known up front from each recording's
/// last position: where the catalog covers the log, its recordings and their ends are
/// read from the catalog and the stream indexes
/// (``EventStore/catalogEntriesWithLastPositions(_:)``) and each catalog row is held to
/// the recording's first event when the pass reads it; otherwise every recording's first
/// event is read before the pass (``EventStore/scanStreamHeads(_:)``). Its events are folded in the
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

    /// Recordings' constants a decoding thread keeps at most: made again for each chunk,
    /// they were a twentieth of its work; kept for every recording of a long log, they
    /// would grow with it.
    static let constantsKept = 2_048

    /// Where the catalog places each recording: the conversation it names and its first
    /// event's position. The pass takes it on trust only as far as the events confirm it:
    /// each recording's first event is checked against its entry when a thread meets it.
    typealias CatalogPlaces = [UUIDKey: (conversation: ConversationID, position: Int64)]

    /// The recording of an event's stream, as a decoding thread finds it.
    enum Lookup {
        case recording(Recording)
        /// The stream is not a recording (or its first event was damaged and skipped).
        case none
        /// It began in an earlier chunk whose recordings no thread has handed over yet.
        case notYet
    }

    /// One decoding thread's view of the recordings: the ones it met lately, the ones it
    /// learnt in its chunk (handed to ``Recordings`` when the chunk is read), its constants
    /// and its decoding memo.
    struct Lane {
        let catalog: CatalogPlaces?
        let shared: Recordings
        let skipping: Bool
        private var recent: [UUIDKey: Recording] = [:]
        private(set) var learnt: [UUIDKey: Recording] = [:]
        private var constants: [UUIDKey: StreamConstants] = [:]
        let memo = DecodingMemo()

        init(catalog: CatalogPlaces?, shared: Recordings, skipping: Bool) {
            self.catalog = catalog
            self.shared = shared
            self.skipping = skipping
        }

        /// Between chunks: what it learnt goes to the shared recordings, and what it keeps
        /// stays bounded (a recording goes on in the next chunk, so most are kept).
        mutating func handOver(chunk: Int?) {
            shared.add(learnt, chunk: chunk)
            learnt.removeAll(keepingCapacity: true)
            if recent.count > FullReplay.constantsKept * 2 { recent.removeAll(keepingCapacity: true) }
            if constants.count > FullReplay.constantsKept { constants.removeAll(keepingCapacity: true) }
        }

        /// The recording `stored` belongs to. Its first event is where it is learnt, and
        /// where the catalog's entry for it is held to the event; `final`: every earlier
        /// chunk has been handed over, so a recording not found is none.
        mutating func recording(of stored: StoredEvent, _ key: UUIDKey, final: Bool) throws -> Lookup {
            if let known = recent[key] { return .recording(known) }
            guard let catalog else {
                // Every recording was read before the pass.
                guard let known = shared.lookup(key) else { return .none }
                recent[key] = known
                return .recording(known)
            }
            let startsHere = stored.streamVersion == 1 && stored.type == RecordedEvent.TypeName.recordingStarted
            guard let place = catalog[key] else {
                if startsHere {
                    throw ReplayError.catalogContradictsEvents(position: stored.position, detail: "a recording starts here that the catalog does not name")
                }
                return .none
            }
            if stored.position == place.position {
                guard startsHere else {
                    throw ReplayError.catalogContradictsEvents(position: stored.position, detail: "the catalog places a recording's start here, where none starts")
                }
                guard case .recordingStarted(let info)? = try? RecordedEvent.decode(
                    type: stored.type, typeVersion: stored.typeVersion, payload: stored.payload) else {
                    throw ReplayError.undecodableEvent(position: stored.position, detail: "a recording.started payload")
                }
                guard info.conversation == place.conversation else {
                    throw ReplayError.catalogContradictsEvents(position: stored.position, detail: "the recording's conversation is not the catalog's")
                }
                let learnt = Recording(conversation: info.conversation, device: info.device, localParticipant: info.localParticipant,
                                       remoteParticipants: info.remoteParticipants)
                recent[key] = learnt
                self.learnt[key] = learnt
                return .recording(learnt)
            }
            if stored.position < place.position || startsHere {
                throw ReplayError.catalogContradictsEvents(
                    position: stored.position, detail: "the catalog places the start of this event's recording at position \(place.position)")
            }
            if let known = shared.lookup(key) {
                recent[key] = known
                return .recording(known)
            }
            if !final { return .notYet }
            // Its first event was damaged, and skipped: the recording is not read.
            if skipping { return .none }
            throw ReplayError.catalogContradictsEvents(position: place.position, detail: "the catalog places a recording's start here, where none starts")
        }

        /// The event as projections see it, with its conversation.
        mutating func decode(_ stored: StoredEvent, _ key: UUIDKey, of recording: Recording) throws -> Decoded {
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

        /// `stored` decoded, nil for an event of no recording, or `.notYet`.
        mutating func decode(_ stored: StoredEvent, final: Bool) throws -> Decoded?? {
            let key = UUIDKey(stored.stream)
            switch try recording(of: stored, key, final: final) {
            case .recording(let recording): return .some(try decode(stored, key, of: recording))
            case .none: return .some(nil)
            case .notYet: return nil
            }
        }
    }

    /// The recordings the decoding threads have learnt, by chunk: a thread that meets a
    /// recording begun in an earlier chunk finds it here, waiting (once a chunk, after
    /// reading it) until every earlier chunk has been handed over.
    final class Recordings: @unchecked Sendable {
        // Guarded by `condition`.
        private let condition = NSCondition()
        private var known: [UUIDKey: Recording] = [:]
        /// Chunks 0..<through are handed over; those past it that are, in `early`.
        private var through = 0
        private var early = Set<Int>()
        private var cancelled = false

        /// Every recording, read before the pass: no thread waits for another's.
        func fill(_ all: [UUIDKey: Recording]) {
            condition.lock()
            defer { condition.unlock() }
            known = all
            through = .max
            condition.broadcast()
        }

        func lookup(_ key: UUIDKey) -> Recording? {
            condition.lock()
            defer { condition.unlock() }
            return known[key]
        }

        /// The recordings learnt in `chunk` (nil: by the only thread, in no chunk).
        func add(_ learnt: [UUIDKey: Recording], chunk: Int?) {
            condition.lock()
            defer { condition.unlock() }
            known.merge(learnt) { first, _ in first }
            guard let chunk, through != .max else { return }
            early.insert(chunk)
            while early.remove(through) != nil { through += 1 }
            condition.broadcast()
        }

        /// Waits until chunks 0..<chunk are handed over; false once the pass is over.
        func waitForChunks(before chunk: Int) -> Bool {
            condition.lock()
            defer { condition.unlock() }
            while through < chunk && !cancelled { condition.wait() }
            return !cancelled
        }

        func cancel() {
            condition.lock()
            cancelled = true
            condition.broadcast()
            condition.unlock()
        }
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

    /// Between the calling thread and the decoding threads before the first chunk, for a
    /// log whose catalog does not place its recordings: the second decoding thread reads
    /// the second stretch of the recordings' heads on its connection while the calling
    /// thread reads the first (reading a head inflates its block, and a recording begins
    /// in most blocks: alone, a fifth of a pass on one core), and every decoding thread
    /// waits until the recordings are known.
    private final class Handoff: @unchecked Sendable {
        // Guarded by `condition`.
        private let condition = NSCondition()
        private var second: Result<[(UUID, Recording, Int64)], Error>?
        private var going: Bool?

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

        /// Lets the decoding threads go, or stop (the first call counts).
        func go(_ going: Bool) {
            condition.lock()
            if self.going == nil { self.going = going }
            condition.broadcast()
            condition.unlock()
        }

        /// False when the pass stopped before its first chunk.
        func waitToGo() -> Bool {
            condition.lock()
            defer { condition.unlock() }
            while going == nil { condition.wait() }
            return going!
        }
    }

    /// Decoded chunks on their way from the decoding threads to the folding one.
    private final class Mailbox: @unchecked Sendable {
        // Guarded by `condition`.
        private let condition = NSCondition()
        private var ready: [Int: Result<(Int, [Decoded?], [Error]), Error>] = [:]
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

        func put(_ chunk: Int, _ result: Result<(Int, [Decoded?], [Error]), Error>) {
            condition.lock()
            ready[chunk] = result
            condition.broadcast()
            condition.unlock()
        }

        func take(_ chunk: Int, lane: Int) -> Result<(Int, [Decoded?], [Error]), Error> {
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
        /// Its recordings whose first events it met (the catalog's places, confirmed).
        var streams = Set<UUID>()
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
        // Where the catalog places each recording, read from indexes: the pass then learns
        // each recording from its first event as it reads it (checked against the entry
        // there) instead of reading every recording's first event before it, which inflated
        // most blocks twice. Without a complete catalog, or with one that gives a recording
        // two conversations, the first events are read before the pass, as before.
        let places: CatalogPlaces? = try store.catalogEntriesWithLastPositions(.conversation).flatMap { entries in
            var built = CatalogPlaces(minimumCapacity: entries.count)
            for (entry, end) in entries {
                let conversation = ConversationID(entry.tag.id)
                guard built.updateValue((conversation, entry.position), forKey: UUIDKey(entry.stream)) == nil else {
                    lastPosition = [:]
                    return nil
                }
                lastPosition[conversation] = max(lastPosition[conversation] ?? 0, end)
            }
            return built
        }
        let recordings = Recordings()
        let folds = Folds(parallel: parallel)
        var open: [ConversationID: Open] = [:]
        var later: [(ConversationID, Set<UUID>)] = []
        /// A conversation's recordings: those read before the pass, or, where the catalog
        /// placed them, those whose first events the pass met (a catalog row the events
        /// contradict, skipped as damage, adds no recording to another conversation).
        func streams(of entry: Open) -> Set<UUID> {
            places == nil ? streamsOf[entry.conversation] ?? [] : entry.streams
        }
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
                let count = entry.count, span = (entry.first, entry.last), streams = streams(of: entry)
                folds.submit(holding: kept.count) {
                    let events = inOrder ? kept : Replayer.inReplayOrder(kept)
                    return Finished(state: ConversationState.folding(conversation, events, games: games, as: perspective),
                                    events: count, span: span, streams: streams, devices: Replayer.devices(of: events))
                }
            } else if let state = entry.state, entry.inReplayOrder {
                folds.submit(folded: Finished(state: state.playerView(for: perspective), events: entry.count,
                                              span: (entry.first, entry.last), streams: streams(of: entry), devices: nil))
            } else {
                later.append((entry.conversation, streams(of: entry)))
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
            case .recordingStarted: entry.streams.insert(event.stream)
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
            if places == nil {
                learn(try heads(0, of: 1, store))
                recordings.fill(conversationOfStream)
                conversationOfStream = [:]
            }
            var lane = Lane(catalog: places, shared: recordings, skipping: damaged != nil)
            try store.scan(verify: verify, skippingDamaged: damaged) { stored in
                statistics.events += 1
                if statistics.events % 16_384 == 0 {
                    progress?(statistics.events)
                    lane.handOver(chunk: nil)
                }
                let decoded: Decoded?
                do {
                    // One thread reads in order: every earlier recording is known.
                    decoded = try lane.decode(stored, final: true) ?? nil
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
                    if lane == 1 && places == nil { handoff.put(second: Result { try heads(1, of: 2, reader) }) }
                    guard handoff.waitToGo() else { return }
                    var decoding = Lane(catalog: places, shared: recordings, skipping: skipping)
                    for chunk in stride(from: lane, to: chunks, by: decoders) {
                        guard mailbox.waitForRoom(lane: lane) else { return }
                        var items: [Decoded?] = []
                        items.reserveCapacity(size)
                        // Events of recordings begun in an earlier chunk another thread has
                        // not handed over yet, by their place in `items`.
                        var waiting: [(Int, StoredEvent)] = []
                        var read = 0
                        var skipped: [Error] = []
                        let first = Int64(chunk) * Int64(size) + 1
                        do {
                            try reader.scan(EventQuery(positions: first...(first + Int64(size) - 1)), verify: verify,
                                            skippingDamaged: skipping ? { skipped.append($0) } : nil) { stored in
                                read += 1
                                do {
                                    switch try decoding.decode(stored, final: false) {
                                    case .some(let decoded?): items.append(decoded)
                                    case .some(nil): break
                                    case nil:
                                        waiting.append((items.count, stored))
                                        items.append(nil)
                                    }
                                } catch where skipping {
                                    skipped.append(error)
                                }
                            }
                            // Handed over as soon as the chunk is read, before its waiting
                            // events: the next chunk's thread waits for these alone.
                            decoding.handOver(chunk: chunk)
                            if !waiting.isEmpty {
                                guard recordings.waitForChunks(before: chunk) else { return }
                                for (index, stored) in waiting {
                                    do {
                                        items[index] = try decoding.decode(stored, final: true) ?? nil
                                    } catch where skipping {
                                        skipped.append(error)
                                    }
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
                handoff.go(false)
                mailbox.cancel()
                recordings.cancel()
            }
            if places == nil {
                // The first stretch of heads here, the second on the second decoding thread; the
                // first's error first, as one reader would meet it.
                // Both lists dropped once learnt (see ``Handoff/takeSecond()``).
                let first = Result { try heads(0, of: 2, store) }
                let second = handoff.takeSecond()
                learn(try first.get())
                learn(try second.get())
                recordings.fill(conversationOfStream)
                conversationOfStream = [:]
            }
            handoff.go(true)
            for chunk in 0..<chunks {
                var (read, items, skipped) = try mailbox.take(chunk, lane: chunk % decoders).get()
                skipped.forEach { damaged?($0) }
                while let next = items.popLast() {
                    guard let (conversation, event) = next else { continue }
                    route(conversation, event)
                }
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
        for (conversation, streams) in later {
            let events = try Replayer.load(from: store, streams: streams)
            let times = events.lazy.map(\.recordedAt)
            try finished(Finished(state: ConversationState.folding(conversation, events, games: games, as: perspective),
                                  events: events.count, span: (times.min() ?? 0, times.max() ?? 0),
                                  streams: streams, devices: Replayer.devices(of: events)))
            statistics.rereadConversations += 1
        }
        return statistics
    }
}
