import EventStore
import Foundation
import GameKit
import MessagesModel
import Projections
import RecordedEvents
import StoredEvents

/// Moves through one conversation's recorded events like a debugger: the state at any
/// step, the event at each step, searches by time and kind, and diffs.
///
/// Step 0 is before any event; step N is after the conversation's N-th event. States
/// are rebuilt from snapshots taken every ``snapshotInterval`` steps, so reaching any
/// step costs at most that many reducer steps.
///
/// A replayer may be used from several threads at once: its caches (the snapshots, the
/// devices' views) are behind a lock held only to look up or store an entry, never while
/// folding, so requests for one game fold in parallel.
public final class Replayer: @unchecked Sendable {
    public let conversation: ConversationID
    /// The conversation's events in log order.
    public let events: [ReplayEvent]
    public let snapshotInterval: Int
    /// The games whose boards the states fold.
    public let games: GameRegistry
    /// States every ``snapshotInterval`` steps, per perspective (a device's fold
    /// skips other devices' events, so each perspective keeps its own). Under `cache`.
    private var snapshots: [Perspective: [Int: ConversationState]] = [:]
    /// Guards `snapshots` and `views`.
    private let cache = NSLock()

    /// Events that could not be read and were left out (with `skippingDamaged`).
    public private(set) var damaged: [EventStoreError] = []

    /// The damaged events left out at or before step `n` (by log position): the state
    /// at `n` may differ from what the devices showed if any.
    public func damage(through n: Int) -> [EventStoreError] {
        guard !damaged.isEmpty else { return [] }
        let limit = n <= 0 ? 0 : n > events.count ? Int64.max : events[n - 1].position
        return damaged.filter { ($0.position ?? 0) <= limit }
    }

    /// The views of single devices made so far (see ``seen(by:)``).
    private var views: [Perspective: Replayer] = [:]

    /// Each game's events (by position), once a fold over all of this replayer's events
    /// has noted them: ``positions(ofGame:)`` answers every game from one fold, and a
    /// whole ``forEachStep(in:as:_:)`` notes them on its way. Under `cache`.
    private var eventsOfGames: [SessionID: Set<Int64>]?

    /// Snapshots taken from the store (not rebuilt here), for tests and reports.
    public private(set) var storedSnapshotsUsed = 0

    /// - Parameter useStoredSnapshots: start from snapshots `gamelog index` stored,
    ///   when they are of this projection version and still match the log's event
    ///   there. Off by default: nothing signs a snapshot, so a forged one could show
    ///   a state the events never produced; `gamelog verify` re-derives them all.
    /// - Parameter skippingDamaged: leave out events that cannot be read (listed in
    ///   ``damaged``) instead of failing: every other step still shows, and
    ///   ``damage(through:)`` says which states may differ from what the devices showed.
    public init(store: any EventLogReader, conversation: ConversationID, streams: Set<UUID>, snapshotInterval: Int = 32,
                useStoredSnapshots: Bool = false, verify: Bool = true, skippingDamaged: Bool = false, games: GameRegistry) throws {
        self.conversation = conversation
        self.games = games
        self.snapshotInterval = max(1, snapshotInterval)
        var damaged: [EventStoreError] = []
        events = try Self.load(from: store, streams: streams, verify: verify, skippingDamaged: skippingDamaged ? { damaged.append($0) } : nil)
        self.damaged = damaged
        devices = Self.devices(of: events)
        guard useStoredSnapshots else { return }
        let decoder = JSONDecoder(games: games)
        for stored in try store.snapshots(conversation: conversation.uuid, projectionVersion: ConversationState.projectionVersion) {
            // Trust a snapshot only where the log still has the very event it was taken after.
            guard stored.step <= events.count, stored.step % self.snapshotInterval == 0,
                  events[stored.step - 1].position == stored.position, events[stored.step - 1].hash == stored.eventHash,
                  let state = try? decoder.decode(ConversationState.self, from: Data(stored.state)),
                  state.step == stored.step, state.conversation == conversation else { continue }
            snapshots[.auditor, default: [:]][stored.step] = state
            storedSnapshotsUsed += 1
        }
    }

    /// A replayer of events already read (in ``load(from:streams:verify:skippingDamaged:)``'s order).
    init(conversation: ConversationID, events: [ReplayEvent], snapshotInterval: Int = 32, games: GameRegistry) {
        self.conversation = conversation
        self.events = events
        self.snapshotInterval = snapshotInterval
        self.games = games
        devices = Self.devices(of: events)
    }

    /// The replayer of what `perspective` saw: for a device, its own events alone, as
    /// steps 1...n of its own, so that stepping through its view tells nothing of other
    /// devices' events, not even how many there were or when. The auditor's is this one.
    public func seen(by perspective: Perspective) -> Replayer {
        guard case .device = perspective else { return self }
        if let known = cache.withLock({ views[perspective] }) { return known }
        let view = Replayer(conversation: conversation, events: events.filter(perspective.sees), snapshotInterval: snapshotInterval,
                            games: games)
        view.damaged = damaged
        // Two threads may have made it at once: the first kept is everyone's.
        return cache.withLock {
            if let raced = views[perspective] { return raced }
            views[perspective] = view
            return view
        }
    }

    /// The step of `other` (another view of this conversation) that shows the moment of
    /// step `n` here: its last event at or before this step's event.
    public func step(_ n: Int, in other: Replayer) -> Int {
        guard n > 0, n <= events.count else { return n <= 0 ? 0 : other.stepCount }
        let position = events[n - 1].position
        return other.events.lastIndex { $0.position <= position }.map { $0 + 1 } ?? 0
    }

    /// Snapshots of this conversation every ``snapshotInterval`` steps, to store.
    public func snapshotsToStore() throws -> [StoredSnapshot] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        var out: [StoredSnapshot] = []
        var step = snapshotInterval
        while step <= events.count {
            let state = try self.state(at: step)
            out.append(StoredSnapshot(conversation: conversation.uuid, projectionVersion: ConversationState.projectionVersion,
                                      step: step, position: events[step - 1].position, eventHash: events[step - 1].hash,
                                      state: Array(try encoder.encode(state))))
            step += snapshotInterval
        }
        return out
    }

    /// A conversation's events in the order they happened: by recording time, then by
    /// position. Logs merged from several devices one after the other hold each
    /// device's events in a block; time puts them back in step.
    /// - Parameter verify: check each event's chain hash as it is read; pass false
    ///   only when the caller has just checked the whole chain.
    public static func load(from store: any EventLogReader, streams: Set<UUID>, verify: Bool = true,
                            skippingDamaged damaged: ((EventStoreError) -> Void)? = nil) throws -> [ReplayEvent] {
        inReplayOrder(try read(from: store, streams: streams, verify: verify, skippingDamaged: damaged))
    }

    /// Several conversations' events, read in one pass of the store (a shared store answers
    /// one statement, not one or two per conversation), each conversation's in the order it
    /// happened. Each is ordered on its own, as ``load(from:streams:verify:skippingDamaged:)``
    /// orders it: ordered together, one device's events in two conversations hold each
    /// other back, and a conversation's order would depend on which others were read with it.
    /// - Parameter streamsOf: each conversation's recordings.
    public static func load(from store: any EventLogReader, conversations streamsOf: [ConversationID: Set<UUID>], verify: Bool = true,
                            skippingDamaged damaged: ((EventStoreError) -> Void)? = nil) throws -> [ConversationID: [ReplayEvent]] {
        var conversationOf: [UUID: ConversationID] = [:]
        for (conversation, streams) in streamsOf { for stream in streams { conversationOf[stream] = conversation } }
        var eventsOf: [ConversationID: [ReplayEvent]] = [:]
        for event in try read(from: store, streams: Set(conversationOf.keys), verify: verify, skippingDamaged: damaged) {
            if let conversation = conversationOf[event.stream] { eventsOf[conversation, default: []].append(event) }
        }
        return eventsOf.mapValues(inReplayOrder)
    }

    /// The events of `streams`, in position order.
    private static func read(from store: any EventLogReader, streams: Set<UUID>, verify: Bool,
                             skippingDamaged damaged: ((EventStoreError) -> Void)?) throws -> [ReplayEvent] {
        var loaded: [ReplayEvent] = []
        var decoder = StreamDecoder(store: store)
        try store.scan(EventQuery(streams: streams), verify: verify, skippingDamaged: damaged) { stored in
            do {
                loaded.append(try ReplayEvent(stored, decoder: &decoder))
            } catch {
                // A payload that reads as bytes but not as an event: damaged like any other.
                guard let damaged else { throw error }
                if case ReplayError.undecodableEvent(let position, let detail) = error {
                    damaged(.corruptPayload(position: position, detail: detail))
                } else {
                    damaged(.corruptPayload(position: stored.position, detail: "\(error)"))
                }
            }
        }
        return loaded
    }

    /// A conversation's events in the order the replayer folds them: by time (then
    /// position), arrivals after their sends (``causallyOrdered(_:)``).
    public static func inReplayOrder(_ events: [ReplayEvent]) -> [ReplayEvent] {
        causallyOrdered(events.sorted { ($0.recordedAt, $0.position) < ($1.recordedAt, $1.position) })
    }

    /// Events in time order, except that no message arrives before it was sent: phones'
    /// clocks differ, so in a log merged from several a slow device's arrival can carry
    /// an earlier time than the send it answers. Each device's own events keep their
    /// order; among devices the earliest event goes first unless it is the arrival of a
    /// message whose send, recorded in this log, has not gone yet.
    /// The message a `transcript.sent` put on its way, if any: a failed send (its message
    /// carries the error) went nowhere, so an arrival follows the send that left (the
    /// user's Try Again), not it.
    static func messageThatLeft(_ item: Item) -> MessageID? {
        guard let message = item.message, message.error == nil else { return nil }
        return message.id
    }

    public static func causallyOrdered(_ events: [ReplayEvent]) -> [ReplayEvent] {
        func message(_ e: ReplayEvent) -> (id: MessageID, arrival: Bool)? {
            switch e.event {
            case .transcript(.sent(let item), _): return messageThatLeft(item).map { ($0, false) }
            case .transcript(.arrived(let item, _), _): return item.message.map { ($0.id, true) }
            default: return nil
            }
        }
        let messages = events.map(message)
        var sent = Set<MessageID>()
        for case let (id, false)? in messages { sent.insert(id) }
        // Nothing to fix unless some arrival comes before its send.
        var seen = Set<MessageID>(), inOrder = true
        for case let (id, arrival)? in messages {
            if !arrival { seen.insert(id) } else if sent.contains(id) && !seen.contains(id) { inOrder = false; break }
        }
        if inOrder { return events }
        // Each device's events as a lane of indices (events are large values: they are
        // moved once, at the end), lanes in order of their first event.
        var laneOfDevice: [DeviceID?: Int] = [:]
        var lanes: [[Int]] = []
        for index in events.indices {
            if let lane = laneOfDevice[events[index].device] {
                lanes[lane].append(index)
            } else {
                laneOfDevice[events[index].device] = lanes.count
                lanes.append([index])
            }
        }
        func comesBefore(_ a: Int, _ b: Int) -> Bool {
            (events[a].recordedAt, events[a].position) < (events[b].recordedAt, events[b].position)
        }
        var heads = Array(repeating: 0, count: lanes.count)
        var emitted = Set<MessageID>()
        var order: [Int] = []
        order.reserveCapacity(events.count)
        while order.count < events.count {
            var best: (lane: Int, index: Int)?, fallback: (lane: Int, index: Int)?
            for lane in lanes.indices where heads[lane] < lanes[lane].count {
                let index = lanes[lane][heads[lane]]
                if fallback == nil || comesBefore(index, fallback!.index) { fallback = (lane, index) }
                if case let (id, true)? = messages[index], sent.contains(id), !emitted.contains(id) { continue }
                if best == nil || comesBefore(index, best!.index) { best = (lane, index) }
            }
            // Every head waits on a send: the log contradicts itself; time decides.
            guard let (lane, index) = best ?? fallback else { break }
            heads[lane] += 1
            if case let (id, false)? = messages[index] { emitted.insert(id) }
            order.append(index)
        }
        return order.map { events[$0] }
    }

    public var stepCount: Int { events.count }

    /// The devices whose recordings this conversation holds, by name.
    public let devices: [DeviceID]

    /// The devices `events` came from, in order. A device's events come in runs, so each
    /// event costs a comparison with the one before, not a hash (a full replay asks this
    /// of every conversation).
    static func devices(of events: [ReplayEvent]) -> [DeviceID] {
        var found = Set<DeviceID>()
        var last: DeviceID?
        for event in events {
            guard let device = event.device, device != last else { continue }
            found.insert(device)
            last = device
        }
        return found.sorted()
    }

    /// Parses `auditor` or one of this conversation's devices.
    public func perspective(_ text: String) throws(PerspectiveError) -> Perspective {
        try Perspective(text, devices: devices)
    }

    /// The event that step `n` applies (n in 1...stepCount).
    public func event(at step: Int) -> ReplayEvent? {
        (1...max(1, events.count)).contains(step) && step <= events.count ? events[step - 1] : nil
    }

    /// The state after `step` events, as `perspective` sees it.
    public func state(at step: Int, as perspective: Perspective = .auditor) throws -> ConversationState {
        guard (0...events.count).contains(step) else { throw ReplayError.stepOutOfRange(step, count: events.count) }
        return fold(to: step, as: perspective).playerView(for: perspective)
    }

    /// The fold (before any player view) after `step` events: from the nearest snapshot.
    private func fold(to step: Int, as perspective: Perspective) -> ConversationState {
        let base = step / snapshotInterval * snapshotInterval
        var state = snapshot(at: base, as: perspective)
        for index in base..<step where perspective.sees(events[index]) { state.apply(events[index]) }
        return state
    }

    /// Folds the steps of `range` one after another (one pass, not one fold per step),
    /// handing each step with the state before and after it and its event, all as
    /// `perspective` sees them (the event as ``viewedEvent(at:as:)`` gives it).
    public func forEachStep(in range: ClosedRange<Int>, as perspective: Perspective,
                            _ body: (_ step: Int, _ before: ConversationState, _ after: ConversationState,
                                     _ event: RecordedEvent) throws -> Void) throws {
        guard range.lowerBound >= 1, range.upperBound <= events.count else {
            throw ReplayError.stepOutOfRange(range.lowerBound < 1 ? range.lowerBound : range.upperBound, count: events.count)
        }
        var fold = fold(to: range.lowerBound - 1, as: perspective)
        var before = fold.playerView(for: perspective)
        // A fold of every event (the auditor's, or a device's own view, which holds only
        // what it saw) is the one `positions(ofGame:)` makes: it notes each game's events
        // on the way, and keeps the states a later `state(at:)` starts from.
        var lister = range == 1...events.count && cache.withLock({ eventsOfGames == nil }) ? GameEventsLister() : nil
        for step in range {
            let event = events[step - 1]
            if perspective.sees(event) {
                fold.apply(event)
                lister?.note(event, folded: fold)
            } else {
                lister = nil
            }
            if step % snapshotInterval == 0 { keep(fold, at: step, as: perspective) }
            let after = fold.playerView(for: perspective)
            let seen = perspective == .auditor ? event.event : fold.view(of: event.event, as: perspective)
            try body(step, before, after, seen)
            before = after
        }
        if let listed = lister?.finished() { cache.withLock { if eventsOfGames == nil { eventsOfGames = listed } } }
    }

    /// Lists each game's events beside a fold of every event: the fold's own membership
    /// counts them; this one, fed the same events and sessions, lists them.
    private struct GameEventsLister {
        private var membership = GameMembership()
        private var listed: [SessionID: Set<Int64>] = [:]

        /// Notes `event`, once `folded` has applied it.
        mutating func note(_ event: ReplayEvent, folded: ConversationState) {
            let sessions = folded.sessionOfMessage
            membership.note(event, sessionOf: { sessions[$0] }) { listed[$0, default: []].insert($1) }
        }

        /// Every game's events, those of activations still under way included.
        consuming func finished() -> [SessionID: Set<Int64>] {
            membership.pending { listed[$0, default: []].insert($1) }
            return listed
        }
    }

    /// Keeps the fold at a multiple of the snapshot interval, unless one is kept there.
    private func keep(_ state: ConversationState, at step: Int, as perspective: Perspective) {
        cache.withLock {
            if snapshots[perspective]?[step] == nil { snapshots[perspective, default: [:]][step] = state }
        }
    }

    /// The positions of the events that belong to one game (session) of the conversation,
    /// as ``GameMembership`` decides (the same fold that counts a game's events for `games`):
    /// those that carry one of its messages or have one selected, and every other event of
    /// an activation that touched it, such as the taps that made its first move. Another
    /// game played beside it in the same conversation keeps its own events.
    public func positions(ofGame session: SessionID) -> Set<Int64> {
        if let known = cache.withLock({ eventsOfGames }) { return known[session] ?? [] }
        // Every game's, so the next game asked of this conversation folds nothing.
        var state = ConversationState(conversation: conversation, games: games)
        var lister = GameEventsLister()
        for e in events {
            state.apply(e)
            lister.note(e, folded: state)
        }
        let out = lister.finished()
        let kept = cache.withLock {
            if eventsOfGames == nil { eventsOfGames = out }
            return eventsOfGames!
        }
        return kept[session] ?? []
    }

    /// The event of step `n` as `perspective` may see it (nil for a step out of range,
    /// or another device's event under a device's perspective): every message it carries
    /// through the game's player view, with the game as that device knew it then.
    public func viewedEvent(at step: Int, as perspective: Perspective) -> RecordedEvent? {
        guard let event = event(at: step), perspective.sees(event) else { return nil }
        guard case .device = perspective else { return event.event }
        return fold(to: step, as: perspective).view(of: event.event, as: perspective)
    }

    /// The fold (before any player view) at a multiple of the snapshot interval.
    private func snapshot(at step: Int, as perspective: Perspective) -> ConversationState {
        // The nearest kept state, looked up under the lock; the fold from it runs without
        // it (two threads may fold the same stretch: the states are equal).
        let (nearest, start): (Int, ConversationState) = cache.withLock {
            if let known = snapshots[perspective]?[step] { return (step, known) }
            var nearest = step
            while nearest > 0 && snapshots[perspective]?[nearest] == nil { nearest -= snapshotInterval }
            return (nearest, snapshots[perspective]?[nearest] ?? ConversationState(conversation: conversation, games: games))
        }
        var state = start
        for index in nearest..<step {
            if perspective.sees(events[index]) { state.apply(events[index]) }
            if (index + 1) % snapshotInterval == 0 {
                let made = state
                cache.withLock { snapshots[perspective, default: [:]][index + 1] = made }
            }
        }
        return state
    }

    /// The first step whose event was recorded at or after `time`.
    public func step(atOrAfter time: Timestamp) -> Int? {
        events.firstIndex { $0.recordedAt >= time.microsecondsSince1970 }.map { $0 + 1 }
    }

    /// The next step after `step` whose event type equals `kind` or starts with `kind.`.
    public func nextStep(after step: Int, kind: String) -> Int? {
        guard step < events.count else { return nil }
        return events[step...].firstIndex { $0.event.type == kind || $0.event.type.hasPrefix(kind + ".") }.map { $0 + 1 }
    }

    /// The previous step before `step` whose event has this kind.
    public func previousStep(before step: Int, kind: String) -> Int? {
        guard step > 1 else { return nil }
        return events[..<(step - 1)].lastIndex { $0.event.type == kind || $0.event.type.hasPrefix(kind + ".") }.map { $0 + 1 }
    }

    /// The next step after `step` where a message was sent or arrived.
    public func nextMessage(after step: Int) -> Int? { nextStep(after: step, kind: "transcript") }

    /// What changed between two steps.
    public func diff(from a: Int, to b: Int, as perspective: Perspective = .auditor) throws -> [StateChange] {
        ConversationState.diff(try state(at: a, as: perspective), try state(at: b, as: perspective))
    }
}
