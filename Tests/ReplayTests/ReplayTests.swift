import RecordedEvents
import BattleshipGame
import EventStore
import Foundation
import GRDB
import MessagesHost
import MessagesModel
import Projections
import Recorder
import Replay
import Simulation
import TestSupport
import Games
import GameKit
import Testing

/// Plays `games` noisy games, checking after each that the projections rebuilt from
/// the stored events equal what the live simulated host shows.
@Suite struct ProjectionTests {
    @Test func projectionsRebuildWhatEveryDeviceShowed() throws {
        let folder = try TemporaryFolder()
        let store = try EventStore(path: folder.path("log.sqlite"))
        let simulator = Simulator(recorder: Recorder(store: store, clock: FixedClock(), seed: 17), games: .standard, seed: 17, noise: 0.25)
        var finishedGames = 0
        for n in 0..<40 {
            let report = try simulator.play(n.isMultiple(of: 2) ? "battleship" : "tictactoe")
            let host = try #require(simulator.lastHost)
            let catalog = try GameCatalog(store: store, games: .standard)
            let streams = catalog.streams[report.conversation] ?? []
            let replayer = try Replayer(store: store, conversation: report.conversation, streams: streams, games: .standard)
            let state = try replayer.state(at: replayer.stepCount)
            for device in host.deviceIDs {
                let view = try #require(state.devices[device])
                #expect(view.transcript.map(\.bubble) == host.transcript(on: device, in: report.conversation), "game \(n) device \(device)")
                #expect(view.staged == host.staged(on: device, in: report.conversation), "game \(n) device \(device)")
                let live = host.instance(on: device, in: report.conversation)
                let active = live?.isActive == true && host.currentConversation(of: device) == report.conversation
                #expect(view.isActive == (live?.isActive ?? false), "game \(n) device \(device)")
                if active, let live {
                    #expect(view.screen == live.extension.screen, "game \(n) device \(device)")
                    #expect(view.style == live.style)
                }
            }
            // The game's result agrees with the simulator's.
            if report.finished, let game = state.orderedGames.last {
                #expect(game.status == (report.isOver ? .finished : .inProgress), "game \(n): \(game.status)")
                #expect(game.winner == report.winner, "game \(n)")
                finishedGames += report.isOver ? 1 : 0
            }
        }
        #expect(finishedGames > 20)
    }
}

@Suite struct ReplayEngineTests {
    func recorded(_ games: Int, seed: UInt64) throws -> (TemporaryFolder, EventStore, GameCatalog) {
        let folder = try TemporaryFolder()
        let store = try EventStore(path: folder.path("log.sqlite"))
        let simulator = Simulator(recorder: Recorder(store: store, clock: FixedClock(), seed: seed), games: .standard, seed: seed, noise: 0.2)
        for n in 0..<games { try simulator.play(n.isMultiple(of: 2) ? "battleship" : "tictactoe") }
        return (folder, store, try GameCatalog(store: store, games: .standard))
    }

    /// The one-pass catalog gives what folding each conversation on its own gives,
    /// holding few conversations at a time.
    @Test func theOnePassCatalogEqualsFoldingEachConversation() throws {
        let (_, store, catalog) = try recorded(24, seed: 29)
        var expected: [GameSummary] = []
        for (conversation, streams) in catalog.streams {
            let events = try Replayer.load(from: store, streams: streams)
            let state = ConversationState.folding(conversation, events, games: .standard)
            expected += GameCatalog.summaries(of: state)
            #expect(catalog.eventCounts[conversation] == events.count)
            #expect(catalog.kinds[conversation] == state.kind)
        }
        #expect(catalog.games.count >= 24)
        #expect(catalog.games == expected.sorted { $0.firstPosition < $1.firstPosition })
        #expect(catalog.reorderedConversations == 0)
        #expect(catalog.mostOpenConversations <= 2)
    }

    /// Decoding threads hand chunks to the folding thread: the same conversations,
    /// in the same order, as one thread reading alone.
    @Test func theParallelPassEqualsOneThread() throws {
        let (folder, store, _) = try recorded(12, seed: 31)
        defer { withExtendedLifetime(folder) {} }
        func pass(lanes: Int) throws -> ([ConversationState], FullReplay.Statistics) {
            var states: [ConversationState] = []
            let statistics = try FullReplay.run(store: store, lanes: lanes, chunkSize: 37, games: .standard) { states.append($0.state) }
            return (states, statistics)
        }
        let (serial, one) = try pass(lanes: 1), (parallel, two) = try pass(lanes: 2), (three, _) = try pass(lanes: 3)
        #expect(serial.count >= 12)
        #expect(parallel == serial)
        #expect(three == serial)
        let stored = Int(try store.count().events)
        #expect(one.events == two.events && one.events == stored)
    }

    /// A pass run on a lowered thread (a viewer's background list) folds below the
    /// process's other threads, on the threads it hands conversations to as well; one
    /// run on an ordinary thread keeps the ordinary priority.
    @Test func aPassOnALoweredThreadFoldsEveryConversationLowered() throws {
        #if canImport(Glibc)
        let folder = try TemporaryFolder()
        let path = folder.path("log.sqlite")
        try recordGames("battleship", count: 6, at: path, seed: 8)
        let plugin = PriorityNotingBattleship()
        let games = GameRegistry([plugin])
        // Chunks of 16: folds are handed to other threads from the 64th event on.
        #expect(try EventStore(path: path, access: .readOnly).lastPosition() >= 4 * 16)
        @Sendable func pass() throws -> Int {
            var finished = 0
            try FullReplay.run(store: try EventStore(path: path, access: .readOnly), lanes: 2, chunkSize: 16, games: games) { _ in finished += 1 }
            return finished
        }
        #expect(try pass() >= 6)
        let ordinary = plugin.notes.take()
        #expect(ordinary.normal > 0 && ordinary.lowered == 0, "\(ordinary)")

        let outcome = OutcomeBox()
        Thread {
            ThreadPriority.lowerCallingThread()
            outcome.set(Result { try pass() })
        }.start()
        #expect(try outcome.wait().get() >= 6)
        let lowered = plugin.notes.take()
        #expect(lowered.lowered > 0 && lowered.normal == 0, "\(lowered)")
        #endif
    }

    /// A caller that throws from `finished` stops the pass with its error, on one thread
    /// and with folds on others (nothing waits for a fold nobody will take).
    @Test func aThrowingCallerStopsThePass() throws {
        let (folder, store, _) = try recorded(8, seed: 41)
        defer { withExtendedLifetime(folder) {} }
        struct Enough: Error, Equatable {}
        for lanes in [1, 2] {
            var handed = 0
            #expect(throws: Enough()) {
                try FullReplay.run(store: store, lanes: lanes, chunkSize: 16, games: .standard) { _ in
                    handed += 1
                    if handed == 3 { throw Enough() }
                }
            }
            #expect(handed == 3)
        }
    }

    /// A changed byte in a chunk a decoding thread reads stops the pass with the
    /// error at that event, as one thread would.
    @Test func aDamagedEventStopsTheParallelPassAtItsPosition() throws {
        let (folder, store, _) = try recorded(6, seed: 37)
        let (count, _) = try store.count()
        let victim = count * 2 / 3
        let path = folder.path("log.sqlite")
        try BlockSurgery.alter(path, position: victim) { $0.recordedAt += 1 }
        let damaged = try EventStore(path: path, access: .readOnly)
        for lanes in [1, 2] {
            #expect(throws: EventStoreError.hashMismatch(position: victim)) {
                try FullReplay.run(store: damaged, lanes: lanes, chunkSize: 50, games: .standard) { _ in }
            }
        }
    }

    /// An unreadable recording start in each half of the log stops the pass at the first,
    /// as one reader would: read in the pass (the catalog places the recordings), where
    /// the chain check meets it first, or unchecked, where its payload does; and read
    /// before the pass in two stretches on two threads (a log without a complete catalog).
    @Test func anUnreadableRecordingStartStopsThePassAtTheFirst() throws {
        let (folder, store, catalog) = try recorded(6, seed: 43)
        var starts: [Int64] = []
        try store.scanStreamHeads { starts.append($0.first.position) }
        #expect(starts.count == catalog.streams.values.reduce(0) { $0 + $1.count } && starts.count >= 4)
        let path = folder.path("log.sqlite")
        let early = starts[1], late = starts[starts.count - 1]
        try BlockSurgery.garble(path, position: early)
        try BlockSurgery.garble(path, position: late)
        let damaged = try EventStore(path: path, access: .readOnly)
        #expect(try damaged.catalogIsComplete())
        for lanes in [1, 2] {
            #expect(throws: EventStoreError.hashMismatch(position: early)) {
                try FullReplay.run(store: damaged, lanes: lanes, chunkSize: 50, games: .standard) { _ in }
            }
            #expect(throws: ReplayError.undecodableEvent(position: early, detail: "a recording.started payload")) {
                try FullReplay.run(store: damaged, verify: false, lanes: lanes, chunkSize: 50, games: .standard) { _ in }
            }
        }
        try DatabaseQueue(path: path).write { try $0.execute(sql: "UPDATE catalog_coverage SET through = 0") }
        let uncatalogued = try EventStore(path: path, access: .readOnly)
        #expect(try !uncatalogued.catalogIsComplete())
        for lanes in [1, 2] {
            #expect(throws: ReplayError.undecodableEvent(position: early, detail: "a recording.started payload")) {
                try FullReplay.run(store: uncatalogued, lanes: lanes, chunkSize: 50, games: .standard) { _ in }
            }
        }
    }

    /// The pass learns each recording where the catalog places its start, and holds the
    /// catalog to the events there: the same conversations as a pass that reads every
    /// start first (a log without a complete catalog); a catalog row changed (another
    /// conversation, another position, a recording left out) stops it with the position,
    /// on one thread and on several; a recording named twice is read as without a catalog.
    @Test func theCatalogPlacesRecordingsOnlyWhereTheEventsAgree() throws {
        let (folder, _, _) = try recorded(10, seed: 47)
        let path = folder.path("log.sqlite")
        func pass(_ path: String, lanes: Int, skipping: Bool = false) throws -> [FullReplay.Finished] {
            var finished: [FullReplay.Finished] = []
            try FullReplay.run(store: try EventStore(path: path, access: .readOnly), lanes: lanes, chunkSize: 40, games: .standard,
                               skippingDamaged: skipping ? { _ in } : nil) { finished.append($0) }
            return finished
        }
        func copy(_ name: String, _ change: String, _ arguments: StatementArguments = []) throws -> String {
            let target = folder.path(name)
            try FileManager.default.copyItem(atPath: path, toPath: target)
            try DatabaseQueue(path: target).write { try $0.execute(sql: change, arguments: arguments) }
            return target
        }
        // Compared field by field, and printed as counts: a state prints as pages.
        func same(_ a: [FullReplay.Finished], _ b: [FullReplay.Finished]) -> Bool {
            a.count == b.count && zip(a, b).allSatisfy {
                $0.state == $1.state && $0.events == $1.events && $0.streams == $1.streams && $0.devices == $1.devices
                    && $0.span.first == $1.span.first && $0.span.last == $1.span.last
            }
        }
        func byConversation(_ all: [FullReplay.Finished], without victim: ConversationID) -> [FullReplay.Finished] {
            all.filter { $0.state.conversation != victim }.sorted { $0.state.conversation.uuid.uuidString < $1.state.conversation.uuid.uuidString }
        }
        let uncatalogued = try copy("uncatalogued.sqlite", "UPDATE catalog_coverage SET through = 0")
        let expected = try pass(uncatalogued, lanes: 1)
        #expect(expected.count >= 10)
        for lanes in [1, 2, 3] {
            #expect(same(try pass(path, lanes: lanes), expected))
            #expect(same(try pass(uncatalogued, lanes: lanes), expected))
        }
        // The recording whose start is latest: its row is the one a forger would change.
        let (stream, start, conversation) = try DatabaseQueue(path: path).read { db in
            let row = try #require(try Row.fetchOne(db, sql: """
                SELECT s.uuid, c.position, c.key FROM catalog c JOIN streams s ON s.id = c.stream_id
                WHERE c.kind = 1 ORDER BY c.position DESC LIMIT 1
                """))
            return (row[0] as Data, row[1] as Int64, row[2] as Data)
        }
        #expect(start > 200)
        let other = try DatabaseQueue(path: path).read { db in
            try #require(try Data.fetchOne(db, sql: "SELECT key FROM catalog WHERE kind = 1 AND key <> ? LIMIT 1", arguments: [conversation]))
        }
        let row = "kind = 1 AND stream_id = (SELECT id FROM streams WHERE uuid = ?)"
        let forgeries: [(String, String, StatementArguments, Int64, String)] = [
            ("another-conversation.sqlite", "UPDATE catalog SET key = ? WHERE \(row)", [other, stream], start,
             "the recording's conversation is not the catalog's"),
            ("later.sqlite", "UPDATE catalog SET position = position + 1 WHERE \(row)", [stream], start,
             "the catalog places the start of this event's recording at position \(start + 1)"),
            ("earlier.sqlite", "UPDATE catalog SET position = position - 1 WHERE \(row)", [stream], start,
             "the catalog places the start of this event's recording at position \(start - 1)"),
            ("left-out.sqlite", "DELETE FROM catalog WHERE \(row)", [stream], start,
             "a recording starts here that the catalog does not name"),
        ]
        for (name, change, arguments, position, detail) in forgeries {
            let forged = try copy(name, change, arguments)
            #expect(try EventStore(path: forged, access: .readOnly).catalogIsComplete())
            for lanes in [1, 2] {
                #expect(throws: ReplayError.catalogContradictsEvents(position: position, detail: detail), "\(name), \(lanes) lanes") {
                    _ = try pass(forged, lanes: lanes)
                }
            }
        }
        // Skipping damage (a viewer's list), the contradicted recording is left out and the
        // pass goes on: every other conversation as before.
        let forged = folder.path("another-conversation.sqlite")
        let skipped = try pass(forged, lanes: 2, skipping: true)
        let victim = ConversationID(try #require(UUID(bytes: conversation)))
        // (The conversation the row names instead ends where the log does: its end was
        // taken from the catalog.)
        #expect(skipped.count == expected.count)
        let others = byConversation(expected, without: victim)
        #expect(others.count == expected.count - 1)
        #expect(same(byConversation(skipped, without: victim), others))
        // A recording named in two conversations: the catalog is not used, and the pass
        // reads every start first.
        let twice = try copy("twice.sqlite", """
            INSERT INTO catalog (kind, key, stream_id, position)
            SELECT 1, ?, stream_id, position FROM catalog WHERE \(row)
            """, [other, stream])
        for lanes in [1, 2] { #expect(same(try pass(twice, lanes: lanes), expected)) }
    }

    /// Boards change in place where a state holds them: a copy of a state taken at a step
    /// (a snapshot, a replayer's earlier step) keeps that step's boards while the fold goes on.
    @Test func aCopyOfAStateKeepsItsBoardsWhileTheFoldGoesOn() throws {
        let (_, store, catalog) = try recorded(4, seed: 53)
        var compared = 0
        for (conversation, streams) in catalog.streams {
            let events = try Replayer.load(from: store, streams: streams)
            var state = ConversationState(conversation: conversation, games: .standard)
            var copies: [(step: Int, state: ConversationState)] = []
            for (index, event) in events.enumerated() {
                state.apply(event)
                if index.isMultiple(of: 5) { copies.append((index + 1, state)) }
            }
            for (step, copy) in copies where !copy.games.isEmpty {
                #expect(copy == ConversationState.folding(conversation, events.prefix(step), games: .standard), "step \(step)")
                compared += 1
            }
        }
        #expect(compared >= 20)
    }

    @Test func jumpingThroughSnapshotsEqualsFoldingEveryStep() throws {
        let (_, store, catalog) = try recorded(16, seed: 23)
        var compared = 0
        for (conversation, streams) in catalog.streams {
            let replayer = try Replayer(store: store, conversation: conversation, streams: streams, snapshotInterval: 8, games: .standard)
            var folded = ConversationState(conversation: conversation, games: .standard)
            // Jump in a scrambled order so snapshots are built out of order too.
            var order = Array(0...replayer.stepCount)
            var generator = SeededGenerator(seed: 5)
            order.shuffle(using: &generator)
            var jumped: [Int: ConversationState] = [:]
            for step in order { jumped[step] = try replayer.state(at: step) }
            for step in 0...replayer.stepCount {
                if step > 0 { folded.apply(replayer.events[step - 1]) }
                #expect(jumped[step] == folded, "step \(step)")
                compared += 1
            }
        }
        // Hundreds of steps, across several snapshot intervals each.
        #expect(compared > 500)
    }

    @Test func theGuesserNeverSeesShipsItHasNotHit() throws {
        let (_, store, catalog) = try recorded(12, seed: 29)
        var checked = 0
        for (conversation, streams) in catalog.streams where catalog.kinds[conversation] == "battleship" {
            let replayer = try Replayer(store: store, conversation: conversation, streams: streams, games: .standard)
            for step in 0...replayer.stepCount {
                let state = try replayer.state(at: step)
                #expect(try replayer.state(at: step, as: .auditor) == state)
                for game in state.orderedGames {
                    guard let board = game.board.base as? BattleshipBoard,
                          let placer = state.orderedDevices.first(where: { $0.ownerName == board.placer })?.device else { continue }
                    let guesser: DeviceID = placer == "A" ? "B" : "A"
                    let seen = try replayer.state(at: step, as: .device(guesser))
                    let ships = (seen.games[game.session]?.board.base as? BattleshipBoard)?.ships ?? []
                    #expect(Set(ships).isSubset(of: Set(board.hits)))
                    #expect(seen.devices.keys.allSatisfy { $0 == guesser })
                    for line in seen.devices[guesser]?.transcript ?? [] where !line.bubble.isOutgoing {
                        if let url = line.bubble.message?.url { #expect(url.contains("Is_Complete=1")) }
                    }
                    let placerView = try replayer.state(at: step, as: .device(placer))
                    #expect((placerView.games[game.session]?.board.base as? BattleshipBoard)?.ships == board.ships)
                    checked += 1
                }
            }
        }
        #expect(checked > 100)
    }

    @Test func searchesByKindTimeAndMessage() throws {
        let (_, store, catalog) = try recorded(2, seed: 3)
        // A game's conversation (the other one may hold no message at all).
        let game = try #require(catalog.games.first)
        let conversation = try #require(catalog.streams.keys.first { $0.uuid.uuidString.lowercased() == game.conversation })
        let streams = try #require(catalog.streams[conversation])
        let replayer = try Replayer(store: store, conversation: conversation, streams: streams, games: .standard)
        let firstSend = try #require(replayer.nextStep(after: 0, kind: "transcript.sent"))
        #expect(replayer.event(at: firstSend)?.event.type == "transcript.sent")
        #expect(replayer.nextStep(after: 0, kind: "callback") == replayer.events.firstIndex { $0.event.type.hasPrefix("callback.") }.map { $0 + 1 })
        #expect(replayer.nextMessage(after: 0) == replayer.events.firstIndex { $0.event.type.hasPrefix("transcript.") }.map { $0 + 1 })
        let middle = replayer.events[replayer.stepCount / 2]
        #expect(replayer.step(atOrAfter: Timestamp(microsecondsSince1970: middle.recordedAt)) == replayer.stepCount / 2 + 1)
        #expect(replayer.previousStep(before: firstSend + 1, kind: "transcript.sent") == firstSend)
        #expect(throws: ReplayError.stepOutOfRange(replayer.stepCount + 1, count: replayer.stepCount)) {
            try replayer.state(at: replayer.stepCount + 1)
        }
        // A diff of a step with itself is empty; across a send it names the transcript.
        #expect(try replayer.diff(from: 5, to: 5).isEmpty)
        let changes = try replayer.diff(from: firstSend - 1, to: firstSend)
        #expect(changes.contains { $0.path.contains("transcript") })
        // Booleans read as true and false, as in the JSON.
        let activity = try (1...replayer.stepCount).flatMap { try replayer.diff(from: $0 - 1, to: $0) }
            .filter { $0.path.hasSuffix(".isActive") }
        #expect(!activity.isEmpty)
        let shown: Set<String?> = [nil, "true", "false"]
        for change in activity {
            #expect(shown.contains(change.before) && shown.contains(change.after), "\(change)")
        }
        // A new bubble is one added item, not the whole transcript before and after.
        #expect(!changes.contains { $0.path.hasSuffix(".transcript") })
        #expect(changes.contains {
            $0.path.range(of: #"\.transcript\[[0-9]+\]$"#, options: .regularExpression) != nil && $0.before == nil && $0.after != nil
        })
    }

    @Test func gamesAreFoundByIdPrefix() throws {
        let (_, store, catalog) = try recorded(4, seed: 41)
        let games = catalog.games
        let index = try GameIndex(store: store)
        #expect(games.count >= 4)
        let first = try #require(games.first)
        let resolved = try index.resolve(String(first.id.prefix(8)))
        #expect(resolved.game?.uuid.uuidString.lowercased() == first.id)
        #expect(throws: ReplayError.noSuchGame("zzzz")) { try index.resolve("zzzz") }
    }
}

/// A result handed from another thread, waited for once.
private final class OutcomeBox: @unchecked Sendable {
    private let done = DispatchSemaphore(value: 0)
    private var outcome: Result<Int, Error>?
    func set(_ result: Result<Int, Error>) {
        outcome = result
        done.signal()
    }
    func wait() -> Result<Int, Error> {
        done.wait()
        return outcome!
    }
}
